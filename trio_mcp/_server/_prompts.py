"""Prompts: templates of messages, with string arguments."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypedDict, Unpack

import attrs
import trio

from .._errors import ErrorCode, McpError
from .._types._base import Icon
from .._types._content import TextContent
from .._types._prompts import GetPromptResult, Prompt, PromptArgument, PromptMessage
from ._context import Context, InputRequired
from ._results import CONTENT_TYPES
from ._signature import Signature, docstring_summary
from ._typeschema import ValueInvalid

__all__ = ["PromptOptions", "PromptSpec"]


class PromptOptions(TypedDict, total=False):
    """What a prompt says about itself (its name is the function's, its description the
    docstring's first paragraph, unless given): the options of ``@server.prompt(...)``
    besides ``scopes``."""

    name: str | None
    title: str | None
    description: str | None
    icons: Sequence[Icon] | None
    meta: Mapping[str, Any] | None


@attrs.define(eq=False)
class PromptSpec:
    prompt: Prompt
    fn: Callable[..., Awaitable[Any] | Any]
    signature: Signature
    #: The OAuth scopes a caller's token needs to get it (HTTP with ``auth=``).
    scopes: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.prompt.name

    @classmethod
    def from_function(
        cls, fn: Callable[..., object], **options: Unpack[PromptOptions]
    ) -> PromptSpec:
        """Build a prompt from a function whose parameters are its arguments.

        Prompt arguments are strings on the wire, so parameters must be ``str``
        (``str | None`` for optional ones, or any with a default).

        Raises:
            TypeError: a parameter that is not a string.
        """
        signature = Signature.of(fn, context_type=Context)
        arguments = []
        for param in signature.parameters:
            schema = param.schema
            if schema.get("type") not in ("string", ["string", "null"]):
                raise TypeError(
                    f"prompt {fn.__name__!r}: argument {param.name!r} must be a str "
                    "(prompt arguments are strings on the wire)"
                )
            arguments.append(
                PromptArgument(
                    name=param.name,
                    description=schema.get("description"),
                    required=param.required,
                )
            )
        description = options.get("description")
        icons = options.get("icons")
        meta = options.get("meta")
        prompt = Prompt(
            name=options.get("name") or fn.__name__,
            title=options.get("title"),
            description=description if description is not None else docstring_summary(fn),
            arguments=arguments or None,
            icons=list(icons) if icons is not None else None,
            meta=dict(meta) if meta is not None else None,
        )
        return cls(prompt, fn, signature)

    async def get(self, arguments: Mapping[str, str] | None, context: Context) -> GetPromptResult:
        """Render the prompt.

        Raises:
            McpError: -32602 for a missing required argument, -32603 if the function fails.
        """
        arguments = dict(arguments or {})
        missing = [
            p.name for p in self.signature.parameters if p.required and p.name not in arguments
        ]
        if missing:
            await trio.lowlevel.checkpoint()
            raise McpError(
                f"Invalid params: prompt {self.name!r} needs {', '.join(missing)}",
                code=ErrorCode.INVALID_PARAMS,
            )
        try:
            kwargs = self.signature.bind(arguments)
        except ValueInvalid as exc:
            await trio.lowlevel.checkpoint()
            raise McpError(
                f"Invalid params: prompt {self.name!r}: {exc}", code=ErrorCode.INVALID_PARAMS
            ) from None
        if self.signature.context_parameter:
            kwargs[self.signature.context_parameter] = context
        try:
            value = self.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
        except (McpError, InputRequired):
            raise
        except Exception as exc:
            raise McpError(
                f"prompt {self.name!r} failed: {exc or type(exc).__name__}",
                code=ErrorCode.INTERNAL_ERROR,
            ) from exc
        return to_prompt_result(value, self.prompt.description)


def to_prompt_result(value: Any, description: str | None) -> GetPromptResult:
    if isinstance(value, GetPromptResult):
        return value
    items = value if isinstance(value, (list, tuple)) else [value]
    messages = []
    for item in items:
        if isinstance(item, PromptMessage):
            messages.append(item)
        elif isinstance(item, str):
            messages.append(PromptMessage(role="user", content=TextContent(text=item)))
        elif isinstance(item, CONTENT_TYPES):
            messages.append(PromptMessage(role="user", content=item))
        else:
            raise McpError(
                f"a prompt returned {type(item).__name__}; expected str, PromptMessage or content",
                code=ErrorCode.INTERNAL_ERROR,
            )
    return GetPromptResult(messages=messages, description=description)
