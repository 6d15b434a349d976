"""A fleet against the conformance checks with each request sent to another worker:
``check_transport`` on a 2024-11-05 HTTP+SSE session whose stream is held by one of three
in-process workers and whose every POST goes to the next worker (so two in three are
forwarded to the holder through Redis; the server's end of the pair is the session's own
message stream, in the worker holding it), and the fuzzer's HTTP rules, both eras,
through a proxy that sends each request to the next worker. Real redis-server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from fleet_spread import fleet_in_process, round_robin_proxy, spread_client
from process_support import terminated_at_exit
from redis_support import RedisProcess
from sse_server_end import ServedByTheTest

from trio_mcp.fuzz import HttpTarget, fuzz
from trio_mcp.http import HttpClientStream, open_http_stream
from trio_mcp.testing import check_transport
from trio_mcp.transports import MessageStream

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = Path(os.environ.get("TRIO_MCP_SPEC_DIR", ROOT.parent / "shared" / "spec"))

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


# -- check_transport, each request on another worker -----------------------------------------


@asynccontextmanager
async def spread_session(
    state: str, buffer: int
) -> AsyncIterator[tuple[HttpClientStream, MessageStream]]:
    """A 2024-11-05 HTTP+SSE client stream on a fleet of three workers, its GET on the
    first and each POST sent to the next worker (so two of three are forwarded to the
    first through Redis), and the session's stream in the worker holding it."""
    server = ServedByTheTest()
    async with (
        fleet_in_process(server, state, 3) as ports,
        spread_client(ports) as http,
        open_http_stream(
            f"http://127.0.0.1:{ports[0]}/sse", transport="sse", buffer=buffer, http_client=http
        ) as client,
    ):
        peer = await server.streams.receive()
        try:
            yield client, peer
        finally:
            await peer.aclose()


def server_first(state: str, buffer: int) -> Any:
    @asynccontextmanager
    async def maker() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        async with spread_session(state, buffer) as (client, peer):
            yield peer, client

    return maker


async def test_http_sse_spread_over_three_workers_passes_check_transport(
    redis: RedisProcess,
) -> None:
    await check_transport(
        lambda: spread_session(redis.url, 16), lambda: spread_session(redis.url, 0)
    )
    await check_transport(server_first(redis.url, 16), server_first(redis.url, 0))


# -- the fuzzer's HTTP rules, each request on another worker ---------------------------------

EVERYTHING_SERVER = ROOT / "examples" / "everything_server.py"


@contextmanager
def everything_fleet(redis: str, count: int = 2) -> Iterator[list[int]]:
    """``count`` ``examples/everything_server.py --http 0 --redis URL`` workers; their ports."""
    command = [sys.executable, str(EVERYTHING_SERVER), "--http", "0", "--redis", redis]
    processes = [
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(count)
    ]
    with terminated_at_exit(processes):
        ports = []
        for process in processes:
            assert process.stderr is not None
            line = process.stderr.readline()  # it names its URL once it serves
            found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
            assert found is not None, line
            ports.append(int(found.group(1)))
        yield ports


async def test_the_fuzzers_http_rules_pass_with_requests_spread_over_workers(
    redis: RedisProcess,
) -> None:
    """Both eras: sessions made on one worker and used, resumed and DELETEd through the
    other, input rounds, the HTTP probes (headers, Host, sizes, methods). (The same two
    workers without ``--redis`` fail it at once: a session's ping on the other worker gets
    "Session not found".)"""
    with everything_fleet(redis.url) as ports:
        async with round_robin_proxy(ports) as (base, transport):
            report = await fuzz(
                HttpTarget(url=base + "/mcp"),
                checks=["protocol", "http"],
                max_examples=30,
                seed=1,  # (a seed whose run reaches every HTTP rule; see test_fuzz_own_server)
                deadline=5,
                cancel_wait=0.3,
                time_budget=40,
                spec_dir=SPEC_DIR if SPEC_DIR.exists() else None,
            )
    assert not report.failures, report.summary()
    assert set(report.eras) == {"legacy", "modern"}
    assert "http_headers" in report.rules, report.rules
    assert "http_session" in report.rules, report.rules
    assert len(transport.sent) > 100 and set(transport.sent) == set(ports)
