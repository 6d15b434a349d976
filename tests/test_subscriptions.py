"""Change notifications: legacy list changes and ``resources/subscribe``; modern
``subscriptions/listen`` streams (acknowledged first, tagged, only what was asked, ended
gracefully by ``Server.shutdown()`` or by the client leaving its block)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from feature_harness import ERAS, LEGACY, MODERN, open_pair

from trio_mcp import McpError, Server, jsonrpc as rpc
from trio_mcp.client import Change

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


def make_server(**options: Any) -> Server:
    server = Server("s", **options)
    server.add_tool(lambda: "a", name="a")

    @server.prompt()
    def p() -> str:
        return "p"

    @server.resource("mem://watched")
    def watched() -> str:
        return "w"

    return server


async def next_change(listener: Any) -> Change:
    with trio.fail_after(5):
        return await listener.__anext__()  # type: ignore[no-any-return]


async def test_changes_reach_a_listener_that_asked(version: str, autojump_clock: Any) -> None:
    server = make_server()
    async with (
        open_pair(server, protocol_version=version) as pair,
        pair.client.listen(tools=True, resources=True) as changes,
    ):
        server.add_tool(lambda: "b", name="b")
        assert await next_change(changes) == Change("tools")
        server.remove_resource("mem://watched")
        assert await next_change(changes) == Change("resources")
        server.notify_list_changed("tools")
        assert await next_change(changes) == Change("tools")
        server.remove_tool("b")
        assert await next_change(changes) == Change("tools")


async def test_legacy_sessions_get_list_changes_unasked(autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version="2025-11-25") as pair:
        await pair.client.list_tools()
        server.add_tool(lambda: "b", name="b")
        server.remove_prompt("p")
        server.remove_resource("mem://watched")
        await trio.sleep(1)
        await pair.client.list_tools()
        methods = [n.method for n in pair.server_sent.notifications()]
    assert methods == [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ]


async def test_modern_connections_get_nothing_unasked(autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=MODERN) as pair:
        await pair.client.list_tools()
        server.add_tool(lambda: "b", name="b")
        server.notify_resource_updated("mem://watched")
        await trio.sleep(1)
        await pair.client.list_tools()
    assert pair.server_sent.notifications() == []


async def test_modern_listen_acknowledges_first_and_tags_everything(autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=MODERN) as pair:
        async with pair.client.listen(tools=True, resource_uris=["mem://watched"]) as changes:
            server.add_tool(lambda: "b", name="b")
            server.add_prompt(server._prompts["p"])  # a prompts change: not asked for
            server.notify_resource_updated("mem://other")  # not asked for
            server.notify_resource_updated("mem://watched")
            assert await next_change(changes) == Change("tools")
            assert await next_change(changes) == Change("updated", "mem://watched")
        (listen,) = pair.client_sent.requests("subscriptions/listen")
        sent = pair.server_sent.notifications()
    assert listen.params is not None
    assert listen.params["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["mem://watched"],
    }
    assert [n.method for n in sent] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ]
    assert all(n.params["_meta"][SUBSCRIPTION_ID] == listen.id for n in sent)  # type: ignore[index]
    assert all(pair.server_sent.related_to(n) == listen.id for n in sent)
    assert sent[0].params["notifications"] == {  # type: ignore[index]
        "toolsListChanged": True,
        "resourceSubscriptions": ["mem://watched"],
    }
    assert sent[2].params["uri"] == "mem://watched"  # type: ignore[index]
    assert changes.acknowledged is not None
    assert changes.acknowledged.tools_list_changed is True


async def test_a_change_while_acknowledging_is_not_lost(autojump_clock: Any) -> None:
    server = make_server()

    def change_during_ack(message: rpc.Message) -> None:
        if isinstance(message, rpc.JsonRpcNotification) and "acknowledged" in message.method:
            server.add_tool(lambda: "b", name="b")

    async with open_pair(server, protocol_version=MODERN) as pair:
        pair.server_sent.on_send = change_during_ack
        async with pair.client.listen(tools=True) as changes:
            assert await next_change(changes) == Change("tools")


async def test_acknowledgement_omits_what_the_server_cannot_send(autojump_clock: Any) -> None:
    server = Server("tools-only")
    server.add_tool(lambda: "a", name="a")
    async with (
        open_pair(server, protocol_version=MODERN) as pair,
        pair.client.listen(tools=True, prompts=True, resource_uris=["mem://x"]) as changes,
    ):
        assert changes.acknowledged is not None
        assert changes.acknowledged.tools_list_changed is True
        assert changes.acknowledged.prompts_list_changed is None
        assert changes.acknowledged.resource_subscriptions is None


async def test_concurrent_subscriptions_are_demultiplexed(autojump_clock: Any) -> None:
    server = make_server()
    async with (
        open_pair(server, protocol_version=MODERN) as pair,
        pair.client.listen(tools=True) as tools,
        pair.client.listen(prompts=True) as prompts,
    ):
        server.remove_prompt("p")
        server.add_tool(lambda: "b", name="b")
        assert await next_change(tools) == Change("tools")
        assert await next_change(prompts) == Change("prompts")
        with trio.move_on_after(1):
            extra = await tools.__anext__()
            raise AssertionError(f"unexpected {extra}")


async def test_leaving_the_block_cancels_the_subscription(autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=MODERN) as pair:
        async with pair.client.listen(tools=True):
            assert server._hub.count == 2  # this listener and the connection's own
        (listen,) = pair.client_sent.requests("subscriptions/listen")
        (cancel,) = pair.client_sent.notifications("notifications/cancelled")
        await pair.client.list_tools()
        await trio.sleep(1)
        assert cancel.params is not None
        assert cancel.params["requestId"] == listen.id
        assert pair.server_sent.responses_to(listen.id) == []
        assert server._hub.count == 1
        server.add_tool(lambda: "b", name="b")
        await trio.sleep(1)
        assert [n.method for n in pair.server_sent.notifications()] == [
            "notifications/subscriptions/acknowledged"
        ]


async def test_server_shutdown_ends_subscriptions_gracefully(autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=MODERN) as pair:
        async with pair.client.listen(tools=True) as changes:
            server.add_tool(lambda: "b", name="b")
            server.shutdown()
            received = [change async for change in changes]
            assert changes.ended
            assert changes.error is None
        (listen,) = pair.client_sent.requests("subscriptions/listen")
        (response,) = pair.server_sent.responses_to(listen.id)
        assert pair.client_sent.notifications("notifications/cancelled") == []
    assert received == [Change("tools")]  # the change before the end is not lost
    assert isinstance(response, rpc.ResultResponse)
    assert response.result["resultType"] == "complete"
    assert response.result["_meta"][SUBSCRIPTION_ID] == listen.id


async def test_listening_after_shutdown_ends_at_once(autojump_clock: Any) -> None:
    server = make_server()
    server.shutdown()
    async with (
        open_pair(server, protocol_version=MODERN) as pair,
        pair.client.listen(tools=True) as changes,
    ):
        assert [c async for c in changes] == []
        assert changes.ended


async def test_a_refused_subscription_raises_on_entry(autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=MODERN) as pair:
        # The server refuses a malformed filter (-32602): entering raises that error.
        with pytest.raises(McpError):
            async with pair.client.listen(resource_uris=[42]):  # type: ignore[list-item]
                raise AssertionError("entered a refused subscription")


async def test_an_error_in_the_block_is_not_wrapped(version: str, autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=version) as pair:
        with pytest.raises(KeyError):
            async with pair.client.listen(tools=True):
                raise KeyError("mine")


@pytest.mark.parametrize("legacy", LEGACY[:2])
async def test_legacy_resource_subscriptions(legacy: str, autojump_clock: Any) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=legacy) as pair:
        async with pair.client.listen(resource_uris=["mem://watched"]) as changes:
            server.notify_resource_updated("mem://other")
            server.notify_resource_updated("mem://watched")
            assert await next_change(changes) == Change("updated", "mem://watched")
        server.notify_resource_updated("mem://watched")  # after resources/unsubscribe
        await trio.sleep(1)
        await pair.client.list_tools()
        requests = [r.method for r in pair.client_sent.requests()]
        updates = pair.server_sent.notifications("notifications/resources/updated")
    assert "resources/subscribe" in requests
    assert "resources/unsubscribe" in requests
    assert [u.params for u in updates] == [{"uri": "mem://watched"}]


async def test_subscribing_needs_the_capability(version: str) -> None:
    server = Server("no-resources", tools=True)
    async with open_pair(server, protocol_version=version) as pair:
        if version == MODERN:
            async with pair.client.listen(resource_uris=["mem://x"]) as changes:
                assert changes.acknowledged is not None
                assert changes.acknowledged.resource_subscriptions is None
        else:
            with pytest.raises(McpError):
                async with pair.client.listen(resource_uris=["mem://x"]):
                    pass
