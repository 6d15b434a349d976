"""``Server(tool_rate_limit=...)``: the spec's "servers MUST rate limit tool invocations"
(server/tools, Security Considerations), a token bucket per caller on the Trio clock."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio

from trio_mcp import Server
from trio_mcp.server import RateLimit
from trio_mcp.testing import connect

VERSIONS = ["2025-11-25", "2026-07-28"]


def limited_server(calls: int = 2, per: float = 10.0) -> tuple[Server, list[str]]:
    server = Server("limited", tool_rate_limit=RateLimit(calls=calls, per=per))
    ran: list[str] = []

    @server.tool()
    async def work(text: str = "") -> str:
        ran.append(text)
        return f"did {text}"

    @server.tool()
    def inline(text: str = "") -> str:  # a plain def: answered without a task unlimited
        ran.append(text)
        return f"did {text}"

    return server, ran


def refused(result: Any) -> bool:
    return bool(result.is_error) and "Rate limit exceeded" in result.content[0].text


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("tool", ["work", "inline"])
async def test_calls_over_the_limit_get_an_error_result_and_do_not_run(
    version: str, tool: str, autojump_clock: trio.abc.Clock
) -> None:
    server, ran = limited_server(calls=2, per=10.0)
    async with connect(server, protocol_version=version) as client:
        assert not (await client.call_tool(tool, {"text": "1"})).is_error
        assert not (await client.call_tool(tool, {"text": "2"})).is_error
        third = await client.call_tool(tool, {"text": "3"})
        assert refused(third)
        assert "at most 2 tool calls per 10 s" in third.content[0].text  # type: ignore[union-attr]
        assert "Try again in 5 s" in third.content[0].text  # type: ignore[union-attr]
        assert ran == ["1", "2"]
        # Other requests are not limited.
        assert {t.name for t in await client.list_tools()} == {"work", "inline"}
        # One token comes back every per / calls = 5 seconds.
        await trio.sleep(4.9)
        assert refused(await client.call_tool(tool, {"text": "4"}))
        await trio.sleep(0.2)
        assert not (await client.call_tool(tool, {"text": "5"})).is_error
        assert refused(await client.call_tool(tool, {"text": "6"}))
        # An idle caller may burst up to `calls` again, never more.
        await trio.sleep(60)
        results = [await client.call_tool(tool, {"text": str(n)}) for n in (7, 8, 9)]
        assert [refused(r) for r in results] == [False, False, True]
    assert ran == ["1", "2", "5", "7", "8"]


async def test_each_connection_has_its_own_bucket(autojump_clock: trio.abc.Clock) -> None:
    server, _ = limited_server(calls=1, per=10.0)
    async with (
        connect(server, protocol_version="2025-11-25") as first,
        connect(server, protocol_version="2026-07-28") as second,
    ):
        assert not (await first.call_tool("work")).is_error
        assert refused(await first.call_tool("work"))
        assert not (await second.call_tool("work")).is_error
        assert refused(await second.call_tool("work"))


async def test_unknown_tools_count_too(autojump_clock: trio.abc.Clock) -> None:
    server, ran = limited_server(calls=1, per=10.0)
    async with connect(server, protocol_version="2025-11-25") as client:
        from trio_mcp import McpError

        with pytest.raises(McpError):
            await client.call_tool("nope")
        assert refused(await client.call_tool("work"))
    assert ran == []


async def test_without_a_limit_nothing_is_refused(autojump_clock: trio.abc.Clock) -> None:
    server = Server("free")

    @server.tool()
    def inline() -> str:
        return "ok"

    async with connect(server, protocol_version="2026-07-28") as client:
        for _ in range(200):
            assert not (await client.call_tool("inline")).is_error


def modern_call(id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {
            "name": "work",
            "arguments": {"text": str(id)},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            },
        },
    }


async def test_stateless_http_limits_each_principal_and_shares_one_bucket_for_the_rest(
    autojump_clock: trio.abc.Clock,
) -> None:
    from trio_mcp.http import asgi_app

    server, _ = limited_server(calls=1, per=10.0)

    def user_of(scope: dict[str, Any]) -> str | None:
        return dict(scope["headers"]).get(b"x-user", b"").decode() or None

    app = asgi_app(server, principal=user_of)
    transport = httpx.ASGITransport(app=app)
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "work",
    }
    ids = iter(range(1, 100))

    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:

        async def call(user: str | None) -> bool:
            extra = {"x-user": user} if user is not None else {}
            response = await http.post("/mcp", json=modern_call(next(ids)), headers=headers | extra)
            result = response.json()["result"]
            assert result["resultType"] == "complete"
            if result.get("isError"):
                assert "Rate limit exceeded" in result["content"][0]["text"]
                return False
            return True

        assert await call("alice")
        assert not await call("alice")
        assert await call("bob")  # a bucket of his own
        assert await call(None)
        assert not await call(None)  # the unnamed callers share one
        await trio.sleep(10)
        assert await call("alice")


@pytest.mark.parametrize(
    ("calls", "per"),
    [(0, 1.0), (-1, 1.0), (1.5, 1.0), (True, 1.0), (1, 0), (1, -2.0), (1, float("inf"))],
)
def test_a_rate_limit_must_make_sense(calls: Any, per: Any) -> None:
    with pytest.raises(ValueError):
        RateLimit(calls=calls, per=per)


def test_tool_rate_limit_takes_a_rate_limit() -> None:
    with pytest.raises(TypeError):
        Server("s", tool_rate_limit=5)  # type: ignore[arg-type]


async def test_full_buckets_are_forgotten(autojump_clock: trio.abc.Clock) -> None:
    """Memory stays bounded by the callers of the last ``per`` seconds or so, not by every
    caller ever seen (stateless HTTP may see many principals)."""
    from trio_mcp._server._rate_limit import RateLimiter

    limiter = RateLimiter(RateLimit(calls=1, per=1.0))
    largest = 0
    for n in range(5000):
        assert limiter.acquire(f"user{n}") == 0.0
        largest = max(largest, len(limiter._buckets))
        await trio.sleep(0.01)  # a hundred callers a second, each once
    assert largest <= 1025
    assert limiter.acquire("user4999") > 0  # the recent ones are still counted
