"""What a client answers when a server asks (sampling, roots, elicitation): the handlers an
application gives, the capabilities they declare, and refusing what was not declared.

The same handlers serve both eras: legacy servers send requests, modern servers put the
questions in an ``InputRequiredResult`` and the client retries with the answers.

The sampling, roots and elicitation models are only named in annotations here (the
handler types are in :mod:`._handlers`), and the roots result loads when first built
(:mod:`._lazy`): every client makes an :class:`Answering`, and most are never asked
anything (start-up time).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import ErrorCode, McpError
from .._jsonschema import SchemaValidator
from .._types._capabilities import (
    ClientCapabilities,
    ElicitationCapability,
    RootsCapability,
    SamplingCapability,
)
from . import _lazy

if TYPE_CHECKING:
    from .._types._elicitation import ElicitResult
    from ._handlers import ElicitationHandler, RootsHandler, SamplingHandler

__all__ = ["ASKS", "Answering", "check_form_answer"]

log = logging.getLogger("trio_mcp.client")

#: What a server may ask of a client.
ASKS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})


@attrs.frozen
class Answering:
    """The application's handlers (each ``None`` when it has none)."""

    sampling: SamplingHandler | None = None
    roots: RootsHandler | None = None
    elicitation: ElicitationHandler | None = None

    def capabilities(
        self,
        *,
        sampling_tools: bool = False,
        elicitation_modes: Sequence[str] = ("form",),
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> ClientCapabilities:
        """The capabilities these handlers declare, with ``extensions``.

        Raises:
            ValueError: an extension identifier that is not ``vendor/name``.
            TypeError: an extension's settings are not a mapping.
        """
        return ClientCapabilities(
            extensions=_checked_extensions(extensions),
            sampling=(
                SamplingCapability(tools={} if sampling_tools else None)
                if self.sampling is not None
                else None
            ),
            roots=RootsCapability(list_changed=True) if self.roots is not None else None,
            elicitation=(
                ElicitationCapability(
                    form={} if "form" in elicitation_modes else None,
                    url={} if "url" in elicitation_modes else None,
                )
                if self.elicitation is not None
                else None
            ),
        )

    def undeclared(self, method: str, params: Any, declared: ClientCapabilities) -> str | None:
        """What a server's question needs that ``declared`` lacks (``None``: we answer it)."""
        if method == "elicitation/create":
            elicitation = declared.elicitation
            if self.elicitation is None or elicitation is None:
                return "elicitation"
            if params.mode == "url":  # ElicitRequestURLParams
                return "URL-mode elicitation" if elicitation.url is None else None
            form_only_url = elicitation.form is None and elicitation.url is not None
            return "form-mode elicitation" if form_only_url else None
        if method == "sampling/createMessage":
            sampling = declared.sampling
            if self.sampling is None or sampling is None:
                return "sampling"
            if (params.tools or params.tool_choice) and sampling.tools is None:
                return "sampling with tools"
            return None
        if method == "roots/list":
            return "roots" if self.roots is None or declared.roots is None else None
        return method

    async def answer(self, method: str, params: Any) -> Any:
        """The application's answer to a question (check :meth:`undeclared` first).

        Blocks while the handler runs (a user filling in a form, a model sampling).

        Raises:
            McpError: -32601 for a question we have no handler for; whatever the
                handler raises.
        """
        if method == "sampling/createMessage" and self.sampling is not None:
            return await self.sampling(params)
        if method == "roots/list" and self.roots is not None:
            return _lazy.ListRootsResult(roots=list(await self.roots()))
        if method == "elicitation/create" and self.elicitation is not None:
            result = await self.elicitation(params)
            if params.mode != "url":  # ElicitRequestFormParams
                check_form_answer(params.requested_schema, result)
            return result
        raise McpError(f"Method not found: {method}", code=ErrorCode.METHOD_NOT_FOUND)


def check_form_answer(schema: dict[str, Any], result: ElicitResult) -> None:
    """Check an accepted form-mode answer against the schema that asked for it, before it
    is sent (the spec says clients SHOULD). Skipped when ``jsonschema`` is not installed,
    or when the server's schema is not one it can read.

    Raises:
        McpError: -32603, saying how the elicitation handler's ``content`` breaks the
            schema. In the initialize era it answers the server's request; in the
            2026-07-28 era the call that was answering its input round raises it.
    """
    if result.action != "accept":
        return
    try:
        problems = SchemaValidator(schema).errors(result.content or {})
    except (RuntimeError, ValueError):  # no jsonschema, or a schema it cannot read
        return
    if problems:
        log.warning("the elicitation handler's answer breaks the requested schema: %s", problems)
        raise McpError(
            "the elicitation handler's answer does not match the requested schema: "
            + "; ".join(problems),
            code=ErrorCode.INTERNAL_ERROR,
        )


def _checked_extensions(
    extensions: Mapping[str, Mapping[str, Any]] | None,
) -> dict[str, dict[str, Any]] | None:
    if not extensions:
        return None
    checked: dict[str, dict[str, Any]] = {}
    for identifier, settings in extensions.items():
        prefix, slash, name = (
            identifier.partition("/") if isinstance(identifier, str) else ("", "", "")
        )
        if not (prefix and slash and name):
            raise ValueError(f"extension identifier {identifier!r} is not 'vendor-prefix/name'")
        if not isinstance(settings, Mapping):
            raise TypeError(f"extension {identifier!r}: its settings must be an object")
        checked[identifier] = dict(settings)
    return checked
