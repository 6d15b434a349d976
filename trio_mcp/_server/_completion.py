"""Completion of prompt arguments and resource-template variables."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from .._types._completion import Completion

__all__ = ["MAX_VALUES", "Completer", "to_completion"]

#: The spec allows at most 100 values per answer.
MAX_VALUES = 100

#: ``completer(value, context)``: ``value`` is what the user typed so far,
#: ``context`` the arguments already resolved. Returns candidates or a Completion.
Completer = Callable[
    [str, Mapping[str, str]], Awaitable[Sequence[str] | Completion] | Sequence[str] | Completion
]


@attrs.define(eq=False)
class CompleterSpec:
    fn: Completer

    async def complete(self, value: str, context: Mapping[str, str]) -> Completion:
        result = self.fn(value, context)
        if inspect.isawaitable(result):
            result = await result
        return to_completion(result)


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
