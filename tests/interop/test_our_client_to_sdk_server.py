"""trio_mcp's :class:`Client` against the official SDK's servers (``MCPServer`` and the
low-level ``Server``), in process over the bytes bridge, at four revisions.

The SDK server decides a connection's era from its first request; our client picks it
with ``protocol_version`` (a handshake revision), or detects it (``None``: a
``server/discover`` probe, which the SDK answers with 2026-07-28).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from trio_mcp import Client, McpError, MissingRequiredClientCapability, open_client
from trio_mcp.client import Change
from trio_mcp.types import (
    BlobResourceContents,
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
    TextResourceContents,
)

from .bridge import Bridge, serve_sdk
from .sdk_everything import SUBSCRIBABLE, Probe, Serve, build_everything, build_lowlevel

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

MODERN = "2026-07-28"
VERSIONS = ["2024-11-05", "2025-06-18", "2025-11-25", MODERN]
LEGACY_VERSIONS = [v for v in VERSIONS if v != MODERN]


@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


@attrs.define
class Answers:
    """Our client's handlers, recording what they were asked; log and progress queues."""

    asked: list[tuple[str, Any]] = attrs.Factory(list)
    logs: list[LoggingMessageNotificationParams] = attrs.Factory(list)

    async def sampling(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        self.asked.append(("sampling", params))
        return CreateMessageResult(
            role="assistant", content=TextContent(text="sampled by trio_mcp"), model="m"
        )

    async def elicitation(
        self, params: ElicitRequestFormParams | ElicitRequestURLParams
    ) -> ElicitResult:
        self.asked.append(("elicitation", params))
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self) -> list[Root]:
        self.asked.append(("roots", None))
        return [Root(uri="file:///src", name="src")]

    def on_log(self, params: LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def options(self) -> dict[str, Any]:
        return {
            "sampling": self.sampling,
            "elicitation": self.elicitation,
            "roots": self.roots,
            "on_log": self.on_log,
        }


@asynccontextmanager
async def connected(
    version: str, serve: Serve, **options: Any
) -> AsyncIterator[tuple[Client, Bridge]]:
    """Our client at ``version`` (modern: detected) talking to an SDK server."""
    async with (
        serve_sdk(serve) as bridge,
        open_client(
            bridge.stream, protocol_version=None if version == MODERN else version, **options
        ) as client,
    ):
        assert client.protocol_version == version
        yield client, bridge


@asynccontextmanager
async def everything(version: str, **options: Any) -> AsyncIterator[tuple[Client, Bridge, Probe]]:
    probe = Probe()
    _, serve = build_everything(probe)
    async with connected(version, serve, **options) as (client, bridge):
        yield client, bridge, probe


def text_of(result: CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


# -- lifecycle, tools -------------------------------------------------------------------------


async def test_our_client_connects_in_each_revision(version: str) -> None:
    async with everything(version) as (client, bridge, _):
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("sdk-everything", "9.9.9")
        assert client.instructions == "the SDK's everything server"
        capabilities = client.server_capabilities
        assert capabilities.tools is not None and capabilities.tools.list_changed
        assert capabilities.resources is not None and capabilities.resources.subscribe
        await client.ping()  # legacy: ping; modern: server/discover
    if version == MODERN:
        (probe, *_) = bridge.wire.requests_from_ours("server/discover")
        assert probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
        assert not bridge.wire.requests_from_ours("initialize")
        assert not bridge.wire.requests_from_ours("ping")  # the SDK answers it -32601 at 2026
    else:
        assert not bridge.wire.requests_from_ours("server/discover")


async def test_tools_and_structured_output(version: str) -> None:
    async with everything(version) as (client, bridge, _):
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert {"add", "fail", "slow", "hang", "greet_user", "touch"} <= set(tools)
        assert tools["add"].output_schema is not None
        # Checked against the outputSchema by our client (validate_output=True).
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"total": 5, "note": "ok"}
        assert json.loads(text_of(added)) == {"total": 5, "note": "ok"}

        failed = await client.call_tool("fail")
        assert failed.is_error
        assert text_of(failed) == "Error executing tool fail"
        unknown = await client.call_tool("nope")  # MCPServer: an error result, not -32602
        assert unknown.is_error
    if version < "2025-06-18":
        # Peer deviation: the SDK sends outputSchema and structuredContent (2025-06-18
        # fields) to a client that negotiated an older revision. We tolerate them.
        assert "outputSchema" in str(bridge.wire.from_sdk)


async def test_structured_output_from_the_lowlevel_server(version: str) -> None:
    _, serve = build_lowlevel()
    async with connected(version, serve) as (client, _):
        (add, ask) = await client.list_tools()
        assert add.output_schema is not None and add.output_schema["required"] == ["total"]
        result = await client.call_tool("add", {"a": 40, "b": 2})
        assert result.structured_content == {"total": 42}
        assert text_of(result) == "42"


# -- resources, prompts, completion -----------------------------------------------------------


async def test_resources_and_templates(version: str) -> None:
    async with everything(version) as (client, _, _):
        (resource,) = await client.list_resources()
        assert (resource.uri, resource.mime_type) == (SUBSCRIBABLE, "text/plain")
        (contents,) = (await client.read_resource(SUBSCRIBABLE)).contents
        assert isinstance(contents, TextResourceContents)
        assert contents.text == "hello world"

        (template,) = await client.list_resource_templates()
        assert template.uri_template == "greet://{name}"
        (greeting,) = (await client.read_resource("greet://bob")).contents
        assert isinstance(greeting, TextResourceContents) and not isinstance(
            greeting, BlobResourceContents
        )
        assert greeting.text == "Hello, bob!"

        with pytest.raises(McpError):
            await client.read_resource("nothing://here")


async def test_prompts(version: str) -> None:
    async with everything(version) as (client, _, _):
        (prompt,) = await client.list_prompts()
        assert prompt.name == "hello_prompt"
        assert [(a.name, a.required) for a in prompt.arguments or []] == [("name", True)]
        result = await client.get_prompt("hello_prompt", {"name": "zed"})
        (message,) = result.messages
        assert message.role == "user"
        assert isinstance(message.content, TextContent)
        assert message.content.text == "Say hello to zed"


async def test_completion(version: str) -> None:
    async with everything(version) as (client, _, _):
        completion = await client.complete(
            PromptReference(name="hello_prompt"), "name", "al", context={"other": "x"}
        )
        assert completion.values == ["alice", "albert"]
        completion = await client.complete(
            ResourceTemplateReference(uri="greet://{name}"), "name", "b"
        )
        assert completion.values == ["bob"]


# -- logging, progress, cancellation ----------------------------------------------------------


async def test_logging(version: str) -> None:
    answers = Answers()
    async with everything(version, on_log=answers.on_log) as (client, bridge, probe):
        await client.set_log_level("info")
        await client.call_tool("slow", {"steps": 0})
        await trio.testing.wait_all_tasks_blocked()
    received = [(log.level, log.data) for log in answers.logs]
    if version == MODERN:
        # The level rides on each request's _meta; the SDK sends only what is asked for.
        assert probe.log_levels == []
        (call,) = bridge.wire.requests_from_ours("tools/call")
        assert call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "info"
        assert received == [("info", "info line"), ("warning", "warning line")]
    else:
        assert probe.log_levels == ["info"]  # our logging/setLevel reached the server
        # Peer deviation: MCPServer's ctx.debug() ignores the level a client set (it has
        # no logging/setLevel of its own), so the debug line comes too. We deliver
        # whatever the server sends, in order.
        sent = [
            m["params"]["level"] for m in bridge.wire.requests_from_sdk("notifications/message")
        ]
        assert sent == ["debug", "info", "warning"]
        assert received == [
            ("debug", "debug line"),
            ("info", "info line"),
            ("warning", "warning line"),
        ]


async def test_progress(version: str) -> None:
    updates: list[ProgressNotificationParams] = []
    async with everything(version) as (client, bridge, _):
        result = await client.call_tool("slow", {"steps": 3}, on_progress=updates.append)
        assert text_of(result) == "done 3"
    assert [(u.progress, u.total) for u in updates] == [(1, 3), (2, 3), (3, 3)]
    if version >= "2025-03-26":
        assert [u.message for u in updates] == ["step 1", "step 2", "step 3"]
    (call,) = bridge.wire.requests_from_ours("tools/call")
    token = call["params"]["_meta"]["progressToken"]
    assert {u.progress_token for u in updates} == {token}


async def test_cancelling_our_caller_cancels_the_sdk_handler(version: str) -> None:
    async with everything(version) as (client, bridge, probe):
        with trio.CancelScope() as caller:

            async def cancel_once_started() -> None:
                await probe.hang_started.wait()
                caller.cancel()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(cancel_once_started)
                await client.call_tool("hang")
                pytest.fail("the call returned")
        with trio.fail_after(5):
            await probe.hang_cancelled.wait()
        # A round trip after it, then every task idle: any answer would have crossed by now.
        await client.call_tool("add", {"a": 1, "b": 1})
        await trio.testing.wait_all_tasks_blocked()
    (call,) = [
        m for m in bridge.wire.requests_from_ours("tools/call") if m["params"]["name"] == "hang"
    ]
    (cancel,) = bridge.wire.requests_from_ours("notifications/cancelled")
    assert cancel["params"]["requestId"] == call["id"]
    assert bridge.wire.answers_from_sdk(call["id"]) == []


# -- what the server asks of the client --------------------------------------------------------


async def test_sampling_roots_and_elicitation(version: str) -> None:
    answers = Answers()
    async with everything(version, **answers.options()) as (client, bridge, _):
        assert text_of(await client.call_tool("sample_it")) == "sampled by trio_mcp"
        assert text_of(await client.call_tool("list_roots")) == "file:///src"
        if version >= "2025-06-18":
            assert text_of(await client.call_tool("greet_user")) == "hello Ada"
        else:
            # Elicitation arrived in 2025-06-18: we do not declare it before, and the
            # SDK refuses the tool with the missing-capability error.
            with pytest.raises(MissingRequiredClientCapability):
                await client.call_tool("greet_user")
    kinds = [kind for kind, _ in answers.asked]
    assert kinds == ["sampling", "roots", "elicitation"][: 3 if version >= "2025-06-18" else 2]
    asked_by_request = [m["method"] for m in bridge.wire.from_sdk if "method" in m and "id" in m]
    if version == MODERN:
        # No server->client requests: InputRequiredResult, and our retry answered it.
        assert asked_by_request == []
        retries = [
            c
            for c in bridge.wire.requests_from_ours("tools/call")
            if "inputResponses" in c["params"]
        ]
        assert len(retries) == 3
        assert all(r["params"]["requestState"] for r in retries)
    else:
        assert (
            asked_by_request
            == ["sampling/createMessage", "roots/list", "elicitation/create"][: len(kinds)]
        )


async def test_multi_round_trip_with_the_lowlevel_server(version: str) -> None:
    """The low-level server asks by hand: a server->client request in the handshake era; an
    ``InputRequiredResult`` with a plain ``requestState`` at 2026-07-28, which must come
    back verbatim."""
    answers = Answers()
    probe = Probe()
    _, serve = build_lowlevel(probe)
    async with connected(version, serve, elicitation=answers.elicitation) as (client, bridge):
        if version < "2025-06-18":
            # Peer deviation: the low-level SDK server's elicit_form() sends
            # elicitation/create whatever the revision and the client's capabilities. We
            # refuse it as a method the revision lacks, and never ask the user.
            with pytest.raises(McpError):
                await client.call_tool("ask")
            (question,) = bridge.wire.requests_from_sdk("elicitation/create")
            (refusal,) = bridge.wire.answers_from_ours(question["id"])
            assert refusal["error"]["code"] == -32601
            assert answers.asked == []
            return
        assert text_of(await client.call_tool("ask")) == "hi Ada"
    (asked,) = answers.asked
    assert asked[0] == "elicitation" and asked[1].message == "name?"
    if version == MODERN:
        assert len(probe.ask_rounds) == 2
        assert probe.ask_rounds[0] == (None, None)
        responses, state = probe.ask_rounds[1]
        assert state == "round-1"
        assert responses["q"].action == "accept" and responses["q"].content == {"name": "Ada"}
    else:
        assert [m["method"] for m in bridge.wire.from_sdk if "method" in m] == [
            "elicitation/create"
        ]


# -- change notifications ---------------------------------------------------------------------


async def next_change(changes: Any) -> Change:
    with trio.fail_after(5):
        return await changes.__anext__()  # type: ignore[no-any-return]


async def test_subscriptions_and_list_changes(version: str) -> None:
    """Legacy: ``resources/subscribe`` and notifications sent unasked; modern: one
    ``subscriptions/listen`` stream. ``client.listen`` hides which."""
    async with everything(version) as (client, bridge, probe):
        async with client.listen(tools=True, resource_uris=[SUBSCRIBABLE]) as changes:
            if version == MODERN:
                assert changes.acknowledged is not None
                assert changes.acknowledged.resource_subscriptions == [SUBSCRIBABLE]
            await client.call_tool("touch", {"uri": SUBSCRIBABLE})
            got = {await next_change(changes), await next_change(changes)}
            assert got == {Change("updated", SUBSCRIBABLE), Change("tools")}
        await client.call_tool("add", {"a": 0, "b": 0})
        await trio.testing.wait_all_tasks_blocked()
    if version == MODERN:
        assert probe.subscribed == []
        (listen,) = bridge.wire.requests_from_ours("subscriptions/listen")
        (cancel,) = bridge.wire.requests_from_ours("notifications/cancelled")
        assert cancel["params"]["requestId"] == listen["id"]
    else:
        assert probe.subscribed == [SUBSCRIBABLE]
        assert probe.unsubscribed == [SUBSCRIBABLE]
        assert not bridge.wire.requests_from_ours("subscriptions/listen")
