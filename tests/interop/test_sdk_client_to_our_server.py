"""The official SDK's client (``mcp.Client``) against trio_mcp's :class:`Server`, in process
over the bytes bridge, at every revision the SDK client can be made to speak.

Each test fails if the two stop understanding each other: the SDK client validates every
result it receives (at 2026-07-28 strictly), and the tests check both what the SDK's API
returned and what crossed the wire.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import attrs
import mcp
import mcp_types as types
import pytest
import trio
import trio.testing
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

from trio_mcp import Context, Server, ToolError

from .bridge import Bridge, serve_ours
from .sdk_client import MODERN, Inbox, open_sdk_client

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

#: The oldest and the newest handshake revision, one in between, and the modern one.
VERSIONS = ["2024-11-05", "2025-06-18", "2025-11-25", MODERN]
LEGACY_VERSIONS = [v for v in VERSIONS if v != MODERN]


@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


# -- trio_mcp's server ------------------------------------------------------------------------


@attrs.define
class Forecast:
    city: str
    temperature: float


@attrs.define
class Seen:
    """What our server's handlers saw."""

    hang_started: trio.Event = attrs.Factory(trio.Event)
    hang_cancelled: trio.Event = attrs.Factory(trio.Event)


def make_server() -> tuple[Server, Seen]:
    server = Server("ours", version="1.2.3", instructions="trio_mcp's side")
    seen = Seen()

    @server.tool()
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    @server.tool()
    def forecast(city: str) -> Forecast:
        """A typed (structured) result."""
        return Forecast(city=city, temperature=21.5)

    @server.tool()
    def fail() -> str:
        raise ToolError("no luck")

    @server.tool()
    async def chatty(steps: int, ctx: Context) -> str:
        """Logs at three levels, then reports progress for each step."""
        await ctx.debug("debug line")
        await ctx.info("info line")
        await ctx.warning("warning line")
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "chatted"

    @server.tool()
    async def hang() -> str:
        seen.hang_started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            seen.hang_cancelled.set()
            raise

    @server.tool()
    async def register(ctx: Context) -> str:
        schema = {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }
        answer = await ctx.elicit("Who are you?", schema)
        return f"registered {(answer.content or {}).get('name')} ({answer.action})"

    @server.tool()
    async def summarize(ctx: Context) -> str:
        result = await ctx.sample("Summarize: MCP", max_tokens=20)
        return f"summary: {getattr(result.content, 'text', '?')}"

    @server.tool()
    async def workspace(ctx: Context) -> str:
        return ",".join(root.uri for root in await ctx.list_roots())

    @server.tool()
    def touch() -> str:
        """Updates memo://1 and adds a tool."""
        server.notify_resource_updated("memo://1")
        server.add_tool(lambda: "bonus", name="bonus")
        return "touched"

    @server.resource("memo://1", mime_type="text/plain")
    def memo() -> str:
        return "a memo"

    @server.resource("blob://pixel", mime_type="image/png")
    def pixel() -> bytes:
        return b"\x89PNG"

    @server.resource("greetings://{language}/{name}", mime_type="text/plain")
    def greeting(language: str, name: str) -> str:
        return {"en": "Hello", "fr": "Bonjour"}.get(language, "?") + f", {name}!"

    @server.prompt()
    def review(code: str, language: str | None = None) -> str:
        """Asks for a code review."""
        return f"Review this {language or 'code'}: {code}"

    @server.completion(prompt="review", argument="language")
    def complete_language(value: str, context: Mapping[str, str]) -> list[str]:
        return [x for x in ("python", "perl", "rust") if x.startswith(value)]

    @server.completion(resource_template="greetings://{language}/{name}", argument="name")
    def complete_name(value: str, context: Mapping[str, str]) -> list[str]:
        names = {"en": ["alice", "albert"], "fr": ["amelie"]}.get(context.get("language", ""), [])
        return [n for n in names if n.startswith(value)]

    return server, seen


@asynccontextmanager
async def connected(version: str, **options: Any) -> AsyncIterator[tuple[mcp.Client, Bridge, Seen]]:
    """An SDK client at ``version`` talking to a fresh server of ours."""
    server, seen = make_server()
    async with (
        serve_ours(server) as bridge,
        open_sdk_client(bridge.transport(), version, **options) as client,
    ):
        yield client, bridge, seen


def text_of(result: types.CallToolResult | types.GetPromptResult) -> str:
    if isinstance(result, types.GetPromptResult):
        content: Any = result.messages[0].content
    else:
        content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


# -- lifecycle, tools -------------------------------------------------------------------------


async def test_the_sdk_client_connects_in_each_revision(version: str) -> None:
    async with connected(version) as (client, bridge, _):
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("ours", "1.2.3")
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.tools is not None
        if version == MODERN:
            # mode="auto" probed server/discover (with the envelope) and kept it.
            (probe,) = bridge.wire.requests_from_sdk("server/discover")
            assert probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
            assert not bridge.wire.requests_from_sdk("initialize")
        else:
            assert client.instructions == "trio_mcp's side"
            await client.send_ping()
            (initialize,) = bridge.wire.requests_from_sdk("initialize")
            (answer,) = bridge.wire.answers_from_ours(initialize["id"])
            assert answer["result"]["protocolVersion"] == version


async def test_tools_and_structured_output(version: str) -> None:
    structured = version >= "2025-06-18"
    async with connected(version) as (client, bridge, _):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools["add"].input_schema["properties"]) == {"a", "b"}
        assert (tools["forecast"].output_schema is not None) == structured

        added = await client.call_tool("add", {"a": 2, "b": 3})
        # The text block carries the structured value as JSON (for clients of any revision).
        assert json.loads(text_of(added)) == {"result": 5}
        assert added.structured_content == ({"result": 5} if structured else None)
        # The SDK client checks structuredContent against the tool's outputSchema itself.
        typed = await client.call_tool("forecast", {"city": "Lyon"})
        assert typed.structured_content == (
            {"city": "Lyon", "temperature": 21.5} if structured else None
        )

        failed = await client.call_tool("fail", {})
        assert failed.is_error
        assert text_of(failed) == "no luck"
        with pytest.raises(mcp.MCPError) as unknown:
            await client.call_tool("nope", {})
        assert unknown.value.code == types.INVALID_PARAMS

    if not structured:  # never sent to a revision that predates them
        for message in bridge.wire.from_ours:
            assert "outputSchema" not in str(message)
            assert "structuredContent" not in str(message)


# -- resources, prompts, completion -----------------------------------------------------------


async def test_resources_and_templates(version: str) -> None:
    async with connected(version) as (client, _, _):
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(resources) == {"memo://1", "blob://pixel"}
        assert resources["memo://1"].mime_type == "text/plain"

        (text,) = (await client.read_resource("memo://1")).contents
        assert isinstance(text, types.TextResourceContents)
        assert text.text == "a memo"
        (blob,) = (await client.read_resource("blob://pixel")).contents
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == b"\x89PNG"

        (template,) = (await client.list_resource_templates()).resource_templates
        assert template.uri_template == "greetings://{language}/{name}"
        (greeting,) = (await client.read_resource("greetings://fr/Zoe")).contents
        assert isinstance(greeting, types.TextResourceContents)
        assert greeting.text == "Bonjour, Zoe!"

        with pytest.raises(mcp.MCPError) as missing:
            await client.read_resource("memo://404")
        # -32002 up to 2025-11-25; 2026-07-28 says -32602.
        assert missing.value.code == (-32602 if version == MODERN else -32002)


async def test_prompts(version: str) -> None:
    async with connected(version) as (client, _, _):
        (prompt,) = (await client.list_prompts()).prompts
        assert prompt.name == "review"
        assert [(a.name, a.required) for a in prompt.arguments or []] == [
            ("code", True),
            ("language", False),
        ]
        result = await client.get_prompt("review", {"code": "x = 1", "language": "python"})
        assert result.messages[0].role == "user"
        assert text_of(result) == "Review this python: x = 1"
        with pytest.raises(mcp.MCPError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.code == types.INVALID_PARAMS


async def test_completion(version: str) -> None:
    async with connected(version) as (client, _, _):
        prompt = types.PromptReference(type="ref/prompt", name="review")
        completion = (await client.complete(prompt, {"name": "language", "value": "p"})).completion
        assert completion.values == ["python", "perl"]

        template = types.ResourceTemplateReference(
            type="ref/resource", uri="greetings://{language}/{name}"
        )
        completion = (
            await client.complete(
                template, {"name": "name", "value": "a"}, context_arguments={"language": "en"}
            )
        ).completion
        # Completion context arrived in 2025-06-18, but the SDK sends it at every revision
        # and our server reads it wherever it comes (an unknown field, tolerated).
        assert completion.values == ["alice", "albert"]


# -- logging, progress, cancellation ----------------------------------------------------------


async def test_logging_after_set_level(version: str) -> None:
    inbox = Inbox()
    # Legacy: logging/setLevel. Modern: the client's log_level rides on every request.
    options: dict[str, Any] = {"log_level": "info"} if version == MODERN else {}
    async with connected(version, logging_callback=inbox.logging, **options) as (client, bridge, _):
        if version != MODERN:
            await client.set_logging_level("info")
        await client.call_tool("chatty", {"steps": 0})
        first, second = await inbox.next("log"), await inbox.next("log")
        assert [(first.level, first.data), (second.level, second.data)] == [
            ("info", "info line"),
            ("warning", "warning line"),
        ]
    levels = [m["params"]["level"] for m in bridge.wire.requests_from_ours("notifications/message")]
    assert levels == ["info", "warning"]  # debug was held back by our server


async def test_modern_logs_only_for_requests_that_ask() -> None:
    inbox = Inbox()
    async with connected(MODERN, logging_callback=inbox.logging) as (client, bridge, _):
        await client.call_tool("chatty", {"steps": 0})
    assert not bridge.wire.requests_from_ours("notifications/message")


async def test_progress(version: str) -> None:
    inbox = Inbox()
    async with connected(version) as (client, bridge, _):
        result = await client.call_tool("chatty", {"steps": 3}, progress_callback=inbox.progress)
        assert text_of(result) == "chatted"
        updates = [await inbox.next("progress") for _ in range(3)]
    # Progress messages arrived in 2025-03-26.
    messages = [f"step {n}" if version >= "2025-03-26" else None for n in (1, 2, 3)]
    assert updates == [(1, 3, messages[0]), (2, 3, messages[1]), (3, 3, messages[2])]
    (call,) = bridge.wire.requests_from_sdk("tools/call")
    token = call["params"]["_meta"]["progressToken"]
    sent = bridge.wire.requests_from_ours("notifications/progress")
    assert [m["params"]["progressToken"] for m in sent] == [token] * 3


async def test_cancelling_the_sdk_caller_cancels_our_handler(version: str) -> None:
    async with connected(version) as (client, bridge, seen):
        with trio.CancelScope() as caller:

            async def cancel_once_started() -> None:
                await seen.hang_started.wait()
                caller.cancel()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(cancel_once_started)
                await client.call_tool("hang", {})
                pytest.fail("the call returned")
        with trio.fail_after(5):
            await seen.hang_cancelled.wait()
        # A round trip after it, then every task idle: any answer would have crossed by now.
        await client.list_tools()
        await trio.testing.wait_all_tasks_blocked()

    (call,) = [
        m for m in bridge.wire.requests_from_sdk("tools/call") if m["params"]["name"] == "hang"
    ]
    (cancel,) = bridge.wire.requests_from_sdk("notifications/cancelled")
    assert cancel["params"]["requestId"] == call["id"]
    assert bridge.wire.answers_from_ours(call["id"]) == []


# -- what the server asks of the client --------------------------------------------------------


async def test_sampling_roots_and_elicitation(version: str) -> None:
    inbox = Inbox(name="Zed", roots=("file:///work", "file:///tmp"))
    async with connected(version, **inbox.callbacks()) as (client, bridge, _):
        assert text_of(await client.call_tool("summarize", {})) == "summary: a sampled line"
        assert text_of(await client.call_tool("workspace", {})) == "file:///work,file:///tmp"
        if version >= "2025-06-18":
            assert text_of(await client.call_tool("register", {})) == "registered Zed (accept)"
    asked = [kind for kind, _ in inbox.asked]
    assert asked == ["sampling", "roots", "elicitation"][: 3 if version >= "2025-06-18" else 2]
    (sampling,) = [params for kind, params in inbox.asked if kind == "sampling"]
    assert sampling.max_tokens == 20

    if version == MODERN:
        # No server->client requests: each question came back as an InputRequiredResult and
        # the SDK retried with inputResponses and the same requestState.
        assert not [m for m in bridge.wire.from_ours if "method" in m and "id" in m]
        calls = bridge.wire.requests_from_sdk("tools/call")
        questions = [
            answer
            for call in calls
            for answer in bridge.wire.answers_from_ours(call["id"])
            if answer["result"].get("resultType") == "input_required"
        ]
        assert len(questions) == len(asked)
        retries = [call for call in calls if "inputResponses" in call["params"]]
        assert len(retries) == len(asked)
        assert [r["params"]["requestState"] for r in retries] == [
            q["result"]["requestState"] for q in questions
        ]
    else:
        methods = [m["method"] for m in bridge.wire.from_ours if "method" in m and "id" in m]
        assert (
            methods == ["sampling/createMessage", "roots/list", "elicitation/create"][: len(asked)]
        )


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_elicitation_is_refused_in_revisions_without_it(version: str) -> None:
    """The SDK client declares elicitation whatever the revision. Elicitation arrived in
    2025-06-18, so our server must not send ``elicitation/create`` before it; the tool
    call fails with the missing-capability error (-32021), as for a client that did not
    declare it."""
    inbox = Inbox()
    async with connected(version, **inbox.callbacks()) as (client, bridge, _):
        with pytest.raises(mcp.MCPError) as refused:
            await client.call_tool("register", {})
    assert refused.value.code == -32021
    assert not bridge.wire.requests_from_ours("elicitation/create")
    assert inbox.asked == []


# -- change notifications ---------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_legacy_subscribe_and_list_changed(version: str) -> None:
    inbox = Inbox()
    async with connected(version, message_handler=inbox.messages) as (client, _, _):
        await client.subscribe_resource("memo://1")
        await client.call_tool("touch", {})
        received = {type(await inbox.next("notification")) for _ in range(2)}
        assert received == {types.ResourceUpdatedNotification, types.ToolListChangedNotification}

        await client.unsubscribe_resource("memo://1")
        await client.call_tool("touch", {})  # the tool list changes again; memo://1 too
        assert isinstance(await inbox.next("notification"), types.ToolListChangedNotification)
        await trio.testing.wait_all_tasks_blocked()
        assert inbox.pending("notification") == []


async def test_modern_subscriptions_listen() -> None:
    async with connected(MODERN) as (client, bridge, _):
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["memo://1"]
        ) as events:
            assert events.honored.tools_list_changed
            assert events.honored.resource_subscriptions == ["memo://1"]
            await client.call_tool("touch", {})
            received = []
            with trio.fail_after(5):
                async for event in events:
                    received.append(event)
                    if len(received) == 2:
                        break
            assert set(received) == {ResourceUpdated(uri="memo://1"), ToolsListChanged()}
        # Leaving the block cancelled the listen request: a cancelled request is not answered.
        await client.list_tools()
        await trio.testing.wait_all_tasks_blocked()

    (listen,) = bridge.wire.requests_from_sdk("subscriptions/listen")
    (cancel,) = bridge.wire.requests_from_sdk("notifications/cancelled")
    assert cancel["params"]["requestId"] == listen["id"]
    assert bridge.wire.answers_from_ours(listen["id"]) == []
    notes = [
        m
        for m in bridge.wire.requests_from_ours()
        if m["method"] in ("notifications/resources/updated", "notifications/tools/list_changed")
    ]
    subscription = "io.modelcontextprotocol/subscriptionId"
    assert [m["params"]["_meta"][subscription] for m in notes] == [listen["id"]] * 2
