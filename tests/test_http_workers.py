"""``serve(workers=N)``: worker processes sharing one port, with real processes and
sockets: both answer, a dead one is started again, shutdown and the parent's death leave
no worker behind, and what cannot reach a worker is refused before anything starts."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from http_support import ACCEPT, LEGACY, meta, modern_body, modern_headers

from trio_mcp import Server
from trio_mcp.http import serve

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.slow


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


async def call(
    url: str,
    tool: str,
    arguments: dict[str, object] | None = None,
    *,
    params: dict[str, Any] | None = None,
) -> Any:
    """One call on a connection of its own (so the kernel picks a worker for each)."""
    if params is None:
        params = {"name": tool, "arguments": arguments or {}}
    body = modern_body(1, "tools/call", params)
    body["params"]["_meta"] = params.get("_meta", body["params"]["_meta"])
    async with httpx.AsyncClient(timeout=10) as client:
        r = await client.post(url, json=body, headers=modern_headers("tools/call", tool))
    return r.json()["result"]


async def pids(url: str, calls: int = 40) -> set[int]:
    return {int((await call(url, "pid"))["structuredContent"]["result"]) for _ in range(calls)}


@asynccontextmanager
async def fleet(
    target: Server | str, workers: int = 2, front_end: Any = "hypercorn"
) -> AsyncIterator[tuple[str, trio.Event]]:
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        with trio.fail_after(60):
            port = await nursery.start(
                partial(
                    serve,
                    target,
                    port=0,
                    workers=workers,
                    front_end=front_end,
                    graceful_timeout=1,
                    shutdown_trigger=stop.wait,
                )
            )
        yield f"http://127.0.0.1:{port}/mcp", stop
        stop.set()


async def test_every_worker_answers_on_the_one_port(front_end: str) -> None:
    async with fleet("workers_app:server", front_end=front_end) as (url, _):
        with trio.fail_after(30):
            answered = await pids(url)
    # Forty connections spread by SO_REUSEPORT over two workers: both answer (all on one
    # has a chance of 2**-39), and neither is this process.
    assert len(answered) == 2
    assert os.getpid() not in answered


async def test_a_factory_names_the_server_too() -> None:
    async with fleet("workers_app:make_server", workers=2) as (url, _):
        with trio.fail_after(30):
            assert len(await pids(url)) == 2


async def test_an_input_round_asked_by_one_worker_is_finished_by_another() -> None:
    """Each leg on a connection of its own: twenty rounds cross between the workers
    (all twenty staying in one worker has a chance of 2**-20), and every one completes,
    since the workers seal ``requestState`` with one key."""
    crossed = 0
    async with fleet("workers_app:server") as (url, _):
        with trio.fail_after(60):
            for n in range(20):
                params = {"name": "ask_name", "arguments": {}, "_meta": meta(elicitation={})}
                first = await call(url, "ask_name", params=params)
                assert first["resultType"] == "input_required"
                asker = first["inputRequests"]["who"]["params"]["message"].split()[-1]
                params["requestState"] = first["requestState"]
                params["inputResponses"] = {
                    "who": {"action": "accept", "content": {"name": f"Ada {n}"}}
                }
                done = await call(url, "ask_name", params=params)
                text = done["content"][0]["text"]
                assert text.startswith(f"Hello, Ada {n}!")
                crossed += asker.strip(")") != text.split()[-1].strip(")")
    assert crossed > 0


async def test_a_dead_worker_is_started_again_and_the_others_serve_meanwhile() -> None:
    async with fleet("workers_app:server") as (url, _):
        with trio.fail_after(30):
            first = await pids(url)
            victim, survivor = sorted(first)
            os.kill(victim, signal.SIGKILL)
            while True:
                now = await pids(url, 10)
                assert victim not in now
                if len(now) == 2:
                    break
        assert survivor in now
        assert not alive(victim)


async def test_shutdown_waits_for_calls_in_flight_and_leaves_no_worker() -> None:
    async with fleet("workers_app:server") as (url, stop):
        with trio.fail_after(30):
            workers = await pids(url)
        answers: list[object] = []

        async def slow_call() -> None:
            answers.append((await call(url, "wait", {"seconds": 0.5}))["content"][0]["text"])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_call)
            await trio.sleep(0.2)  # a real process is serving the call: real time
            stop.set()
    assert answers == ["done"]
    assert not any(alive(pid) for pid in workers)


async def test_a_worker_that_cannot_start_fails_serve_with_the_reason() -> None:
    with trio.fail_after(60), pytest.raises(RuntimeError, match="exited before serving"):
        await serve("workers_app:no_such_server", port=0, workers=2)


async def test_what_cannot_reach_a_worker_is_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="workers must be a positive int"):
        await serve("workers_app:server", workers=0)
    with pytest.raises(ValueError, match="'module:attribute'"):
        await serve("workers_app", workers=2)
    local = Server("made here")  # no module holds it: a worker could not build it
    with pytest.raises(TypeError, match="top level"):
        await serve(local, workers=2)
    with pytest.raises(TypeError, match=r"option principal=.* cannot be sent"):
        await serve("workers_app:server", workers=2, principal=lambda scope: "p")


def test_workers_die_with_their_parent_and_serve_from_the_script() -> None:
    """The parent, a script whose Server lives in ``__main__``, is SIGKILLed: its workers
    see their stdin close and shut down by themselves."""
    parent = subprocess.Popen(
        [sys.executable, str(HERE / "workers_app.py"), "0.5"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert parent.stdout is not None
        port = int(parent.stdout.readline())
        url = f"http://127.0.0.1:{port}/mcp"
        workers = trio.run(pids, url)
        assert len(workers) == 2
        assert parent.pid not in workers
        parent.kill()
        parent.wait(timeout=10)
        deadline = time.monotonic() + 15
        while any(alive(pid) for pid in workers):
            assert time.monotonic() < deadline, "a worker outlived its parent"
            time.sleep(0.05)
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        parent.wait()


@contextmanager
def hypercorn(factory: str, workers: int = 2) -> Iterator[str]:
    """``hypercorn --worker-class trio --workers N`` serving ``examples/echo_server.py``'s
    ``factory`` (such as ``make_app()``) on a free port, once it answers; its MCP URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hypercorn",
            "--worker-class",
            "trio",
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{port}",
            f"{HERE.parent / 'examples' / 'echo_server.py'}:{factory}",
        ],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                r = httpx.post(
                    url,
                    json=modern_body(
                        1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}
                    ),
                    headers=modern_headers("tools/call", "echo"),
                    timeout=5,
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "hypercorn did not come up"
                time.sleep(0.1)
        assert r.json()["result"]["content"][0]["text"] == "hi"
        yield url
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def test_hypercorns_own_workers_serve_the_example_app() -> None:
    """The command line the serving how-to gives for Hypercorn's supervisor."""
    with hypercorn("make_app()"):
        pass


def legacy_session(url: str) -> dict[str, str]:
    """Open an initialize-era session at ``url``; the headers its requests carry."""
    client = {"name": "test", "version": "1"}
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": client}
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    answer = httpx.post(url, json=body, headers={"accept": ACCEPT}, timeout=10)
    assert answer.status_code == 200, answer.text
    headers = {
        "mcp-session-id": answer.headers["mcp-session-id"],
        "mcp-protocol-version": LEGACY,
        "accept": ACCEPT,
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx.post(url, json=initialized, headers=headers, timeout=10).status_code == 202
    return headers


def echo_in(url: str, headers: dict[str, str], text: str) -> httpx.Response:
    """``echo(text)`` in the session ``headers`` name, on a connection of its own."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}}  # fmt: skip
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_hypercorn_processes_sharing_redis_serve_as_one(redis_url: str) -> None:
    """The how-to's Hypercorn command with ``make_app("redis://...")``: two Hypercorn
    processes on two ports, two workers each, one Redis. An initialize-era session opened
    on one is served on the other and by each of their workers (every request on a new
    connection, so Hypercorn's workers take turns), and a DELETE on one ends it on both."""
    factory = f"make_app({redis_url!r})"
    with hypercorn(factory) as a, hypercorn(factory) as b:
        headers = legacy_session(a)
        for n in range(6):
            answered = echo_in((a, b)[n % 2], headers, f"call {n}")
            assert answered.status_code == 200, answered.text
            assert f"call {n}" in answered.text
        assert httpx.delete(b, headers=headers, timeout=10).status_code == 200
        for url in (a, b):
            ended = echo_in(url, headers, "after")
            assert ended.status_code == 404, ended.text
