"""Completion of prompt arguments and resource-template variables."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, get_type_hints

import attrs

from .._types._completion import Completion
from ._context import Context

__all__ = ["MAX_VALUES", "Completer", "to_completion"]

#: The spec allows at most 100 values per answer.
MAX_VALUES = 100

#: ``completer(value, context)``: ``value`` is what the user typed so far,
#: ``context`` the arguments already resolved. Returns candidates or a Completion.
#: A parameter annotated :class:`~trio_mcp.Context` receives the request's
#: context (by keyword), as in tools and prompts.
Completer = Callable[..., Awaitable[Sequence[str] | Completion] | Sequence[str] | Completion]


@attrs.define(eq=False)
class CompleterSpec:
    fn: Completer
    #: The name of the parameter that receives the :class:`Context`, if any.
    context_parameter: str | None = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.context_parameter = _context_parameter(self.fn)

    async def complete(
        self, value: str, context: Mapping[str, str], ctx: Context | None = None
    ) -> Completion:
        """The completion for ``value``. Blocks while an async completer runs."""
        if self.context_parameter is not None and ctx is not None:
            result = self.fn(value, context, **{self.context_parameter: ctx})
        else:
            result = self.fn(value, context)
        if inspect.isawaitable(result):
            result = await result
        return to_completion(result)


def _context_parameter(fn: Callable[..., Any]) -> str | None:
    """The parameter of ``fn`` annotated :class:`Context` (``None``: it takes none).

    Raises:
        TypeError: it is the first or second parameter (those receive the value and the
            context arguments), or it cannot be passed by keyword.
    """
    try:
        hints = get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable hints: it asks for no Context
        return None
    parameters = list(inspect.signature(fn).parameters.values())
    for index, param in enumerate(parameters):
        hint = hints.get(param.name)
        if isinstance(hint, type) and issubclass(hint, Context):
            if index < 2 or param.kind not in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                inspect.Parameter.KEYWORD_ONLY,
            ):
                raise TypeError(
                    f"completer {getattr(fn, '__name__', fn)!r}: the Context parameter "
                    f"{param.name!r} must come after (value, context) and be nameable"
                )
            return param.name
    return None


def to_completion(result: Any) -> Completion:
    """At most :data:`MAX_VALUES` values, with ``total`` and ``has_more`` set when cut."""
    if isinstance(result, Completion):
        if len(result.values) <= MAX_VALUES:
            return result
        values = list(result.values)
        return Completion(
            values=values[:MAX_VALUES], total=result.total or len(values), has_more=True
        )
    values = [str(v) for v in result]
    if len(values) > MAX_VALUES:
        return Completion(values=values[:MAX_VALUES], total=len(values), has_more=True)
    return Completion(values=values, total=len(values), has_more=False)
