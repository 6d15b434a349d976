"""The client's result cache never keeps an answer that a change notification overtook.

The race: the server builds a list, then the list changes and the server says so; the
notification reaches the client (and empties the cache) before the answer, which was
then cached, so the next call served the old list until ``ttlMs`` ran out. The server's
list handler here waits, after building its answer, until the client has seen the
change: the order is forced, not hoped for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio

from trio_mcp import Context, Server
from trio_mcp._client._cache import ResultCache
from trio_mcp._server._dispatch import Dispatcher
from trio_mcp.testing import connect

Handler = Callable[[Dispatcher, Context, Any], Awaitable[Any]]


def hold_first_answer(monkeypatch: pytest.MonkeyPatch, name: str) -> tuple[trio.Event, trio.Event]:
    """Make the first call of ``Dispatcher.<name>`` build its answer, set the first event,
    then wait for the second before answering."""
    original: Handler = getattr(Dispatcher, name)
    built, release = trio.Event(), trio.Event()

    async def held(self: Dispatcher, ctx: Context, params: Any) -> Any:
        answer = await original(self, ctx, params)
        if not built.is_set():
            built.set()
            await release.wait()
        return answer

    monkeypatch.setattr(Dispatcher, name, held)
    return built, release


def server_with_tool() -> Server:
    server = Server("cached", cache_ttl_ms=60_000)

    @server.tool()
    async def first() -> str:
        return "1"

    return server


async def test_a_list_answer_overtaken_by_list_changed_is_not_cached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built, release = hold_first_answer(monkeypatch, "_list_tools")
    server = server_with_tool()

    async def second() -> str:
        return "2"

    async with (
        connect(server, protocol_version="2026-07-28") as client,
        client.listen(tools=True) as changes,
    ):
        listed: list[str] = []

        async def list_tools() -> None:
            listed.extend(tool.name for tool in await client.list_tools())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(list_tools)
            await built.wait()  # the answer says [first]
            server.add_tool(second)
            with trio.fail_after(5):
                change = await changes.__anext__()  # the client emptied its cache
            assert change.kind == "tools"
            release.set()
        assert listed == ["first"]  # that call's answer: it was sent before the change
        # The next call asks again: the answer above was not cached.
        assert [tool.name for tool in await client.list_tools()] == ["first", "second"]
        # Answers that nothing overtook are cached as before.
        hits = client.cache.hits if client.cache is not None else 0
        await client.list_tools()
        assert client.cache is not None
        assert client.cache.hits == hits + 1


async def test_a_read_overtaken_by_resource_updated_is_not_cached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built, release = hold_first_answer(monkeypatch, "_read_resource")
    server = server_with_tool()
    content = {"text": "old"}

    async def doc() -> str:
        return content["text"]

    server.resource("test://doc")(doc)
    async with (
        connect(server, protocol_version="2026-07-28") as client,
        client.listen(resource_uris=["test://doc"]) as changes,
    ):
        texts: list[str] = []

        async def read() -> None:
            result = await client.read_resource("test://doc")
            texts.append(result.contents[0].text)  # type: ignore[union-attr]

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            await built.wait()
            content["text"] = "new"
            server.notify_resource_updated("test://doc")
            with trio.fail_after(5):
                change = await changes.__anext__()
            assert change.kind == "updated"
            release.set()
        assert texts == ["old"]
        again = await client.read_resource("test://doc")
        assert again.contents[0].text == "new"  # type: ignore[union-attr]


class Page:
    ttl_ms = 60_000


async def test_put_refuses_an_answer_older_than_an_invalidation() -> None:
    cache = ResultCache()
    before = cache.generation("tools/list")
    cache.invalidate_list("tools")
    cache.put("tools/list", "", Page(), generation=before)
    assert cache.get("tools/list", "") is None
    # Another method's invalidation does not matter ...
    now = cache.generation("tools/list")
    cache.invalidate_list("prompts")
    cache.invalidate_resource("test://x")
    cache.put("tools/list", "", page := Page(), generation=now)
    assert cache.get("tools/list", "") is page
    # ... but clearing everything does.
    now = cache.generation("prompts/list")
    cache.clear()
    cache.put("prompts/list", "", Page(), generation=now)
    assert cache.get("prompts/list", "") is None
