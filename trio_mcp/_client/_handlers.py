"""The types of the handlers that answer what servers ask (sampling, roots, elicitation).

Kept apart from :mod:`._answering`, which applies them: these aliases need the
sampling, roots and elicitation models at import, and a client that answers none of
them should not load those (start-up time).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

from .._types._elicitation import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from .._types._roots import Root
from .._types._sampling import CreateMessageRequestParams, CreateMessageResult

__all__ = [
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "RootsHandler",
    "SamplingHandler",
]

#: Answers ``sampling/createMessage``.
SamplingHandler: TypeAlias = Callable[[CreateMessageRequestParams], Awaitable[CreateMessageResult]]
#: Answers ``roots/list``.
RootsHandler: TypeAlias = Callable[[], Awaitable[Sequence[Root]]]
#: Answers ``elicitation/create`` (form or URL mode). An accepted form answer is checked
#: against the ``requestedSchema`` before it is sent (see
#: :func:`~trio_mcp._client._answering.check_form_answer`).
ElicitationHandler: TypeAlias = Callable[
    [ElicitRequestFormParams | ElicitRequestURLParams], Awaitable[ElicitResult]
]

#: Hears that a URL-mode elicitation ended: receives its ``elicitationId`` (2025-11-25).
ElicitationCompleteHandler: TypeAlias = Callable[[str], Awaitable[None] | None]
