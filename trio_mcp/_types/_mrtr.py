"""Multi round-trip requests (2026-07-28): a server answers "I need more input".

The unions of what may be asked and answered are in :mod:`._inputs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import attrs

from ._base import InputResponses, RequestParams, Result

if TYPE_CHECKING:
    # Only named in annotations, which the converter reads when it first needs this model:
    # importing them here would load sampling, roots and elicitation with every result
    # reader (start-up time).
    from ._inputs import InputRequest


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
