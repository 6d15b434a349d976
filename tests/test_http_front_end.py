"""The httptools front end over raw sockets: HTTP/1.1 framing (keep-alive, pipelining,
``Connection: close``, HTTP/1.0, chunked bodies, ``Expect: 100-continue``), the shapes of
request smuggling it refuses with ``400``, and the limits of request heads, idle
connections and bodies. Each test writes bytes as a client would and reads what the
server answers (parsed with llhttp's response parser, so that framing errors show)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import attrs
import httptools
import orjson
import pytest
import trio
from http_support import MODERN, make_server

from trio_mcp._http.server._http11 import MAX_PIPELINED_BYTES, READ_SIZE
from trio_mcp._http.server._http11_parse import Http11Limits
from trio_mcp._http.server._http11_serve import serve_http11
from trio_mcp.http import McpAsgiApp

pytestmark = pytest.mark.timeout(30)

HOST = b"host: 127.0.0.1\r\n"


@attrs.define
class Response:
    status: int = 0
    headers: dict[str, str] = attrs.field(factory=dict)
    body: bytes = b""
    complete: bool = False

    def json(self) -> object:
        return orjson.loads(self.body)


@attrs.define
class Responses:
    """The responses on one connection, as llhttp's response parser reads them."""

    items: list[Response] = attrs.field(factory=list)
    parser: httptools.HttpResponseParser | None = None

    def __attrs_post_init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)

    def on_message_begin(self) -> None:
        self.items.append(Response())

    def on_header(self, name: bytes, value: bytes) -> None:
        self.items[-1].headers[name.decode().lower()] = value.decode()

    def on_headers_complete(self) -> None:
        assert self.parser is not None
        self.items[-1].status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        self.items[-1].body += body

    def on_message_complete(self) -> None:
        self.items[-1].complete = True

    def done(self) -> list[Response]:
        return [r for r in self.items if r.complete]


async def read_responses(
    stream: trio.SocketStream, count: int, *, until_eof: bool = False
) -> tuple[list[Response], bool]:
    """Read until ``count`` responses are complete (and, with ``until_eof``, the server
    closed); returns them and whether the server closed the connection."""
    responses = Responses()
    closed = False
    with trio.fail_after(10):
        while len(responses.done()) < count or (until_eof and not closed):
            data = await stream.receive_some()
            if not data:
                closed = True
                break
            assert responses.parser is not None
            responses.parser.feed_data(data)
    return responses.done(), closed


def call(id: int, text: str = "hi") -> bytes:
    """A 2026-07-28 ``tools/call`` of ``echo``, as a JSON body."""
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": text},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
    )


def post(body: bytes, *extra: bytes) -> bytes:
    """A POST of ``body`` to the MCP endpoint with ``Content-Length``."""
    return (
        b"POST /mcp HTTP/1.1\r\n" + HOST + b"content-type: application/json\r\n"
        b"accept: application/json, text/event-stream\r\n"
        b"mcp-protocol-version: " + MODERN.encode() + b"\r\n"
        b"mcp-method: tools/call\r\nmcp-name: echo\r\n"
        + b"".join(extra)
        + b"content-length: %d\r\n\r\n" % len(body)
        + body
    )


def echoed(response: Response) -> str:
    result = response.json()
    assert isinstance(result, dict), result
    assert "result" in result, result
    text: str = result["result"]["content"][0]["text"]
    return text


@asynccontextmanager
async def front_end(
    limits: Http11Limits | None = None, **options: object
) -> AsyncIterator[tuple[int, trio.Event]]:
    """The echo test server on the httptools front end; yields its port and the event
    that starts its shutdown."""
    server, _ = make_server()
    app = McpAsgiApp(server, **options)  # type: ignore[arg-type]
    stop = trio.Event()

    async def trigger() -> None:
        await stop.wait()
        app.begin_shutdown(grace=1.0)

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with app.running(), trio.open_nursery() as nursery:
        await nursery.start(
            partial(
                serve_http11,
                app,
                listeners,
                shutdown_trigger=trigger,
                shutdown_deadline=2.0,
                limits=limits,
            )
        )
        yield port, stop
        stop.set()


@asynccontextmanager
async def connection(port: int) -> AsyncIterator[trio.SocketStream]:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        yield stream


# -- framing ------------------------------------------------------------------------------


async def test_a_kept_alive_connection_carries_one_request_after_another() -> None:
    async with front_end() as (port, _), connection(port) as stream:
        for id in range(3):
            await stream.send_all(post(call(id, f"call {id}")))
            [response], closed = await read_responses(stream, 1)
            assert (response.status, echoed(response), closed) == (200, f"call {id}", False)
            assert "connection" not in response.headers


async def test_pipelined_requests_are_answered_in_order() -> None:
    """Five requests in one write (one of them cut in two across writes) get five answers,
    in the order asked."""
    async with front_end() as (port, _), connection(port) as stream:
        wire = b"".join(post(call(id, f"call {id}")) for id in range(5))
        await stream.send_all(wire[:-10])
        await trio.testing.wait_all_tasks_blocked()  # the server has read the first part
        await stream.send_all(wire[-10:])
        responses, closed = await read_responses(stream, 5)
        assert [echoed(r) for r in responses] == [f"call {id}" for id in range(5)]
        assert not closed


async def test_connection_close_is_honoured_after_the_answer() -> None:
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(post(call(1), b"connection: close\r\n") + post(call(2)))
        responses, closed = await read_responses(stream, 1, until_eof=True)
        assert [echoed(r) for r in responses] == ["hi"]  # the second was never read
        assert responses[0].headers["connection"] == "close"
        assert closed


async def test_http_1_0_is_answered_and_closed() -> None:
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(post(call(1)).replace(b"HTTP/1.1", b"HTTP/1.0", 1))
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (echoed(response), closed) == ("hi", True)


async def test_a_chunked_request_body_is_read_whole() -> None:
    body = call(7, "chunked")
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:]))
    request = post(b"").replace(b"content-length: 0\r\n", b"transfer-encoding: chunked\r\n")
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(request + chunks + b"0\r\n\r\n")
        [response], closed = await read_responses(stream, 1)
        assert (echoed(response), closed) == ("chunked", False)


async def test_expect_100_continue_is_answered_before_the_body_is_sent() -> None:
    body = call(3, "continued")
    request = post(body, b"expect: 100-continue\r\n")
    head = request[: -len(body)]
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(head)
        with trio.fail_after(5):
            interim = await stream.receive_some()
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        await stream.send_all(body)
        [response], _ = await read_responses(stream, 1)
        assert echoed(response) == "continued"


async def test_a_head_request_gets_no_body_and_the_connection_goes_on() -> None:
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(b"HEAD /elsewhere HTTP/1.1\r\n" + HOST + b"\r\n" + post(call(1)))
        data = b""
        with trio.fail_after(5):
            while data.count(b"HTTP/1.1 ") < 2 or not data.endswith(b"}"):
                data += await stream.receive_some()
        head, _, rest = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 404 ")
        assert rest.startswith(b"HTTP/1.1 200 ")  # (no body between the two)


async def test_expect_100_continue_on_a_refused_body_gets_no_interim_answer() -> None:
    """A body refused from its ``Content-Length`` is never asked for: 413 comes first
    and the connection closes (the client must not send the body on it)."""
    request = post(b"", b"expect: 100-continue\r\n").replace(
        b"content-length: 0", b"content-length: 100000"
    )
    async with front_end(max_body_bytes=1000) as (port, _), connection(port) as stream:
        await stream.send_all(request)
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (413, True)


async def test_a_request_answered_without_its_body_being_read_closes_the_connection() -> None:
    """A body the app never read cannot be skipped safely (it might hold a request of
    its own): the answer says ``Connection: close``."""
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(
            b"POST /elsewhere HTTP/1.1\r\n" + HOST + b"content-length: 100\r\n\r\n"
        )
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, response.headers["connection"], closed) == (404, "close", True)


# -- request smuggling --------------------------------------------------------------------

SMUGGLING = {
    "two different Content-Length": b"content-length: 5\r\ncontent-length: 6\r\n\r\nhello!",
    "two equal Content-Length": b"content-length: 5\r\ncontent-length: 5\r\n\r\nhello",
    "a Content-Length list": b"content-length: 5, 5\r\n\r\nhello",
    "a signed Content-Length": b"content-length: +5\r\n\r\nhello",
    "Content-Length then Transfer-Encoding": (
        b"content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"
    ),
    "Transfer-Encoding then Content-Length": (
        b"transfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n0\r\n\r\n"
    ),
    "chunked not last": b"transfer-encoding: chunked, identity\r\n\r\n0\r\n\r\n",
    "an unknown coding": b"transfer-encoding: xchunked\r\n\r\n0\r\n\r\n",
    "obsolete line folding": b"x-a: 1\r\n  folded\r\ncontent-length: 0\r\n\r\n",
    "a bare LF ending a field": b"x-a: 1\ncontent-length: 0\r\n\r\n",
    "a bare CR ending a field": b"x-a: 1\rcontent-length: 0\r\n\r\n",
    "a space before the colon": b"content-length : 0\r\n\r\n",
    "an invalid chunk size": b"transfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    "a chunk size that overflows": (
        b"transfer-encoding: chunked\r\n\r\nfffffffffffffffff1\r\nabc\r\n0\r\n\r\n"
    ),
}


@pytest.mark.parametrize("shape", list(SMUGGLING))
async def test_a_request_smuggling_shape_gets_400_and_the_connection_closes(shape: str) -> None:
    """Each shape is followed by a well-formed request on the same connection: it must
    never be answered (a front end that read the first request one way and a proxy before
    it another would answer it as the smuggled one)."""
    request = (
        b"POST /mcp HTTP/1.1\r\n" + HOST + b"content-type: application/json\r\n" + SMUGGLING[shape]
    )
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(request + post(call(2, "smuggled")))
        responses, closed = await read_responses(stream, 1, until_eof=True)
        assert [r.status for r in responses] == [400], responses
        assert responses[0].headers["connection"] == "close"
        error = responses[0].json()
        assert isinstance(error, dict) and error["error"]["code"] == -32600
        assert closed


async def test_a_bare_lf_request_line_gets_400() -> None:
    async with front_end() as (port, _), connection(port) as stream:
        await stream.send_all(b"POST /mcp HTTP/1.1\n" + HOST + b"content-length: 0\r\n\r\n")
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (400, True)


# -- limits -------------------------------------------------------------------------------


async def test_a_head_over_the_size_limit_gets_431() -> None:
    limits = Http11Limits(max_header_bytes=1024)
    async with front_end(limits) as (port, _), connection(port) as stream:
        await stream.send_all(post(call(1), b"x-big: " + b"a" * 2000 + b"\r\n"))
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (431, True)


async def test_a_head_that_never_ends_gets_431_once_past_the_limit() -> None:
    """One endless header line: refused after at most one read past the limit, not held
    in memory until it ends."""
    limits = Http11Limits(max_header_bytes=1024)
    async with front_end(limits) as (port, _), connection(port) as stream:
        await stream.send_all(b"POST /mcp HTTP/1.1\r\n" + HOST + b"x-endless: ")
        sent = 0
        with trio.move_on_after(5):
            while sent < 64 * READ_SIZE:
                try:
                    await stream.send_all(b"a" * 4096)
                except trio.BrokenResourceError:
                    break
                sent += 4096
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (431, True)
        assert sent < 16 * READ_SIZE


async def test_too_many_header_fields_get_431() -> None:
    limits = Http11Limits(max_headers=10)
    fields = b"".join(b"x-%d: 1\r\n" % i for i in range(12))
    async with front_end(limits) as (port, _), connection(port) as stream:
        await stream.send_all(post(call(1), fields))
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (431, True)


async def test_a_slow_head_gets_408(autojump_clock: trio.testing.MockClock) -> None:
    limits = Http11Limits(header_timeout=3.0)
    async with front_end(limits) as (port, _), connection(port) as stream:
        await stream.send_all(b"POST /mcp HTTP/1.1\r\n" + HOST)
        started = trio.current_time()
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (408, True)
        assert trio.current_time() - started == pytest.approx(3.0, abs=0.5)


async def test_a_head_trickled_in_is_bounded_from_its_first_byte(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Each byte arriving in time does not restart the clock: the whole head has
    ``header_timeout``."""
    limits = Http11Limits(header_timeout=3.0, keep_alive_timeout=2.0)
    async with front_end(limits) as (port, _), connection(port) as stream:
        started = trio.current_time()
        with trio.move_on_after(20):
            for byte in b"POST /mcp HTTP/1.1\r\nx-slow: " + b"a" * 20:
                try:
                    await stream.send_all(bytes([byte]))
                except trio.BrokenResourceError:
                    break
                await trio.sleep(1.0)
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (408, True)
        assert trio.current_time() - started < 6


async def test_an_idle_connection_closes_after_the_keep_alive_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limits = Http11Limits(keep_alive_timeout=4.0)
    async with front_end(limits) as (port, _), connection(port) as stream:
        await stream.send_all(post(call(1)))
        [response], _ = await read_responses(stream, 1)
        started = trio.current_time()
        responses, closed = await read_responses(stream, 0, until_eof=True)
        assert (responses, closed) == ([], True)
        assert trio.current_time() - started == pytest.approx(4.0, abs=0.5)


async def test_a_body_over_the_limit_is_refused_from_its_content_length() -> None:
    async with front_end(max_body_bytes=1000) as (port, _), connection(port) as stream:
        request = post(b"").replace(b"content-length: 0", b"content-length: 1000000")
        await stream.send_all(request)  # and not one byte of the body
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (413, True)


async def test_a_chunked_body_over_the_limit_is_refused_while_it_is_sent() -> None:
    """No ``Content-Length`` to check first: the body is refused once past the limit,
    after at most one read more, while the client is still sending."""
    request = post(b"").replace(b"content-length: 0\r\n", b"transfer-encoding: chunked\r\n")
    chunk = b"%x\r\n%s\r\n" % (4096, b"a" * 4096)
    async with front_end(max_body_bytes=8192) as (port, _), connection(port) as stream:
        await stream.send_all(request)
        sent = 0
        with trio.move_on_after(5):
            while sent < 64 * READ_SIZE:
                try:
                    await stream.send_all(chunk)
                except trio.BrokenResourceError:
                    break
                sent += len(chunk)
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (413, True)
        assert sent < 16 * READ_SIZE


async def test_an_endless_trailer_is_refused_once_past_the_head_limit() -> None:
    """llhttp gathers a trailer's field whole: one that never ends is refused after at most
    one read past ``max_header_bytes``, not held until the body's timeout."""
    limits = Http11Limits(max_header_bytes=1024)
    request = post(b"").replace(b"content-length: 0\r\n", b"transfer-encoding: chunked\r\n")
    async with front_end(limits) as (port, _), connection(port) as stream:
        await stream.send_all(request + b"3\r\n{}\n\r\n0\r\nx-trailer: ")
        sent = 0
        with trio.move_on_after(5):
            while sent < 64 * READ_SIZE:
                try:
                    await stream.send_all(b"a" * 4096)
                except trio.BrokenResourceError:
                    break
                sent += 4096
        [response], closed = await read_responses(stream, 1, until_eof=True)
        assert (response.status, closed) == (400, True)
        assert sent < 16 * READ_SIZE


async def test_a_trailer_does_not_add_to_the_request_headers() -> None:
    """A chunked body's trailer comes after the app read the head: its fields are dropped,
    never appended to the headers (a session id or a token smuggled in late)."""
    seen: list[list[tuple[bytes, bytes]]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        seen.append(list(scope["headers"]))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve_http11, app, listeners))
        async with connection(port) as stream:
            await stream.send_all(
                b"POST /x HTTP/1.1\r\n" + HOST + b"transfer-encoding: chunked\r\n\r\n"
                b"2\r\nhi\r\n0\r\nmcp-session-id: stolen\r\n\r\n"
            )
            [response], _ = await read_responses(stream, 1)
        nursery.cancel_scope.cancel()
    assert response.status == 204
    assert [name for name, _ in seen[0]] == [b"host", b"transfer-encoding"]


async def test_requests_pipelined_behind_a_stream_are_read_only_so_far() -> None:
    """While an answer streams, what the client pipelines behind it is read up to
    ``MAX_PIPELINED_BYTES`` and then left in the socket; the requests are answered once
    the stream ends."""
    async with front_end() as (port, stop), connection(port) as stream:
        get = b"GET /sse HTTP/1.1\r\n" + HOST + b"accept: text/event-stream\r\n\r\n"
        await stream.send_all(get)
        head = b""
        with trio.fail_after(5):
            while b"endpoint" not in head:
                head += await stream.receive_some()
        assert head.startswith(b"HTTP/1.1 200")
        sent = 0
        with trio.move_on_after(1):
            while sent < 64 * MAX_PIPELINED_BYTES:
                await stream.send_all(post(call(sent)))
                sent += len(post(call(sent)))
        assert sent < 64 * MAX_PIPELINED_BYTES  # the server stopped reading
        stop.set()  # ends the stream (shutdown); the rest is never answered


async def test_shutdown_closes_an_idle_connection_at_once() -> None:
    async with front_end() as (port, stop), connection(port) as stream:
        await stream.send_all(post(call(1)))
        await read_responses(stream, 1)
        stop.set()
        responses, closed = await read_responses(stream, 0, until_eof=True)
        assert (responses, closed) == ([], True)
