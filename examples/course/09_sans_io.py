"""Chapter 9: sans-IO. ``trio_mcp.protocol.Connection`` is the protocol without I/O and
without Trio: feed it the messages that arrive, ask it for the messages to send, and it
says what happened. Here two connections talk through a list; then a Hypothesis state
machine delivers their messages in any order and checks both sides after every step.

Run it: ``python examples/course/09_sans_io.py`` (see docs/course/09-sans-io.md)
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from trio_mcp import jsonrpc as rpc
from trio_mcp.protocol import Connection, Dispatch, Reply, ResponseReceived
from trio_mcp.types import Implementation, ServerCapabilities, ToolsCapability


def wire(message: rpc.Message) -> Any:
    """What the other side reads: the message as bytes, parsed again."""
    return rpc.parse(rpc.dumps(message))


def pair() -> tuple[Connection, Connection]:
    client = Connection("client", info=Implementation(name="c", version="1"))
    server = Connection(
        "server",
        info=Implementation(name="s", version="1"),
        capabilities=ServerCapabilities(tools=ToolsCapability()),
    )
    return client, server


def handshake(client: Connection, server: Connection) -> None:
    _, request = client.initialize_request()
    reply = server.receive(wire(request))
    assert isinstance(reply, Reply)  # the core answers initialize itself
    answer = client.receive(wire(reply.message))
    assert isinstance(answer, ResponseReceived)
    _, initialized = client.complete_initialize(answer.response)
    server.receive(wire(initialized))


def by_hand() -> None:
    client, server = pair()
    print("phases:", client.phase.value, server.phase.value)
    handshake(client, server)
    print("after the handshake:", client.phase.value, server.phase.value, client.version)
    pending, request = client.send_request("tools/list")
    event = server.receive(wire(request))
    assert isinstance(event, Dispatch)  # "run the application's handler for this"
    print("the server sees:", type(event).__name__, event.request.method)
    answer = server.respond(event.request, {"tools": []})
    assert answer is not None
    response = client.receive(wire(answer))
    assert isinstance(response, ResponseReceived)
    print("the client sees:", type(response).__name__, response.request is pending)


class Conversation(RuleBasedStateMachine):
    """Pings both ways, delivered in any order; every one is answered exactly once."""

    def __init__(self) -> None:
        super().__init__()
        self.client, self.server = pair()
        handshake(self.client, self.server)
        self.sides = {"client": self.client, "server": self.server}
        self.inbox: dict[str, list[Any]] = {"client": [], "server": []}
        self.waiting = {"client": 0, "server": 0}  # the model: pings each side awaits

    @rule(sender=st.sampled_from(["client", "server"]))
    def ping(self, sender: str) -> None:
        _, request = self.sides[sender].send_request("ping")
        self.inbox[self.peer(sender)].append(wire(request))
        self.waiting[sender] += 1

    @rule(side=st.sampled_from(["client", "server"]), data=st.data())
    def deliver(self, side: str, data: st.DataObject) -> None:
        if not self.inbox[side]:
            return
        message = self.inbox[side].pop(data.draw(st.integers(0, len(self.inbox[side]) - 1)))
        event = self.sides[side].receive(message)
        if isinstance(event, Reply):  # the core answered the ping itself
            self.inbox[self.peer(side)].append(wire(event.message))
        else:  # the answer to one of our pings
            assert isinstance(event, ResponseReceived), event
            self.waiting[side] -= 1

    @invariant()
    def both_sides_agree_with_the_model(self) -> None:
        assert self.client.outstanding == self.waiting["client"]
        assert self.server.outstanding == self.waiting["server"]

    @staticmethod
    def peer(side: str) -> str:
        return "server" if side == "client" else "client"


if __name__ == "__main__":
    by_hand()
    run_state_machine_as_test(
        Conversation, settings=settings(max_examples=50, derandomize=True, database=None)
    )
    print("state machine: 50 conversations, every invariant held")
