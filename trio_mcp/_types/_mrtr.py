"""Multi round-trip requests (2026-07-28): a server answers "I need more input"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, TypeAlias

import attrs

from ._base import InputResponses, RequestParams, Result
from ._elicitation import ElicitRequest, ElicitResult
from ._roots import ListRootsRequest, ListRootsResult
from ._sampling import CreateMessageRequest, CreateMessageResult

#: What a server may ask for in ``inputRequests`` (dispatched on ``method``).
InputRequest: TypeAlias = CreateMessageRequest | ListRootsRequest | ElicitRequest
#: What a client answers for each ``inputRequests`` entry.
InputResponse: TypeAlias = CreateMessageResult | ListRootsResult | ElicitResult
InputRequests: TypeAlias = dict[str, InputRequest]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InputRequiredResult(Result):
    """An interim result: the client should gather ``input_requests`` and retry the request
    with the answers and ``request_state`` unchanged."""

    result_type: str = "input_required"
    input_requests: dict[str, InputRequest] | None = None
    request_state: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InputResponseRequestParams(RequestParams):
    """The MRTR fields a retried request carries."""

    input_responses: InputResponses | None = None
    request_state: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "input_responses": "2026-07-28",
        "request_state": "2026-07-28",
    }
