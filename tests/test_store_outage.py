"""A legacy session whose event store fails (a fleet's Redis restarted, say) goes on: a
streamed answer still reaches its client, its events without ids (nothing kept them); a
resumption meanwhile gets 503 with Retry-After; deleting the session still ends it; once
the store answers, events have ids again."""

from __future__ import annotations

from typing import Any

from http_support import ACCEPT, initialize, parse_sse
from test_http_legacy import in_memory

from trio_mcp import Context, Server
from trio_mcp.http import MemoryEventStore, Replay, open_asgi_app


class FlakyEventStore(MemoryEventStore):
    """A memory store that fails every call while ``down``."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("the store is away")

    async def append(self, stream_id: str, data: bytes, *, session: str = "") -> str:
        self._check()
        return await super().append(stream_id, data, session=session)

    async def replay_after(self, event_id: str) -> Replay | None:
        self._check()
        return await super().replay_after(event_id)

    async def discard(self, stream_id: str) -> None:
        self._check()
        await super().discard(stream_id)

    async def discard_session(self, session: str) -> None:
        self._check()
        await super().discard_session(session)


def counting_server() -> Server:
    server = Server("counting")

    @server.tool
    async def count(ctx: Context, upto: int) -> str:
        for n in range(1, upto + 1):
            await ctx.report_progress(n, upto)
        return f"counted to {upto}"

    return server


async def test_a_session_goes_on_while_its_event_store_fails(autojump_clock: Any) -> None:
    store = FlakyEventStore()
    async with open_asgi_app(counting_server(), event_store=store) as app, in_memory(app) as client:
        headers = await initialize(client, "/mcp")
        counting = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "count", "arguments": {"upto": 3}, "_meta": {"progressToken": 1}},
        }
        store.down = True
        answer = await client.post("/mcp", json=counting, headers=headers)
        assert answer.status_code == 200
        events = parse_sse(answer.text)
        assert [e.id for e in events] == [None] * 4  # 3 progress, the answer: no ids
        assert '"counted to 3"' in events[-1].data
        resume = {**headers, "accept": ACCEPT, "last-event-id": "abc/1"}
        refused = await client.get("/mcp", headers=resume)
        assert refused.status_code == 503
        assert int(refused.headers["retry-after"]) > 0
        assert refused.json()["error"]["code"] == -32603

        store.down = False
        again = await client.post("/mcp", json={**counting, "id": 2}, headers=headers)
        assert all(e.id for e in parse_sse(again.text))  # the priming event first

        store.down = True
        deleted = await client.delete("/mcp", headers=headers)
        assert deleted.status_code == 200
        assert app.manager is not None and app.manager.sessions == {}
