"""Interop over stdio with real processes: our client against the official SDK's stdio
server and against the npm reference server (``@modelcontextprotocol/server-everything``);
the SDK's stdio client against ``examples/everything_server.py``; and closing our client
leaves no process behind.

Every wait is bounded (``trio.fail_after``); no test sleeps.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
import trio
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ResourceUpdated
from npm_support import NpmServer

from trio_mcp import Client, open_stdio_client
from trio_mcp.client import Change
from trio_mcp.transports import INHERITED_ENVIRONMENT
from trio_mcp.types import (
    BlobResourceContents,
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    Root,
    TextContent,
    TextResourceContents,
)

from .sdk_client import MODERN, Inbox, open_sdk_client

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = [sys.executable, str(ROOT / "tests" / "interop" / "sdk_everything.py")]
OUR_EVERYTHING = ROOT / "examples" / "everything_server.py"
#: Children that import trio_mcp must import this worktree's copy.
ENV = {"PYTHONPATH": str(ROOT)}
#: Bounds every conversation (process start included) on a slow, shared machine.
LIMIT = 60


class Answers:
    """Our client's handlers for the server's questions; what they were asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.logs: list[LoggingMessageNotificationParams] = []
        self.stderr: list[str] = []
        self._log_send, self._log_receive = trio.open_memory_channel[
            LoggingMessageNotificationParams
        ](256)

    def on_log(self, params: LoggingMessageNotificationParams) -> None:
        self.logs.append(params)
        self._log_send.send_nowait(params)

    async def next_log(self) -> LoggingMessageNotificationParams:
        with trio.fail_after(10):
            return await self._log_receive.receive()

    async def sampling(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        self.asked.append(("sampling", params))
        return CreateMessageResult(role="assistant", content=TextContent(text="sampled"), model="m")

    async def elicitation(
        self, params: ElicitRequestFormParams | ElicitRequestURLParams
    ) -> ElicitResult:
        self.asked.append(("elicitation", params))
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult(action="accept")  # the user agreed to open the URL
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self) -> list[Root]:
        self.asked.append(("roots", None))
        return [Root(uri="file:///src", name="src")]

    def options(self) -> dict[str, Any]:
        return {
            "sampling": self.sampling,
            "elicitation": self.elicitation,
            "roots": self.roots,
            "on_log": self.on_log,
            "stderr": self.stderr.append,
        }


def text_of(result: CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent), result
    return content.text


def living_in_group(pgid: int) -> list[int]:
    """The processes (not zombies) of process group ``pgid``, from ``/proc``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            found.append(int(entry.name))
    return found


# -- our client -> the SDK's stdio server ------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_our_stdio_client_against_the_sdk_stdio_server(version: str) -> None:
    answers = Answers()
    with trio.fail_after(LIMIT):
        async with open_stdio_client(
            SDK_SERVER,
            env=ENV,
            protocol_version=None if version == MODERN else version,
            **answers.options(),
        ) as client:
            assert client.protocol_version == version  # modern: detected by the probe
            assert client.server_info is not None and client.server_info.name == "sdk-everything"

            names = {tool.name for tool in await client.list_tools()}
            assert {"add", "slow", "greet_user", "sample_it", "list_roots"} <= names
            added = await client.call_tool("add", {"a": 20, "b": 22})
            assert added.structured_content == {"total": 42, "note": "ok"}

            (resource,) = await client.list_resources()
            (contents,) = (await client.read_resource(resource.uri)).contents
            assert isinstance(contents, TextResourceContents) and contents.text == "hello world"
            (template,) = await client.list_resource_templates()
            (greeting,) = (await client.read_resource("greet://Zoe")).contents
            assert isinstance(greeting, TextResourceContents) and greeting.text == "Hello, Zoe!"

            prompt = await client.get_prompt("hello_prompt", {"name": "Zoe"})
            assert isinstance(prompt.messages[0].content, TextContent)
            assert prompt.messages[0].content.text == "Say hello to Zoe"
            completion = await client.complete(PromptReference(name="hello_prompt"), "name", "al")
            assert completion.values == ["alice", "albert"]

            # Questions: server->client requests (legacy) or InputRequiredResult (modern).
            assert text_of(await client.call_tool("greet_user")) == "hello Ada"
            assert text_of(await client.call_tool("sample_it")) == "sampled"
            assert text_of(await client.call_tool("list_roots")) == "file:///src"

            await client.set_log_level("info")
            updates: list[ProgressNotificationParams] = []
            slow = await client.call_tool("slow", {"steps": 2}, on_progress=updates.append)
            assert text_of(slow) == "done 2"
            assert [(u.progress, u.total, u.message) for u in updates] == [
                (1, 2, "step 1"),
                (2, 2, "step 2"),
            ]
    assert [kind for kind, _ in answers.asked] == ["elicitation", "sampling", "roots"]
    levels = [log.level for log in answers.logs]
    # Modern: the SDK honours the level on the request. Legacy: MCPServer sends every level
    # whatever logging/setLevel said (a deviation noted in test_our_client_to_sdk_server).
    assert levels == (["info", "warning"] if version == MODERN else ["debug", "info", "warning"])


# -- the SDK's stdio client -> our everything server -------------------------------------------


@asynccontextmanager
async def sdk_stdio_client(
    version: str, errlog_path: Path, **options: Any
) -> AsyncIterator[mcp.Client]:
    params = mcp.StdioServerParameters(command=sys.executable, args=[str(OUR_EVERYTHING)], env=ENV)
    # The SDK hands errlog to the child as its stderr (it needs a real file).
    with errlog_path.open("w") as errlog:
        async with open_sdk_client(
            stdio_client(params, errlog=errlog), version, **options
        ) as client:
            yield client


@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_the_sdk_stdio_client_against_our_everything_server(
    version: str, tmp_path: Path
) -> None:
    inbox = Inbox(name="Ada")
    options: dict[str, Any] = inbox.callbacks()
    if version == MODERN:
        options["log_level"] = "info"
    with trio.fail_after(LIMIT):
        async with sdk_stdio_client(version, tmp_path / "stderr.log", **options) as client:
            assert client.server_info is not None and client.server_info.name == "everything"
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["forecast"].output_schema is not None
            # The SDK validates structuredContent against the outputSchema.
            forecast = await client.call_tool("forecast", {"city": "Lyon"})
            assert forecast.structured_content == {
                "city": "Lyon",
                "temperature": 21.5,
                "conditions": "sunny",
            }
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert added.structured_content == {"result": 5}
            rich = await client.call_tool("rich", {})
            assert [block.type for block in rich.content] == [
                "text",
                "image",
                "resource_link",
                "resource",
            ]

            settings = (await client.read_resource("config://settings")).contents[0]
            assert isinstance(settings, types.TextResourceContents)
            assert json.loads(settings.text) == {"theme": "dark", "language": "en"}
            pixel = (await client.read_resource("image://pixel")).contents[0]
            assert isinstance(pixel, types.BlobResourceContents)
            assert base64.b64decode(pixel.blob) == b"\x89PNG\r\n\x1a\n"
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["greetings://{language}/{name}"]
            greeting = (await client.read_resource("greetings://fr/Zoe")).contents[0]
            assert isinstance(greeting, types.TextResourceContents)
            assert greeting.text == "Bonjour, Zoe!"

            review = await client.get_prompt("code_review", {"code": "x=1", "language": "go"})
            assert len(review.messages) == 2
            completion = await client.complete(
                types.PromptReference(type="ref/prompt", name="code_review"),
                {"name": "language", "value": "py"},
            )
            assert completion.completion.values == ["python"]

            register = await client.call_tool("register", {})
            assert register.content[0] == types.TextContent(
                type="text", text="registered Ada (dev)"
            )
            summary = await client.call_tool("summarize", {"text": "MCP"})
            assert summary.content[0] == types.TextContent(type="text", text="a sampled line")
            workspace = await client.call_tool("workspace", {})
            assert workspace.content[0] == types.TextContent(type="text", text="file:///work")

            if version != MODERN:
                await client.set_logging_level("info")
            await client.call_tool("long_task", {"steps": 2}, progress_callback=inbox.progress)
            assert [await inbox.next("progress") for _ in range(2)] == [
                (1, 2, "step 1 of 2"),
                (2, 2, "step 2 of 2"),
            ]
            log = await inbox.next("log")
            assert (log.level, log.data, log.logger) == ("info", "starting 2 steps", "long_task")

            if version == MODERN:
                async with client.listen(resource_subscriptions=["counter://value"]) as events:
                    await client.call_tool("increment", {})
                    with trio.fail_after(10):
                        event = await events.__anext__()
                    assert event == ResourceUpdated(uri="counter://value")
            else:
                await client.subscribe_resource("counter://value")
                await client.call_tool("increment", {})
                while True:
                    note = await inbox.next("notification", timeout=10)
                    if isinstance(note, types.ResourceUpdatedNotification):
                        break
                assert note.params.uri == "counter://value"
    assert [kind for kind, _ in inbox.asked] == ["elicitation", "sampling", "roots"]


# -- our client -> the npm reference server ----------------------------------------------------


async def test_our_stdio_client_against_the_npm_server_everything(
    npm_server_everything: NpmServer,
) -> None:
    """The reference server speaks the handshake era only (its TypeScript SDK answers our
    ``server/discover`` probe with -32601), so our client falls back to 2025-11-25."""
    answers = Answers()
    with trio.fail_after(LIMIT):
        async with open_stdio_client(
            npm_server_everything.node_command,
            elicitation_modes=("form", "url"),
            **answers.options(),
        ) as client:
            await exercise_the_npm_server(client, answers)
    kinds = [kind for kind, _ in answers.asked]
    # It also asks for roots on its own, 350 ms after the handshake (then logs "Roots
    # updated"), so roots may be asked once or twice, at any point.
    assert sorted(set(kinds)) == ["elicitation", "roots", "sampling"]
    assert (kinds.count("sampling"), kinds.count("elicitation")) == (1, 2)


async def exercise_the_npm_server(client: Client, answers: Answers) -> None:
    assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
    assert client.server_info is not None
    assert client.server_info.name == "mcp-servers/everything"

    # Tools: the fixed set, plus those it adds for clients that can answer questions.
    tools = {tool.name: tool for tool in await client.list_tools()}
    assert {"echo", "get-sum", "get-structured-content", "get-roots-list"} <= set(tools)
    assert {"trigger-sampling-request", "trigger-elicitation-request"} <= set(tools)
    assert text_of(await client.call_tool("echo", {"message": "hi"})) == "Echo: hi"
    assert "is 3" in text_of(await client.call_tool("get-sum", {"a": 1, "b": 2}))
    # Structured content, checked by our client against the tool's outputSchema.
    weather = await client.call_tool("get-structured-content", {"location": "Chicago"})
    assert weather.structured_content is not None
    assert set(weather.structured_content) == {"temperature", "conditions", "humidity"}
    image = await client.call_tool("get-tiny-image")
    assert any(isinstance(block, ImageContent) for block in image.content)
    annotated = await client.call_tool(
        "get-annotated-message", {"messageType": "error", "includeImage": False}
    )
    assert annotated.content[0].annotations is not None
    links = await client.call_tool("get-resource-links", {"count": 2})
    assert sum(isinstance(block, ResourceLink) for block in links.content) == 2
    reference = await client.call_tool(
        "get-resource-reference", {"resourceType": "Text", "resourceId": 1}
    )
    assert any(isinstance(block, EmbeddedResource) for block in reference.content)

    updates: list[ProgressNotificationParams] = []
    done = await client.call_tool(
        "trigger-long-running-operation", {"duration": 0.2, "steps": 2}, on_progress=updates.append
    )
    assert "completed" in text_of(done)
    assert [(u.progress, u.total) for u in updates] == [(1, 2), (2, 2)]

    # Questions the server asks us (server->client requests in this era).
    assert "file:///src" in text_of(await client.call_tool("get-roots-list"))
    sampled = await client.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})
    assert "sampled" in text_of(sampled)
    elicited = await client.call_tool("trigger-elicitation-request")
    assert "Ada" in str(elicited.content)
    url = await client.call_tool(
        "trigger-url-elicitation", {"url": "https://example.com/consent", "message": "Consent"}
    )
    assert "completed the URL elicitation" in text_of(url)
    ((_, url_question),) = [a for a in answers.asked if isinstance(a[1], ElicitRequestURLParams)]
    assert url_question.url == "https://example.com/consent" and url_question.elicitation_id

    # The child got our small default environment, nothing else.
    environment = json.loads(text_of(await client.call_tool("get-env")))
    assert set(environment) <= {
        *INHERITED_ENVIRONMENT,
        *(k for k in environment if k.startswith("LC_")),
    }

    # Resources: every listed one reads; both templates read.
    resources = await client.list_resources()
    assert resources
    for resource in resources:
        contents = (await client.read_resource(resource.uri)).contents
        assert contents and contents[0].uri == resource.uri
    templates = {t.name: t.uri_template for t in await client.list_resource_templates()}
    text_uri = templates["Dynamic Text Resource"].replace("{resourceId}", "7")
    (text,) = (await client.read_resource(text_uri)).contents
    assert isinstance(text, TextResourceContents) and text.text.startswith("Resource 7:")
    blob_uri = templates["Dynamic Blob Resource"].replace("{resourceId}", "7")
    (blob,) = (await client.read_resource(blob_uri)).contents
    assert isinstance(blob, BlobResourceContents)
    assert base64.b64decode(blob.blob).startswith(b"Resource 7:")

    # Prompts, and completion of prompt arguments (with context) and template variables.
    prompts = {prompt.name for prompt in await client.list_prompts()}
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= prompts
    assert (await client.get_prompt("simple-prompt")).messages
    args = await client.get_prompt("args-prompt", {"city": "Paris"})
    assert "Paris" in str(args.messages[0].content)
    team = await client.get_prompt("completable-prompt", {"department": "Sales", "name": "Eve"})
    assert "Eve" in str(team.messages[0].content)
    embedded = await client.get_prompt(
        "resource-prompt", {"resourceType": "Text", "resourceId": "2"}
    )
    assert any(isinstance(m.content, EmbeddedResource) for m in embedded.messages)
    completable = PromptReference(name="completable-prompt")
    assert (await client.complete(completable, "department", "S")).values == ["Sales", "Support"]
    names = await client.complete(completable, "name", "", context={"department": "Sales"})
    assert names.values == ["David", "Eve", "Frank"]
    by_id = await client.complete(
        ResourceTemplateReference(uri=templates["Dynamic Text Resource"]), "resourceId", "3"
    )
    assert by_id.values == ["3"]

    # Change notifications: a new session resource changes the list; subscriber updates
    # are sent once at once (then every 5 s).
    async with client.listen(resources=True, resource_uris=[text_uri]) as changes:
        data = "data:text/plain;base64," + base64.b64encode(b"hello gzip").decode()
        gzipped = await client.call_tool(
            "gzip-file-as-resource",
            {"name": "hello.gz", "data": data, "outputType": "resourceLink"},
        )
        (link,) = gzipped.content
        assert isinstance(link, ResourceLink)
        with trio.fail_after(10):
            assert await changes.__anext__() == Change("resources")
        (archive,) = (await client.read_resource(link.uri)).contents
        assert isinstance(archive, BlobResourceContents)
        assert gzip.decompress(base64.b64decode(archive.blob)) == b"hello gzip"

        await client.call_tool("toggle-subscriber-updates")
        with trio.fail_after(10):
            assert await changes.__anext__() == Change("updated", text_uri)

    # Logging: the toggle sends one message at once (then every 5 s).
    await client.set_log_level("debug")
    await client.call_tool("toggle-simulated-logging")
    # Other messages come too, at any time (about roots and subscriptions); the simulated
    # one is at a random level, which its text names ("debug" lets every level through).
    log = await answers.next_log()
    while not log.data.endswith(("-level message", " level-message")):
        log = await answers.next_log()
    assert log.data.lower().startswith(log.level)


# -- closing our stdio client ------------------------------------------------------------------


PEERS = ["sdk-mcpserver-asyncio", "sdk-lowlevel-trio", "npm-node", "npm-exec"]


def peer_command(peer: str, request: pytest.FixtureRequest) -> list[str]:
    if peer == "sdk-mcpserver-asyncio":
        return SDK_SERVER
    if peer == "sdk-lowlevel-trio":
        return [*SDK_SERVER, "lowlevel", "--trio"]
    npm: NpmServer = request.getfixturevalue("npm_server_everything")
    return npm.node_command if peer == "npm-node" else npm.npm_exec_command


@pytest.mark.parametrize("peer", PEERS)
async def test_closing_our_stdio_client_leaves_no_process(
    peer: str, request: pytest.FixtureRequest
) -> None:
    command = peer_command(peer, request)
    stderr: list[str] = []
    with trio.fail_after(LIMIT):
        # A generous grace: the peer should exit on its own once its stdin closes.
        async with open_stdio_client(command, env=ENV, grace=10, stderr=stderr.append) as client:
            assert await client.list_tools()
            stream = client.session.stream
            pid = stream.pid  # type: ignore[attr-defined]
            assert os.getpgid(pid) == pid  # the child leads its own process group
            running = living_in_group(pid)
            assert pid in running
            if peer == "npm-exec":
                assert len(running) >= 2  # npm, and node under it
    assert living_in_group(pid) == []
    # It exited by itself on end of input (no signal was needed).
    assert stream.returncode == 0, stderr  # type: ignore[attr-defined]
