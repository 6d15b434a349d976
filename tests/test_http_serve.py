"""Serving over real sockets: ``serve()`` reports its port and shuts down gracefully, and the
echo example runs over HTTP (one process and several)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from http_support import MODERN, initialize, make_server, modern_body, modern_headers

from trio_mcp._http.server._serve import FrontEnd
from trio_mcp.http import Http11Limits, McpAsgiApp, serve

ROOT = Path(__file__).resolve().parent.parent
ECHO = ROOT / "examples" / "echo_server.py"


async def test_a_trickled_body_gets_408_after_body_timeout(front_end: FrontEnd) -> None:
    """A client that sends its headers and then the body slower than ``body_timeout`` (here
    never finishing it) gets 408 with a JSON-RPC error, over a real socket: the Hypercorn
    configuration of ``serve`` has no read timeout of its own."""
    server, _ = make_server()
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve,
                server,
                port=0,
                front_end=front_end,
                body_timeout=0.3,
                shutdown_trigger=stop.wait,
            )
        )
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(
                b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                b"content-type: application/json\r\ncontent-length: 100\r\n\r\n"
                b'{"jsonrpc": "2.0", '
            )
            started = trio.current_time()
            answer = b""
            with trio.fail_after(5):
                while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                    chunk = await stream.receive_some()
                    if not chunk:
                        break
                    answer += chunk
            elapsed = trio.current_time() - started
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), answer
        assert b'"code":-32600' in body.replace(b" ", b""), answer
        assert 0.25 < elapsed < 4
        stop.set()


async def test_serve_reports_its_port_and_stops_on_its_trigger(front_end: FrontEnd) -> None:
    server, probe = make_server()
    stop = trio.Event()
    async with httpx.AsyncClient() as client, trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve,
                server,
                port=0,
                front_end=front_end,
                graceful_timeout=0.5,
                shutdown_trigger=stop.wait,
            )
        )
        url = f"http://127.0.0.1:{port}/mcp"
        headers = await initialize(client, url)
        r = await client.post(
            url,
            json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            headers=modern_headers("tools/call", "echo"),
        )
        assert r.json()["result"]["content"][0]["text"] == "x"

        async def blocked_call() -> None:
            body = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "block"},
            }
            # Answered at the deadline with an error, not cut off with the connection.
            r = await client.post(url, json=body, headers=headers)
            assert r.json() == {
                "jsonrpc": "2.0",
                "id": 2,
                "error": {
                    "code": -32603,
                    "message": "Service Unavailable: the server is shutting down",
                },
            }
            answered.append(trio.current_time())

        answered: list[float] = []
        nursery.start_soon(blocked_call)
        with trio.fail_after(5):
            await probe.started.wait()
        started = trio.current_time()
        stop.set()
    # The call in flight was answered at the graceful deadline, not before, and its
    # handler cancelled when the session ended.
    assert 0.4 < answered[0] - started < 1.5
    assert probe.cancelled.is_set()
    assert 0.4 < trio.current_time() - started < 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(ECHO), *args],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,
    )


def echo_call(url: str, text: str) -> str:
    r = httpx.post(
        url,
        json=modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": text}}),
        headers=modern_headers("tools/call", "echo"),
        timeout=10,
    )
    return str(r.json()["result"]["content"][0]["text"])


def wait_until_up(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            httpx.post(url, json={}, headers={"mcp-protocol-version": MODERN}, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not come up")


@pytest.mark.slow
@pytest.mark.parametrize("after_start", [False, True])
async def test_a_failure_inside_the_app_never_reaches_the_server(
    monkeypatch: pytest.MonkeyPatch, after_start: bool, front_end: FrontEnd
) -> None:
    """A bug of ours in one exchange is logged and that exchange answered (500 with a
    JSON-RPC error, or the end of a stream already begun); the listener serves on.
    (Hypercorn, handed an exception mid-stream, tries a 500 and loses the listener.)"""
    server, _ = make_server()
    served_http = McpAsgiApp._http
    failures = 0

    async def fail_once(self: McpAsgiApp, http: Any) -> None:
        nonlocal failures
        if failures:
            await served_http(self, http)
            return
        failures += 1
        if after_start:
            await http.send({"type": "http.response.start", "status": 200, "headers": []})
            await http.send({"type": "http.response.body", "body": b"partial", "more_body": True})
        raise RuntimeError("a bug in the app")

    monkeypatch.setattr(McpAsgiApp, "_http", fail_once)
    stop = trio.Event()
    async with httpx.AsyncClient() as client, trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve,
                server,
                port=0,
                front_end=front_end,
                graceful_timeout=0.5,
                shutdown_trigger=stop.wait,
            )
        )
        url = f"http://127.0.0.1:{port}/mcp"
        body = modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        r = await client.post(url, json=body, headers=modern_headers("tools/call", "echo"))
        if after_start:
            assert (r.status_code, r.content) == (200, b"partial")
        else:
            assert r.status_code == 500
            assert r.json() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32603, "message": "Internal error"},
            }
        r = await client.post(url, json=body, headers=modern_headers("tools/call", "echo"))
        assert r.json()["result"]["content"][0]["text"] == "x"
        stop.set()
    assert failures == 1


def test_the_echo_example_over_http_exits_promptly_on_sigterm() -> None:
    port = free_port()
    process = spawn("--http", str(port), "--graceful", "3")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_up(url, process)
        assert echo_call(url, "hello") == "hello"
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert time.monotonic() - started < 3
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow
def test_the_echo_example_with_two_workers() -> None:
    port = free_port()
    process = spawn("--http", str(port), "--workers", "2", "--graceful", "2")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_up(url, process)
        assert [echo_call(url, str(n)) for n in range(20)] == [str(n) for n in range(20)]
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


async def test_a_front_end_that_does_not_exist_or_tls_on_httptools_is_refused() -> None:
    from hypercorn.config import Config

    server, _ = make_server()
    with pytest.raises(ValueError, match="front_end must be 'httptools' or 'hypercorn'"):
        await serve(server, port=0, front_end="h2o")  # type: ignore[arg-type]
    config = Config()
    config.certfile, config.keyfile = "cert.pem", "key.pem"
    with pytest.raises(ValueError, match="TLS, which the httptools front end does not serve"):
        await serve(server, port=0, front_end="httptools", config=config)


async def test_the_httptools_limits_are_an_option_of_serve() -> None:
    """``serve(http11_limits=...)`` reaches the connections: a head with more fields than
    the limit gets 431 over a real socket."""
    server, _ = make_server()
    stop = trio.Event()
    limits = Http11Limits(max_headers=3)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(serve, server, port=0, http11_limits=limits, shutdown_trigger=stop.wait)
        )
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(
                b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\na: 1\r\nb: 2\r\nc: 3\r\n\r\n"
            )
            with trio.fail_after(5):
                answer = await stream.receive_some()
        assert answer.startswith(b"HTTP/1.1 431 "), answer
        stop.set()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_header_bytes", 0),
        ("max_headers", True),
        ("header_timeout", -1.0),
        ("keep_alive_timeout", "5"),
    ],
)
def test_http11_limits_refuse_what_is_not_positive_naming_the_field(
    field: str, value: object
) -> None:
    with pytest.raises(ValueError, match=f"Http11Limits.{field} must be a positive"):
        Http11Limits(**{field: value})  # type: ignore[arg-type]


async def test_http11_limits_of_another_type_are_refused() -> None:
    server, _ = make_server()
    with pytest.raises(TypeError, match="http11_limits must be an Http11Limits, not dict"):
        await serve(server, port=0, http11_limits={"max_headers": 3})  # type: ignore[arg-type]
