"""What a modern server may ask for in an input round, and what a client answers (2026-07-28).

These unions span sampling, roots and elicitation, so they live apart from
:mod:`._mrtr`: reading an ordinary result (which may be an ``InputRequiredResult``)
does not load those three modules (start-up time).
"""

from __future__ import annotations

from typing import TypeAlias

from ._elicitation import ElicitRequest, ElicitResult
from ._roots import ListRootsRequest, ListRootsResult
from ._sampling import CreateMessageRequest, CreateMessageResult

#: What a server may ask for in ``inputRequests`` (dispatched on ``method``).
InputRequest: TypeAlias = CreateMessageRequest | ListRootsRequest | ElicitRequest
#: What a client answers for each ``inputRequests`` entry.
InputResponse: TypeAlias = CreateMessageResult | ListRootsResult | ElicitResult
InputRequests: TypeAlias = dict[str, InputRequest]
