"""Forwarding an HTTP exchange to the worker holding its session, over inboxes kept in
memory (the real ones, on Redis, are exercised by tests/test_fleet_sessions.py): what the
owner sends reaches the client in order (a JSON answer as one message), the client leaving
reaches the owner, and an owner that is gone, dies mid-stream or fails never leaves the
client waiting."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from trio_mcp._fleet._forward import LIVENESS_CHECK, SEND, Forwarder
from trio_mcp._http.server._asgi import FORWARDED_PRINCIPAL
from trio_mcp._http.server._exchange import HttpRequest

Handler = Callable[[bytes], Awaitable[None]]


class MemoryInbox:
    """An inbox of a worker in a fleet kept in memory: one reader task per worker
    dispatches what others sent, in order."""

    def __init__(self, fleet: dict[str, MemoryInbox], worker_id: str) -> None:
        self.fleet = fleet
        self.worker_id = worker_id
        self.alive_flag = True
        self.handlers: dict[str, Handler] = {}
        self.sent: list[str] = []  # the kinds this worker sent
        self._send, self._receive = trio.open_memory_channel[tuple[str, bytes]](1000)
        fleet[worker_id] = self

    def on(self, kind: str, handler: Handler) -> None:
        self.handlers[kind] = handler

    async def send(self, worker_id: str, kind: str, payload: bytes) -> bool:
        await trio.lowlevel.checkpoint()
        target = self.fleet[worker_id]
        if not target.alive_flag:
            return False
        self.sent.append(kind)
        target._send.send_nowait((kind, payload))
        return True

    async def alive(self, worker_id: str) -> bool:
        await trio.lowlevel.checkpoint()
        return self.fleet[worker_id].alive_flag

    async def run(self) -> None:
        async for kind, payload in self._receive:
            if self.alive_flag:
                await self.handlers[kind](payload)


class Client:
    """The client of the worker a request landed on: what it got, and its leaving."""

    def __init__(
        self, method: str = "POST", body: bytes = b"{}", leave_after: int | None = None
    ) -> None:
        self.leave_after = leave_after
        self.messages: list[MutableMapping[str, Any]] = []
        self.left = trio.Event()
        self.body = body
        self.read = False
        scope = {
            "type": "http",
            "method": method,
            "path": "/mcp",
            "root_path": "",
            "headers": [(b"mcp-session-id", b"s1"), (b"Authorization", b"Bearer secret")],
            "client": ("127.0.0.1", 5000),
        }
        self.http = HttpRequest(scope, self.receive, self.send)

    async def receive(self) -> MutableMapping[str, Any]:
        if not self.read:
            self.read = True
            await trio.lowlevel.checkpoint()
            return {"type": "http.request", "body": self.body}
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        self.messages.append(message)
        if self.leave_after is not None and len(self.bodies) >= self.leave_after:
            self.left.set()

    @property
    def status(self) -> int | None:
        starts = [m for m in self.messages if m["type"] == "http.response.start"]
        return starts[0]["status"] if starts else None

    @property
    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.messages if m["type"] == "http.response.body"]

    @property
    def complete(self) -> bool:
        last = self.messages[-1] if self.messages else {}
        return last.get("type") == "http.response.body" and not last.get("more_body")


Serve = Callable[[HttpRequest], Awaitable[None]]


@asynccontextmanager
async def fleet(serve: Serve) -> AsyncIterator[tuple[Forwarder, MemoryInbox]]:
    """Worker B (whose forwarder is yielded) and worker A (serving with ``serve``)."""
    inboxes: dict[str, MemoryInbox] = {}
    a, b = MemoryInbox(inboxes, "a"), MemoryInbox(inboxes, "b")
    async with trio.open_nursery() as nursery:
        Forwarder(a, serve, nursery)
        on_b = Forwarder(b, serve, nursery)
        nursery.start_soon(a.run)
        nursery.start_soon(b.run)
        yield on_b, a
        nursery.cancel_scope.cancel()


async def test_a_json_answer_comes_back_whole_in_one_message(autojump_clock: Any) -> None:
    seen: list[tuple[str, bytes, str | None]] = []

    async def serve(http: HttpRequest) -> None:
        body = await http.read_body(1000)
        seen.append((http.method, body, http.scope[FORWARDED_PRINCIPAL]))
        assert "authorization" not in http.headers  # no credentials rest in Redis
        assert http.headers["mcp-session-id"] == "s1"
        await http.respond(200, b'{"answer": 1}', headers=[(b"mcp-session-id", b"s1")])

    async with fleet(serve) as (b, a):
        client = Client(body=b'{"question": 1}')
        assert await b.forward(client.http, b'{"question": 1}', "a", "alice")
    assert seen == [("POST", b'{"question": 1}', "alice")]
    assert client.status == 200 and client.bodies == [b'{"answer": 1}'] and client.complete
    assert a.sent == [SEND]  # start and body in one message


async def test_a_stream_comes_back_event_by_event_and_the_client_leaving_reaches_the_owner(
    autojump_clock: Any,
) -> None:
    disconnected = trio.Event()
    client = Client(method="GET", leave_after=3)

    async def serve(http: HttpRequest) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await http.send({"type": "http.response.start", "status": 200, "headers": headers})
        for n in range(3):
            await http.send({"type": "http.response.body", "body": b"%d" % n, "more_body": True})
        await http.wait_disconnect()  # the client leaves B once it read them
        disconnected.set()

    async with fleet(serve) as (b, _):
        assert await b.forward(client.http, b"", "a", None)
        with trio.fail_after(10):
            await disconnected.wait()
    assert client.status == 200
    assert client.bodies[:3] == [b"0", b"1", b"2"]


async def test_an_owner_that_is_gone_is_not_sent_anything(autojump_clock: Any) -> None:
    async def serve(http: HttpRequest) -> None:
        raise AssertionError("not reached")

    async with fleet(serve) as (b, a):
        a.alive_flag = False
        client = Client()
        assert not await b.forward(client.http, b"{}", "a", None)
    assert client.messages == []


async def test_an_owner_dying_mid_stream_ends_the_stream(autojump_clock: Any) -> None:
    async def serve(http: HttpRequest) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await http.send({"type": "http.response.start", "status": 200, "headers": headers})
        await http.send({"type": "http.response.body", "body": b"first", "more_body": True})
        owner.alive_flag = False  # SIGKILL: nothing more comes, nothing says so
        await trio.sleep_forever()

    async with fleet(serve) as (b, owner):
        client = Client()
        start = trio.current_time()
        assert await b.forward(client.http, b"{}", "a", None)
        assert trio.current_time() - start <= 2 * LIVENESS_CHECK
    assert client.status == 200 and client.bodies == [b"first", b""] and client.complete


@pytest.mark.parametrize("after_start", [False, True])
async def test_an_owner_failing_does_not_leave_the_client_waiting(
    autojump_clock: Any, after_start: bool
) -> None:
    async def serve(http: HttpRequest) -> None:
        if after_start:
            headers = [(b"content-type", b"text/event-stream")]
            await http.send({"type": "http.response.start", "status": 200, "headers": headers})
        raise RuntimeError("a bug")

    async with fleet(serve) as (b, _):
        client = Client()
        with trio.fail_after(LIVENESS_CHECK / 2):  # told at once, not by the liveness check
            assert await b.forward(client.http, b"{}", "a", None)
    assert client.complete
    if after_start:
        assert client.status == 200
    else:
        assert client.status == 503
        assert any(name == b"retry-after" for name, _ in client.messages[0]["headers"])


async def test_the_owner_lets_go_of_a_stream_whose_forwarding_worker_died(
    autojump_clock: Any,
) -> None:
    """B dies without a word while carrying A's stream: A sees B's liveness key gone and
    lets the stream go (so the client can open it again on another worker)."""
    let_go = trio.Event()
    forwarding: list[MemoryInbox] = []

    async def serve(http: HttpRequest) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await http.send({"type": "http.response.start", "status": 200, "headers": headers})
        forwarding[0].alive_flag = False  # SIGKILL
        await http.wait_disconnect()
        let_go.set()

    async with fleet(serve) as (b, _), trio.open_nursery() as nursery:
        assert isinstance(b.inbox, MemoryInbox)
        forwarding.append(b.inbox)
        nursery.start_soon(b.forward, Client(method="GET").http, b"", "a", None)
        start = trio.current_time()
        with trio.fail_after(10):
            await let_go.wait()
        assert trio.current_time() - start <= 2 * LIVENESS_CHECK
        nursery.cancel_scope.cancel()  # (B's own task: dead in real life)
