"""Chapter 9, exercise: cancellation in the state machine. The client may give up on any
request it awaits; its ``notifications/cancelled`` and the server's answer may cross on the
wire in either order. Whatever the order: a cancelled request is never answered by the
server once it knows, and never accepted by the client.

Run it: ``python examples/course/solutions/09_sans_io.py``
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from trio_mcp import jsonrpc as rpc
from trio_mcp.protocol import (
    CancelRequested,
    Connection,
    Dispatch,
    Dropped,
    InboundRequest,
    OutboundRequest,
    Reply,
    ResponseReceived,
)
from trio_mcp.types import Implementation, ServerCapabilities, ToolsCapability


def wire(message: rpc.Message) -> Any:
    return rpc.parse(rpc.dumps(message))


class Cancelling(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.client = Connection("client", info=Implementation(name="c", version="1"))
        self.server = Connection(
            "server",
            info=Implementation(name="s", version="1"),
            capabilities=ServerCapabilities(tools=ToolsCapability()),
        )
        _, request = self.client.initialize_request()
        reply = self.server.receive(wire(request))
        assert isinstance(reply, Reply)
        answer = self.client.receive(wire(reply.message))
        assert isinstance(answer, ResponseReceived)
        _, initialized = self.client.complete_initialize(answer.response)
        self.server.receive(wire(initialized))
        self.to_client: list[Any] = []
        self.to_server: list[Any] = []
        self.waiting: dict[Any, OutboundRequest] = {}  # the model: what the client awaits
        self.cancelled: set[Any] = set()  # ids the client gave up on
        self.handling: list[InboundRequest] = []  # what the server is working on

    @rule()
    def call(self) -> None:
        pending, request = self.client.send_request("tools/list")
        self.waiting[pending.id] = pending
        self.to_server.append(wire(request))

    @rule(data=st.data())
    def give_up(self, data: st.DataObject) -> None:
        if not self.waiting:
            return
        pending = self.waiting.pop(data.draw(st.sampled_from(sorted(self.waiting))))
        self.cancelled.add(pending.id)
        notification = self.client.cancel(pending, "no longer needed")
        assert notification is not None
        self.to_server.append(wire(notification))

    @rule(data=st.data())
    def server_answers(self, data: st.DataObject) -> None:
        if not self.handling:
            return
        request = self.handling.pop(data.draw(st.integers(0, len(self.handling) - 1)))
        answer = self.server.respond(request, {"tools": []})
        assert (answer is None) == request.cancelled  # known to be cancelled: no answer
        if answer is not None:
            self.to_client.append(wire(answer))

    @rule(data=st.data())
    def deliver_to_server(self, data: st.DataObject) -> None:
        if not self.to_server:
            return
        event = self.server.receive(self.to_server.pop(0))  # one wire: in order
        if isinstance(event, Dispatch):
            self.handling.append(event.request)
        elif isinstance(event, CancelRequested):
            assert event.request.id in self.cancelled
        else:  # the answer went out before the cancellation came
            assert isinstance(event, Dropped), event

    @rule()
    def deliver_to_client(self) -> None:
        if not self.to_client:
            return
        event = self.client.receive(self.to_client.pop(0))
        if isinstance(event, ResponseReceived):
            assert self.waiting.pop(event.request.id) is event.request
        else:  # a late answer to a request the client gave up on
            assert isinstance(event, Dropped), event

    @invariant()
    def the_client_awaits_what_the_model_says(self) -> None:
        assert self.client.outstanding == len(self.waiting)


if __name__ == "__main__":
    run_state_machine_as_test(
        Cancelling, settings=settings(max_examples=100, derandomize=True, database=None)
    )
    print("state machine: 100 conversations with cancellations, every invariant held")
