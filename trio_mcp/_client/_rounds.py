"""A client's requests and their input rounds (MRTR, 2026-07-28).

A modern server that needs something from the client (a form, a sample, the roots) to
answer ``tools/call``, ``prompts/get`` or ``resources/read`` answers ``input_required``
instead; the client asks its own handlers and sends the request again, with the answers and
the server's ``requestState``, under a new id. :class:`InputRounds` sends a client's
requests, checks what kind of answer came, and runs those rounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from .._errors import ErrorCode, McpError, ProtocolError, URLElicitationRequired
from .._session._engine import Session
from .._session._outbound import ProgressCallback
from .._types._converter import converter_for
from .._types._methods import MRTR_METHODS
from .._types._mrtr import InputRequiredResult
from ._inbound import Inbound

__all__ = ["InputRounds"]

T = TypeVar("T")


class InputRounds:
    """Sends a client's requests over ``session`` and answers the server's input requests
    with ``inbound``'s handlers, for at most ``max_rounds`` rounds a call."""

    def __init__(self, session: Session, inbound: Inbound, max_rounds: int) -> None:
        self.session = session
        self.inbound = inbound
        self.max_rounds = max_rounds

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None,
        model: type[T],
        *,
        on_progress: ProgressCallback | None = None,
    ) -> T | InputRequiredResult:
        """Send one request and return its answer: a result, or (for the methods that may
        take input) an :class:`~trio_mcp.types.InputRequiredResult`. Blocks until the answer;
        cancelling tells the server to cancel.

        Raises:
            URLElicitationRequired: (2025-11-25) the user must first complete the
                out-of-band interactions it lists (whose end we then expect).
            ProtocolError: an answer of a kind ``method`` cannot have.
            McpError: the server's error, or the session's.
        """
        try:
            result: T | InputRequiredResult = await self.session.send_request(
                method, params, on_progress=on_progress, model=model
            )
        except URLElicitationRequired as needed:
            for elicitation in needed.elicitations:
                assert elicitation.elicitation_id is not None
                self.inbound.remember_url_elicitation(elicitation.elicitation_id)
            raise
        result_type = getattr(result, "result_type", "complete")
        if isinstance(result, InputRequiredResult):
            if method not in MRTR_METHODS:
                raise ProtocolError(
                    f"the server answered {method} with input_required, which only "
                    + ", ".join(sorted(MRTR_METHODS))
                    + " may"
                )
            if not result.input_requests and result.request_state is None:
                raise ProtocolError(
                    f"the server's input_required answer to {method} has neither "
                    "inputRequests nor requestState"
                )
        elif result_type != "complete":
            raise ProtocolError(f"unknown resultType {result_type!r} in the answer to {method}")
        return result

    async def send_complete(self, method: str, params: dict[str, Any] | None, model: type[T]) -> T:
        """:meth:`send` for a method that is answered in one round (not one of
        ``MRTR_METHODS``): its result, typed.

        Raises:
            ProtocolError: the server answered with ``input_required`` all the same.
        """
        result = await self.send(method, params, model)
        if isinstance(result, InputRequiredResult):  # send refuses it for these methods
            raise ProtocolError(f"the server answered {method} with input_required")
        return result

    async def send_with_inputs(
        self,
        method: str,
        params: dict[str, Any],
        model: type[T],
        on_progress: ProgressCallback | None = None,
    ) -> tuple[T, int]:
        """Send a request and run its input rounds (see :meth:`finish`). Returns the final
        result and how many retries it took."""
        result = await self.send(method, params, model, on_progress=on_progress)
        if not isinstance(result, InputRequiredResult):
            return result, 0
        return await self.finish(method, params, model, on_progress, result)

    async def finish(
        self,
        method: str,
        params: dict[str, Any],
        model: type[T],
        on_progress: ProgressCallback | None,
        result: Any,
    ) -> tuple[T, int]:
        """The rest of :meth:`send_with_inputs`, once an answer was ``input_required``:
        answer each round with our handlers and retry (a new request id, the same
        ``requestState``). Blocks while the handlers run and for each retry.

        Raises:
            McpError: -32603 when the server still wants input after ``max_rounds``.
            ProtocolError: the server asked for something this client did not declare.
        """
        retries = 0
        while True:
            if not isinstance(result, InputRequiredResult):
                return result, retries
            if retries == self.max_rounds:
                # Checked before asking anyone: answers that would never be sent are not
                # worth a user's time.
                raise McpError(
                    f"{method}: the server still wanted input after {self.max_rounds} rounds",
                    code=ErrorCode.INTERNAL_ERROR,
                )
            retries += 1
            responses = await self.answer(result.input_requests or {}, asker="the server")
            current = dict(params)
            if responses:
                current["inputResponses"] = responses
            if result.request_state is not None:
                current["requestState"] = result.request_state
            result = await self.send(method, current, model, on_progress=on_progress)

    async def answer(self, requests: Mapping[str, Any], *, asker: str) -> dict[str, Any]:
        """The application's answers to ``requests`` (input requests by key), written for the
        wire. Blocks while the handlers run, one after another.

        Raises:
            ProtocolError: ``asker`` asked for something this client did not declare.
        """
        assert self.session.connection.version is not None
        conv = converter_for(self.session.connection.version)
        responses = {}
        for key, request in requests.items():
            refused = self.inbound.undeclared(request.method, request.params)
            if refused is not None:
                raise ProtocolError(
                    f"{asker} asked for {refused} ({key!r}), which this client did not declare"
                )
            answer = await self.inbound.answering.answer(request.method, request.params)
            responses[key] = conv.unstructure(answer)
        return responses
