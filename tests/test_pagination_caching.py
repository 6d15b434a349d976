"""Pagination with opaque cursors on every list, and the client's cache of modern results
(``ttlMs``), driven by the Trio clock: fresh hits, expiry, invalidation, opt-out."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
import pytest
import trio
from feature_harness import ERAS, MODERN, open_pair, open_raw

from trio_mcp import Client, Context, ErrorCode, McpError, ProtocolError, Server, connect_client
from trio_mcp.protocol import Connection
from trio_mcp.session import Session, connect_session
from trio_mcp.transports import memory_stream_pair
from trio_mcp.types import (
    ElicitResult,
    Implementation,
    ServerCapabilities,
    ToolsCapability,
)

LISTS = [
    ("tools/list", "tools"),
    ("prompts/list", "prompts"),
    ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates"),
]


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


def text(value: str) -> Any:
    def render() -> str:
        return value

    return render


def make_server(count: int = 5, **options: Any) -> Server:
    server = Server("pages", **options)
    for i in range(count):
        server.add_tool(text(str(i)), name=f"tool{i}")
        server.prompt(name=f"prompt{i}")(text(str(i)))
        server.resource(f"mem://r{i}")(text(str(i)))
        server.resource(f"mem://t{i}/{{x}}", name=f"t{i}")(lambda x: x)
    return server


# -- pagination ------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "field"), LISTS)
async def test_every_list_is_paginated(version: str, method: str, field: str) -> None:
    async with open_raw(make_server(page_size=2), version) as raw:
        pages: list[list[Any]] = []
        cursors: list[str] = []
        cursor = None
        while True:
            result = await raw.session.send_request(
                method, {"cursor": cursor} if cursor is not None else None, model=dict
            )
            pages.append(result[field])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            cursors.append(cursor)
    assert [len(page) for page in pages] == [2, 2, 1]
    assert len(set(cursors)) == 2
    assert all(isinstance(c, str) and c for c in cursors)


async def test_the_client_follows_every_page_in_order(version: str) -> None:
    async with open_pair(make_server(page_size=2), protocol_version=version) as pair:
        tools = [t.name for t in await pair.client.list_tools()]
        prompts = [p.name for p in await pair.client.list_prompts()]
        resources = [r.uri for r in await pair.client.list_resources()]
        templates = [t.name for t in await pair.client.list_resource_templates()]
        requests = len(pair.client_sent.requests("tools/list"))
    assert tools == [f"tool{i}" for i in range(5)]
    assert prompts == [f"prompt{i}" for i in range(5)]
    assert resources == [f"mem://r{i}" for i in range(5)]
    assert templates == [f"t{i}" for i in range(5)]
    assert requests == 3


def other_list_cursor() -> str:
    raw = orjson.dumps({"k": "prompts", "o": 2})
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.parametrize(("method", "field"), LISTS)
@pytest.mark.parametrize(
    "cursor",
    ["garbage", "", "!!!", base64.b64encode(b"[1,2]").decode(), "eyJrIjoidG9vbHMiLCJvIjotMX0"],
)
async def test_garbage_cursors_are_invalid_params(
    version: str, method: str, field: str, cursor: str
) -> None:
    async with open_raw(make_server(page_size=2), version) as raw:
        with pytest.raises(McpError) as info:
            await raw.session.send_request(method, {"cursor": cursor}, model=dict)
        assert (await raw.session.send_request(method, None, model=dict))[field]
    assert info.value.code == ErrorCode.INVALID_PARAMS


async def test_a_cursor_of_another_list_is_invalid_params(version: str) -> None:
    async with open_raw(make_server(page_size=2), version) as raw:
        with pytest.raises(McpError) as info:
            await raw.session.send_request("tools/list", {"cursor": other_list_cursor()})
    assert info.value.code == ErrorCode.INVALID_PARAMS


async def test_a_cursor_past_the_end_gives_an_empty_last_page(version: str) -> None:
    server = make_server(page_size=2)
    async with open_raw(server, version) as raw:
        first = await raw.session.send_request("tools/list", None, model=dict)
        second = await raw.session.send_request(
            "tools/list", {"cursor": first["nextCursor"]}, model=dict
        )
        for name in list(server._tools)[1:]:
            server.remove_tool(name)
        third = await raw.session.send_request(
            "tools/list", {"cursor": second["nextCursor"]}, model=dict
        )
    assert third["tools"] == []
    assert "nextCursor" not in third


@asynccontextmanager
async def scripted_server(
    pages: dict[str | None, dict[str, Any]], version: str = "2025-11-25"
) -> AsyncIterator[Client]:
    """A client talking to a fake server that answers ``tools/list`` from ``pages`` (keyed
    by cursor)."""

    async def handler(session: Session, request: Any) -> Any:
        cursor = request.params.cursor if request.params is not None else None
        return pages[cursor]

    client_stream, server_stream = memory_stream_pair()
    connection = Connection(
        "server",
        info=Implementation(name="fake", version="0"),
        capabilities=ServerCapabilities(tools=ToolsCapability()),
    )
    async with trio.open_nursery() as nursery:
        server = await connect_session(nursery, server_stream, connection, handler=handler)
        client = await connect_client(nursery, client_stream, protocol_version=version)
        try:
            yield client
        finally:
            await client.aclose()
            await server.aclose()


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}}


async def test_an_empty_cursor_is_not_the_end(version: str) -> None:
    hints = {"ttlMs": 60_000, "cacheScope": "public"} if version == MODERN else {}
    pages = {
        None: {"tools": [tool("a")], "nextCursor": "", **hints},
        "": {"tools": [tool("b")], "nextCursor": "z", **hints},
        "z": {"tools": [tool("c")], **hints},
    }
    async with scripted_server(pages, version) as client:
        assert [t.name for t in await client.list_tools()] == ["a", "b", "c"]


async def test_a_repeated_cursor_is_a_protocol_error() -> None:
    pages = {None: {"tools": [tool("a")], "nextCursor": "x"}, "x": {"tools": [], "nextCursor": "x"}}
    async with scripted_server(pages) as client:
        with pytest.raises(ProtocolError, match="repeated cursor"):
            await client.list_tools()


class EndlessPages(dict[str | None, dict[str, Any]]):
    """A server's pages whose cursors never end: each page names a new one."""

    def __init__(self, per_page: int) -> None:
        super().__init__()
        self.per_page = per_page
        self.served = 0

    def __missing__(self, cursor: str | None) -> dict[str, Any]:
        self.served += 1
        names = [tool(f"t{self.served}_{i}") for i in range(self.per_page)]
        return {"tools": names, "nextCursor": f"c{self.served}"}


@pytest.mark.parametrize("per_page", [0, 7])
async def test_pages_that_never_end_are_refused_at_max_list_items(per_page: int) -> None:
    pages = EndlessPages(per_page)
    async with scripted_server(pages) as client:
        client.max_list_items = 50
        # (Without the bound this would collect for ever: the deadline makes it a failure.)
        with trio.fail_after(10), pytest.raises(ProtocolError, match="past max_list_items=50"):
            await client.list_tools()
    # Empty pages count one each: 51 of them, or 8 pages of 7 (the 8th passes 50).
    assert pages.served == (51 if per_page == 0 else 8)


async def test_a_list_at_max_list_items_is_whole() -> None:
    pages = {None: {"tools": [tool(f"a{i}") for i in range(30)], "nextCursor": "x"}}
    pages["x"] = {"tools": [tool(f"b{i}") for i in range(20)]}
    async with scripted_server(pages) as client:
        assert client.max_list_items == 100_000
        client.max_list_items = 50
        assert len(await client.list_tools()) == 50


# -- caching ---------------------------------------------------------------------------------


async def test_modern_results_carry_cache_hints_legacy_ones_do_not(version: str) -> None:
    server = make_server(cache_ttl_ms=30_000, cache_scope="private")
    async with open_raw(server, version) as raw:
        tools = await raw.session.send_request("tools/list", None, model=dict)
        read = await raw.session.send_request("resources/read", {"uri": "mem://r1"}, model=dict)
        if version == MODERN:
            discover = await raw.session.send_request("server/discover", None, model=dict)
    for result in (tools, read):
        if version == MODERN:
            assert (result["ttlMs"], result["cacheScope"]) == (30_000, "private")
        else:
            assert "ttlMs" not in result
            assert "cacheScope" not in result
    if version == MODERN:
        assert (discover["ttlMs"], discover["cacheScope"]) == (30_000, "private")


async def test_fresh_results_come_from_the_cache(autojump_clock: Any) -> None:
    server = make_server(page_size=2, cache_ttl_ms=60_000)
    async with open_pair(server, protocol_version=MODERN) as pair:
        first = await pair.client.list_tools()
        await trio.sleep(59)
        second = await pair.client.list_tools()
        assert len(pair.client_sent.requests("tools/list")) == 3  # three pages, once
        await trio.sleep(2)
        third = await pair.client.list_tools()
        assert len(pair.client_sent.requests("tools/list")) == 6  # stale: fetched again
        await pair.client.read_resource("mem://r1")
        await pair.client.read_resource("mem://r1")
        await pair.client.read_resource("mem://r2")
        assert len(pair.client_sent.requests("resources/read")) == 2
    assert first == second == third
    assert pair.client.cache is not None
    assert pair.client.cache.hits >= 4


async def test_a_list_change_invalidates_the_cache(autojump_clock: Any) -> None:
    server = make_server(cache_ttl_ms=60_000)
    async with (
        open_pair(server, protocol_version=MODERN) as pair,
        pair.client.listen(tools=True, resource_uris=["mem://r1"]) as changes,
    ):
        assert len(await pair.client.list_tools()) == 5
        await pair.client.read_resource("mem://r1")
        server.add_tool(lambda: "x", name="new")
        server.notify_resource_updated("mem://r1")
        await changes.__anext__()
        await changes.__anext__()
        assert len(await pair.client.list_tools()) == 6
        await pair.client.read_resource("mem://r1")
        assert len(pair.client_sent.requests("tools/list")) == 2
        assert len(pair.client_sent.requests("resources/read")) == 2


@pytest.mark.parametrize("options", [{"cache": False}, {"protocol_version": "2025-11-25"}])
async def test_no_cache_without_it(options: dict[str, Any], autojump_clock: Any) -> None:
    server = make_server(cache_ttl_ms=60_000)
    options = {"protocol_version": MODERN, **options}
    async with open_pair(server, **options) as pair:
        await pair.client.list_tools()
        await pair.client.list_tools()
        await pair.client.read_resource("mem://r1")
        await pair.client.read_resource("mem://r1")
        assert len(pair.client_sent.requests("tools/list")) == 2
        assert len(pair.client_sent.requests("resources/read")) == 2


async def test_a_zero_ttl_is_never_cached(autojump_clock: Any) -> None:
    async with open_pair(make_server(cache_ttl_ms=0), protocol_version=MODERN) as pair:
        await pair.client.list_tools()
        await pair.client.list_tools()
        assert len(pair.client_sent.requests("tools/list")) == 2


async def test_results_that_took_input_are_not_cached(autojump_clock: Any) -> None:
    server = Server("asks", cache_ttl_ms=60_000)

    @server.resource("mem://secret")
    async def secret(ctx: Context) -> str:
        answer = await ctx.elicit("Password?", {"properties": {"pw": {"type": "string"}}})
        return "opened" if answer.action == "accept" else "closed"

    async def elicitation(params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"pw": "x"})

    async with open_pair(server, protocol_version=MODERN, elicitation=elicitation) as pair:
        await pair.client.read_resource("mem://secret")
        await pair.client.read_resource("mem://secret")
        assert len(pair.client_sent.requests("resources/read")) == 4  # two rounds, twice


async def test_a_refused_cursor_discards_the_cached_pages(autojump_clock: Any) -> None:
    server = make_server(page_size=2, cache_ttl_ms=60_000)
    async with open_pair(server, protocol_version=MODERN) as pair:
        first = await pair.client.list_tools_page()
        assert first.next_cursor is not None
        with pytest.raises(McpError):
            await pair.client.list_tools_page("bogus")
        await pair.client.list_tools_page()
        assert len(pair.client_sent.requests("tools/list")) == 3


async def test_pages_are_cached_by_cursor(autojump_clock: Any) -> None:
    server = make_server(page_size=2, cache_ttl_ms=60_000)
    async with open_pair(server, protocol_version=MODERN) as pair:
        first = await pair.client.list_tools_page()
        assert first.next_cursor is not None
        second = await pair.client.list_tools_page(first.next_cursor)
        assert [t.name for t in second.tools] == ["tool2", "tool3"]
        assert await pair.client.list_tools_page() == first
        assert await pair.client.list_tools_page(first.next_cursor) == second
        assert len(pair.client_sent.requests("tools/list")) == 2


def test_negative_ttls_and_empty_pages_are_refused() -> None:
    with pytest.raises(ValueError, match="ttl_ms"):
        Server("s", cache_ttl_ms=-1)
    with pytest.raises(ValueError, match="ttl_ms"):
        Server("s").resource("mem://x", ttl_ms=-5)
    with pytest.raises(ValueError, match="page_size"):
        Server("s", page_size=0)
