"""A fleet sharing one RedisState, with real worker processes on a real redis-server: a
change raised on one worker reaches the subscriptions/listen streams of every worker, in
order, once each; an input round asked by one worker is finished by another, with no
secret given to either; the key rotates under rounds in flight; Redis stopped and started
again mid-stream: each worker keeps serving, its own listeners keep hearing its changes,
and changes cross workers again once Redis is back, without any restart."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from http_support import meta, modern_body, modern_headers
from process_support import terminated_at_exit
from redis_support import RedisProcess

from trio_mcp.client import Change
from trio_mcp.fleet import RedisState, rotate_request_state_key
from trio_mcp.http import open_http_client

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.slow


@contextmanager
def workers(state: str, count: int = 2, key_refresh: float = 10.0) -> Iterator[list[str]]:
    """``count`` fleet members sharing ``state`` (``-``: none), their MCP URLs."""
    processes = [
        subprocess.Popen(
            [sys.executable, str(HERE / "fleet_state_app.py"), state, str(key_refresh)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    with terminated_at_exit(processes):
        urls = []
        for process in processes:
            assert process.stdout is not None
            urls.append(f"http://127.0.0.1:{int(process.stdout.readline())}/mcp")
        yield urls


async def call(url: str, tool: str) -> str:
    async with open_http_client(url) as client:
        result = await client.call_tool(tool)
    return result.content[0].text  # type: ignore[union-attr,no-any-return]


async def test_a_change_on_one_worker_reaches_every_workers_listeners_once_in_order(
    redis: RedisProcess,
) -> None:
    with workers(redis.url) as (a, b):
        async with (
            open_http_client(a) as on_a,
            open_http_client(b) as on_b,
            on_a.listen(tools=True, resource_uris=["counter://value"]) as heard_on_a,
            on_b.listen(tools=True, resource_uris=["counter://value"]) as heard_on_b,
        ):
            # Raised on A, then on B, then on A: every listener hears all three, in the one
            # order Redis received them (a worker writes a change to Redis just after the
            # call that raised it answers, so B's may land after A's second: the fleet
            # promises one order for every listener, not the order the calls answered in).
            assert await on_a.call_tool("touch")
            assert await on_b.call_tool("grow")
            assert await on_a.call_tool("touch")
            updated, tools = Change("updated", "counter://value"), Change("tools")
            with trio.fail_after(10):
                seen = [
                    [await heard.__anext__() for _ in range(3)]
                    for heard in (heard_on_a, heard_on_b)
                ]
            assert seen[0] == seen[1]
            assert sorted(seen[0], key=repr) == sorted([updated, tools, updated], key=repr)
            # Once each: the next change each hears is the next one raised.
            assert await on_b.call_tool("touch")
            with trio.fail_after(10):
                assert await heard_on_a.__anext__() == updated
                assert await heard_on_b.__anext__() == updated


def round_trip(first: str, second: str) -> httpx.Response:
    """Ask ``confirm`` on ``first``; answer its input round on ``second``."""
    params = {"name": "confirm", "arguments": {}}
    body = modern_body(1, "tools/call", params)
    body["params"]["_meta"] = meta(elicitation={"form": {}})
    asked = httpx.post(first, json=body, headers=modern_headers("tools/call", "confirm"))
    result = asked.json()["result"]
    assert result["resultType"] == "input_required", result
    body = modern_body(2, "tools/call", params)
    body["params"]["_meta"] = meta(elicitation={"form": {}})
    body["params"]["requestState"] = result["requestState"]
    body["params"]["inputResponses"] = {
        key: {"action": "accept", "content": {"ok": True}} for key in result["inputRequests"]
    }
    return httpx.post(second, json=body, headers=modern_headers("tools/call", "confirm"))


def finished(answer: httpx.Response) -> bool:
    result = answer.json().get("result")
    return result is not None and result["content"][0]["text"] == "confirmed: True"


async def test_an_input_round_asked_by_one_worker_is_finished_by_another(
    redis: RedisProcess,
) -> None:
    with workers(redis.url) as (a, b):
        assert finished(await trio.to_thread.run_sync(round_trip, a, b))
        assert finished(await trio.to_thread.run_sync(round_trip, b, a))
    # Without the shared state, each worker seals with a key of its own: refused.
    with workers("-") as (a, b):
        refused = await trio.to_thread.run_sync(round_trip, a, b)
        assert refused.json()["error"]["code"] == -32602, refused.text


async def test_the_key_rotates_under_rounds_in_flight(redis: RedisProcess) -> None:
    """With key_refresh 0.2 s: a round sealed before the rotation finishes after it, on
    the other worker; after the new key took over, rounds still cross."""
    params = {"name": "confirm", "arguments": {}}
    with workers(redis.url, key_refresh=0.2) as (a, b):
        body = modern_body(1, "tools/call", params)
        body["params"]["_meta"] = meta(elicitation={"form": {}})
        asked = httpx.post(a, json=body, headers=modern_headers("tools/call", "confirm"))
        before = asked.json()["result"]
        await rotate_request_state_key(RedisState(url=redis.url))
        await trio.sleep(1.5)  # real workers: past twice key_refresh, the new key seals
        body = modern_body(2, "tools/call", params)
        body["params"]["_meta"] = meta(elicitation={"form": {}})
        body["params"]["requestState"] = before["requestState"]
        body["params"]["inputResponses"] = {
            key: {"action": "accept", "content": {"ok": True}} for key in before["inputRequests"]
        }
        late = httpx.post(b, json=body, headers=modern_headers("tools/call", "confirm"))
        assert finished(late), late.text
        assert finished(await trio.to_thread.run_sync(round_trip, b, a))
        # A tampered state is still refused.
        body["params"]["requestState"] = before["requestState"][:-4] + "AAAA"
        tampered = httpx.post(b, json=body, headers=modern_headers("tools/call", "confirm"))
        assert tampered.json()["error"]["code"] == -32602


async def eventually(check: Callable[[], Any], limit: float = 15) -> None:
    with trio.fail_after(limit):
        while not await check():
            await trio.sleep(0.1)


async def test_redis_stopped_and_started_mid_stream(redis: RedisProcess) -> None:
    with workers(redis.url) as (a, b):
        async with (
            open_http_client(a) as on_a,
            open_http_client(b) as on_b,
            on_a.listen(resource_uris=["counter://value"]) as heard_on_a,
            on_b.listen(resource_uris=["counter://value"]) as heard_on_b,
        ):
            updated = Change("updated", "counter://value")
            redis.stop()
            # Each worker serves on; its own listeners hear its own changes.
            assert await on_a.call_tool("touch")
            with trio.fail_after(10):
                assert await heard_on_a.__anext__() == updated
            redis.start()

            # Back by itself: a change on A reaches B again (the reader reconnects).
            async def crossed() -> bool:
                await on_a.call_tool("touch")
                with trio.move_on_after(0.5):
                    await heard_on_b.__anext__()
                    return True
                return False

            await eventually(crossed)
            # And input rounds cross again (the keys were kept through the outage).
            assert finished(await trio.to_thread.run_sync(round_trip, a, b))
            del heard_on_a


async def test_the_everything_server_runs_as_a_fleet_member(redis: RedisProcess) -> None:
    """``examples/everything_server.py --http 0 --redis URL``, twice: a tool added on one
    (``toggle_bonus_tool``) is heard by a listener of the other."""
    example = HERE.parent / "examples" / "everything_server.py"
    processes = [
        subprocess.Popen(
            [sys.executable, str(example), "--http", "0", "--redis", redis.url],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        urls = []
        for process in processes:
            assert process.stderr is not None
            line = process.stderr.readline()
            assert line.startswith("everything server on "), line
            urls.append(line.split()[-1])
        async with (
            open_http_client(urls[0]) as first,
            open_http_client(urls[1]) as second,
            second.listen(tools=True) as heard,
        ):
            await first.call_tool("toggle_bonus_tool")
            with trio.fail_after(10):
                assert await heard.__anext__() == Change("tools")
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


def test_a_redis_state_is_parsed_strictly() -> None:
    assert RedisState(url="redis://127.0.0.1:6379/0").key_refresh == 10.0
    with pytest.raises(ValueError, match="not a Redis URL"):
        RedisState(url="http://127.0.0.1:6379")
    with pytest.raises(TypeError, match="changes_kept must be int, not float"):
        RedisState(url="redis://h/0", changes_kept=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="relay_queue must be int, not bool"):
        RedisState(url="redis://h/0", relay_queue=True)
    with pytest.raises(TypeError, match="prefix must be str"):
        RedisState(url="redis://h/0", prefix=b"x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="key_refresh must be more than 0"):
        RedisState(url="redis://h/0", key_refresh=0)
