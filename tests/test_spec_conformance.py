"""Everything a server and a client say while exercising every feature validates against
the official JSON Schema of the revision they speak."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import jsonschema
import pytest
import trio
from feature_harness import MODERN, RecordingStream, open_pair
from spec_support import load_schema

from trio_mcp import Context, McpError, Server, jsonrpc as rpc
from trio_mcp.types import (
    Annotations,
    AudioContent,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitResult,
    EmbeddedResource,
    Icon,
    ImageContent,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    Root,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

VERSIONS = ["2025-06-18", "2025-11-25", MODERN]

#: The result type each request is answered with.
RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}


@attrs.define
class Spec:
    version: str
    definitions: dict[str, Any]
    key: str
    validator_class: Any

    def by_method(self, method: str, suffix: str) -> str:
        for name, definition in self.definitions.items():
            const = definition.get("properties", {}).get("method", {}).get("const")
            if const == method and name.endswith(suffix):
                return name
        raise KeyError(f"{self.version} has no {suffix} for {method}")

    def problems(self, name: str, value: Any) -> list[str]:
        schema = {"$ref": f"#/{self.key}/{name}", self.key: self.definitions}
        validator = self.validator_class(schema)
        return [
            f"{name} at /{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(value)
        ]


def spec_for(version: str) -> Spec:
    schema = load_schema(version)
    if schema is None:
        pytest.skip("the spec schemas are not available")
    key = "$defs" if "$defs" in schema else "definitions"
    return Spec(
        version,
        schema[key],
        key,
        jsonschema.validators.validator_for(schema),
    )


def as_json(message: rpc.Message) -> dict[str, Any]:
    import orjson

    return orjson.loads(rpc.dumps(message))  # type: ignore[no-any-return]


def check_conversation(
    spec: Spec, client_sent: RecordingStream, server_sent: RecordingStream
) -> list[str]:
    """Validate every message of the conversation; returns the problems found."""
    problems: list[str] = []
    methods: dict[tuple[str, Any], str] = {}
    for side, stream in (("client", client_sent), ("server", server_sent)):
        for message in stream.sent:
            data = as_json(message)
            if isinstance(message, rpc.JsonRpcRequest):
                methods[(side, message.id)] = message.method
                problems += spec.problems(spec.by_method(message.method, "Request"), data)
            elif isinstance(message, rpc.JsonRpcNotification):
                problems += spec.problems(spec.by_method(message.method, "Notification"), data)
    for side, stream in (("client", client_sent), ("server", server_sent)):
        asker = "server" if side == "client" else "client"
        for message in stream.sent:
            data = as_json(message)
            if isinstance(message, rpc.ResultResponse):
                method = methods[(asker, message.id)]
                name = RESULTS[method]
                if message.result.get("resultType") == "input_required":
                    name = "InputRequiredResult"
                problems += spec.problems(name, message.result)
                if "JSONRPCResultResponse" in spec.definitions:
                    problems += spec.problems("JSONRPCResultResponse", data)
            elif isinstance(message, rpc.ErrorResponse):
                error_def = (
                    "JSONRPCErrorResponse"
                    if "JSONRPCErrorResponse" in spec.definitions
                    else "JSONRPCError"
                )
                problems += spec.problems(error_def, data)
    return problems


@attrs.define
class Point:
    x: float
    y: float


def make_server() -> Server:
    server = Server(
        "conformance",
        version="1.0",
        title="Conformance",
        description="Says everything once",
        icons=[Icon(src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"])],
        instructions="Use it.",
        page_size=3,
        cache_ttl_ms=1000,
    )

    @server.tool(
        title="Everything",
        annotations=ToolAnnotations(read_only_hint=True),
        icons=[Icon(src="https://example.com/t.png")],
        meta={"com.example/x": 1},
    )
    async def everything(ctx: Context, steps: int = 2) -> list[object]:
        await ctx.info("hello", logger="everything")
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return [
            TextContent(text="t", annotations=Annotations(audience=["user"], priority=0.5)),
            ImageContent.from_bytes(b"png", "image/png"),
            AudioContent.from_bytes(b"wav", "audio/wav"),
            ResourceLink(uri="mem://a", name="a"),
            EmbeddedResource(resource=TextResourceContents(uri="mem://b", text="b")),
        ]

    @server.tool()
    async def point() -> Point:
        return Point(1.0, 2.0)

    @server.tool()
    async def asks(ctx: Context) -> str:
        properties: dict[str, Any] = {
            "name": {"type": "string", "default": "x"},
            "n": {"type": "integer"},
            "color": {"type": "string", "enum": ["r", "g"]},
            "hex": {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}]},
        }
        if ctx.era == "modern" or ctx.protocol_version >= "2025-11-25":
            properties["many"] = {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
        answer = await ctx.elicit("Name?", {"properties": properties})
        sample = await ctx.sample("Hi", max_tokens=5, system_prompt="Be brief")
        roots = await ctx.list_roots()
        return f"{answer.action} {sample.model} {len(roots)}"

    @server.tool()
    async def failing() -> str:
        raise RuntimeError("no")

    for i in range(4):
        server.add_tool(lambda i=i: str(i), name=f"filler{i}")

    @server.resource("mem://static", mime_type="text/plain", annotations=Annotations(priority=1))
    def static() -> str:
        return "static"

    @server.resource("mem://blob", mime_type="application/octet-stream")
    def blob() -> bytes:
        return b"\0\1"

    @server.resource("mem://items/{item}", title="Items")
    def item(item: int) -> str:
        return str(item)

    @server.prompt(title="Greeting")
    def greeting(name: str, mood: str | None = None) -> list[object]:
        return [f"Hello {name}", ImageContent.from_bytes(b"png", "image/png")]

    @server.completion(prompt="greeting", argument="name")
    def names(value: str, context: Mapping[str, str]) -> list[str]:
        return ["ann", "bob"]

    return server


async def elicitation(params: Any) -> ElicitResult:
    content: dict[str, Any] = {"name": "Ann", "n": 1}
    if "many" in params.requested_schema["properties"]:
        content["many"] = ["a"]
    return ElicitResult(action="accept", content=content)


async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant", content=TextContent(text="ok"), model="m", stop_reason="endTurn"
    )


async def roots() -> list[Root]:
    return [Root(uri="file:///w", name="w")]


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_whole_conversation_conforms(version: str, autojump_clock: Any) -> None:
    spec = spec_for(version)
    server = make_server()
    async with open_pair(
        server,
        protocol_version=version,
        elicitation=elicitation,
        sampling=sampling,
        roots=roots,
        cache=False,
    ) as pair:
        client = pair.client
        await client.ping()
        await client.set_log_level("debug")
        await client.list_tools()
        await client.call_tool("everything", {"steps": 2}, on_progress=lambda p: None)
        await client.call_tool("point")
        await client.call_tool("asks")
        await client.call_tool("failing")
        for bad in ("nope",):
            with pytest.raises(McpError):
                await client.call_tool(bad)
        await client.list_resources()
        await client.list_resource_templates()
        await client.read_resource("mem://static")
        await client.read_resource("mem://blob")
        await client.read_resource("mem://items/3")
        with pytest.raises(McpError):
            await client.read_resource("mem://missing")
        await client.list_prompts()
        await client.get_prompt("greeting", {"name": "Ann"})
        with pytest.raises(McpError):
            await client.get_prompt("greeting")
        await client.complete(PromptReference(name="greeting"), "name", "a")
        await client.complete(ResourceTemplateReference(uri="mem://items/{item}"), "item", "1")
        async with client.listen(
            tools=True, prompts=True, resources=True, resource_uris=["mem://static"]
        ) as changes:
            server.add_tool(lambda: "x", name="late")
            server.notify_resource_updated("mem://static")
            with trio.fail_after(5):
                await changes.__anext__()
                await changes.__anext__()
            if version == MODERN:
                server.shutdown()
                async for _ in changes:
                    pass
        await client.list_tools()
    problems = check_conversation(spec, pair.client_sent, pair.server_sent)
    assert problems == []
    methods = {m.method for m in pair.server_sent.notifications()}
    assert "notifications/progress" in methods
    assert "notifications/message" in methods
    assert "notifications/resources/updated" in methods
