"""Tools, in both eras: listing, schemas, calling, result conversion, errors, cancellation."""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal, TypedDict

import attrs
import orjson
import pytest
import trio
from feature_harness import ALL_VERSIONS, ERAS, MODERN, open_pair
from schema_host import serving_schemas

from trio_mcp import Context, ErrorCode, McpError, Server, ToolError, jsonrpc as rpc
from trio_mcp.server import Field, SchemaError
from trio_mcp.types import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


def wire_result(sent: list[rpc.Message], method: str, client_sent: list[rpc.Message]) -> Any:
    """The raw ``result`` the server sent for the last ``method`` request."""
    ids = [m.id for m in client_sent if isinstance(m, rpc.JsonRpcRequest) and m.method == method]
    for message in reversed(sent):
        if isinstance(message, rpc.ResultResponse) and message.id == ids[-1]:
            return message.result
    raise AssertionError(f"no result for {method}")


# -- listing ---------------------------------------------------------------------------------


async def test_tools_are_listed_with_their_metadata(version: str) -> None:
    server = Server("t")

    @server.tool(
        title="Forecast",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
        icons=[Icon(src="https://example.com/sun.png", mime_type="image/png", sizes=["48x48"])],
        meta={"com.example/team": "weather"},
    )
    async def forecast(city: Annotated[str, "The city"], days: int = 3) -> str:
        """The forecast for a city.

        More detail that stays out of the description.
        """
        return f"sun in {city}"

    async with open_pair(server, protocol_version=version) as pair:
        (tool,) = await pair.client.list_tools()
        raw = wire_result(pair.server_sent.sent, "tools/list", pair.client_sent.sent)
    assert tool.name == "forecast"
    assert tool.title == "Forecast"
    assert (
        tool.description
        == "The forecast for a city.\n\nMore detail that stays out of the description."
    )
    assert tool.annotations == ToolAnnotations(read_only_hint=True, open_world_hint=False)
    assert tool.icons == [
        Icon(src="https://example.com/sun.png", mime_type="image/png", sizes=["48x48"])
    ]
    assert tool.meta == {"com.example/team": "weather"}
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "days": {"type": "integer", "default": 3},
        },
        "required": ["city"],
    }
    assert tool.output_schema is None
    assert raw["tools"][0]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    if version == MODERN:
        assert raw["resultType"] == "complete"
        assert raw["ttlMs"] == 0
        assert raw["cacheScope"] == "public"
    else:
        assert "resultType" not in raw
        assert "ttlMs" not in raw


async def test_list_order_is_registration_order_and_stable(version: str) -> None:
    server = Server("t")
    for name in ["zeta", "alpha", "mid"]:
        server.add_tool(lambda: "x", name=name)
    async with open_pair(server, protocol_version=version, cache=False) as pair:
        first = [t.name for t in await pair.client.list_tools()]
        second = [t.name for t in await pair.client.list_tools()]
        server.remove_tool("alpha")
        server.add_tool(lambda: "x", name="alpha")
        third = [t.name for t in await pair.client.list_tools()]
    assert first == second == ["zeta", "alpha", "mid"]
    assert third == ["zeta", "mid", "alpha"]


async def test_bare_decorator_registers_the_tool(version: str) -> None:
    server = Server("t")

    @server.tool
    async def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def shout(text: str) -> str:
        return text.upper()

    async with open_pair(server, protocol_version=version) as pair:
        tools = {t.name: t for t in await pair.client.list_tools()}
        added = await pair.client.call_tool("add", {"a": 40})
        shouted = await pair.client.call_tool("shout", {"text": "hi"})
    assert set(tools) == {"add", "shout"}
    assert tools["add"].description == "Add two numbers."
    assert tools["add"].input_schema["required"] == ["a"]
    assert added.structured_content == {"result": 42}
    assert shouted.content == [TextContent(text="HI")]
    # The decorated functions are returned unchanged.
    assert await add(1, 1) == 2
    assert shout("a") == "A"


def test_a_tool_option_given_by_position_is_a_clear_error() -> None:
    server = Server("t")
    with pytest.raises(TypeError, match=r"by keyword, as in @server.tool\(name='add'\)"):
        server.tool("add")  # type: ignore[call-overload]
    assert server.tools == {}


def test_both_decorator_forms_keep_the_function_type_under_mypy(tmp_path: Any) -> None:
    """mypy strict accepts ``@server.tool`` and ``@server.tool(...)`` (and the prompt
    forms), the decorated names keep their signatures, and a misspelled option is an
    error at the call."""
    from mypy import api  # the test extra installs it

    source = tmp_path / "decorated.py"
    source.write_text(
        "from trio_mcp import Server\n"
        "server = Server('t')\n"
        "@server.tool\n"
        "async def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "@server.tool(name='mul', scopes=['math'], task='optional')\n"
        "def mul(a: int, b: int) -> int:\n"
        "    return a * b\n"
        "@server.prompt\n"
        "def greet(name: str) -> str:\n"
        "    return name\n"
        "@server.prompt(title='Hi')\n"
        "def hi(name: str) -> str:\n"
        "    return name\n"
        "reveal_type(add)\n"
        "reveal_type(mul)\n"
        "reveal_type(greet)\n"
        "reveal_type(hi)\n"
        "server.tool(nmae='x')\n"
    )
    out, _, status = api.run(["--strict", "--no-incremental", "--no-error-summary", str(source)])
    lines = [line.split(": ", 1)[1] for line in out.splitlines()]
    assert lines == [
        'note: Revealed type is "def (a: int, b: int) -> typing.Coroutine[Any, Any, int]"',
        'note: Revealed type is "def (a: int, b: int) -> int"',
        'note: Revealed type is "def (name: str) -> str"',
        'note: Revealed type is "def (name: str) -> str"',
        'error: Unexpected keyword argument "nmae" for overloaded function "tool" of "Server"  '
        "[call-overload]",
    ]
    assert status == 1


@pytest.mark.parametrize(
    "name",
    ["", "has space", "comma,name", "x" * 129, "slash/name", "émoji", "semi;colon", "bad\n"],
)
def test_invalid_tool_names_are_refused(name: str) -> None:
    server = Server("t")
    with pytest.raises(ValueError, match="invalid tool name"):
        server.add_tool(lambda: "x", name=name)


@pytest.mark.parametrize(
    "name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a-b", "x" * 128]
)
def test_valid_tool_names(name: str) -> None:
    Server("t").add_tool(lambda: "x", name=name)


# -- input schemas ---------------------------------------------------------------------------


class Address(TypedDict):
    street: str
    zip: str


@attrs.define
class Order:
    """An order."""

    item: str
    quantity: int = 1


async def test_input_schema_from_type_hints(version: str) -> None:
    server = Server("t")

    @server.tool()
    async def place(
        order: Order,
        address: Address,
        express: bool = False,
        note: str | None = None,
        tags: list[str] | None = None,
        unit: Literal["kg", "lb"] = "kg",
        weight: Annotated[float, Field(description="In units", schema={"minimum": 0})] = 1.0,
    ) -> str:
        return f"{order.quantity}x{order.item} to {address['street']}"

    async with open_pair(server, protocol_version=version) as pair:
        (tool,) = await pair.client.list_tools()
        result = await pair.client.call_tool(
            "place",
            {"order": {"item": "tea", "quantity": 2}, "address": {"street": "Main", "zip": "1"}},
        )
    assert tool.input_schema["required"] == ["order", "address"]
    assert tool.input_schema["properties"]["order"] == {"$ref": "#/$defs/Order"}
    assert tool.input_schema["properties"]["weight"] == {
        "type": "number",
        "description": "In units",
        "minimum": 0,
        "default": 1.0,
    }
    assert set(tool.input_schema["$defs"]) == {"Order", "Address"}
    assert result.content == [TextContent(text="2xtea to Main")]


VERBATIM = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "point": {"$ref": "#/$defs/point"},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
        "card": {"type": "string"},
        "cvv": {"type": "string"},
    },
    "dependentRequired": {"card": ["cvv"]},
    "required": ["point"],
    "unevaluatedProperties": False,
    "$defs": {
        "point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
        }
    },
}


async def test_verbatim_input_schema_is_kept_byte_for_byte_and_enforced(version: str) -> None:
    server = Server("t")
    seen: list[dict[str, Any]] = []

    @server.tool(input_schema=VERBATIM)
    async def plot(**arguments: Any) -> str:
        seen.append(arguments)
        return "ok"

    async with open_pair(server, protocol_version=version) as pair:
        await pair.client.list_tools()
        raw = wire_result(pair.server_sent.sent, "tools/list", pair.client_sent.sent)
        good = await pair.client.call_tool("plot", {"point": {"x": 1, "y": 2}, "pair": ["a", 1]})
        missing_ref = await pair.client.call_tool("plot", {"point": {"x": 1}})
        dependent = await pair.client.call_tool("plot", {"point": {"x": 1, "y": 2}, "card": "4"})
        extra = await pair.client.call_tool("plot", {"point": {"x": 1, "y": 2}, "other": 1})
        prefix = await pair.client.call_tool("plot", {"point": {"x": 1, "y": 2}, "pair": [1, 1]})
    assert orjson.dumps(raw["tools"][0]["inputSchema"]) == orjson.dumps(VERBATIM)
    assert not good.is_error
    assert seen == [{"point": {"x": 1, "y": 2}, "pair": ["a", 1]}]
    for bad, needle in [
        (missing_ref, "'y' is a required property"),
        (dependent, "'cvv' is a dependency of 'card'"),
        (extra, "Unevaluated properties are not allowed"),
        (prefix, "1 is not of type 'string'"),
    ]:
        assert bad.is_error
        assert bad.content[0].text.startswith("Invalid arguments for tool plot: ")  # type: ignore[union-attr]
        assert needle in bad.content[0].text  # type: ignore[union-attr]


async def test_verbatim_draft07_schema(version: str) -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": {"type": "number"}},
        "required": ["a"],
    }
    server = Server("t")
    server.add_tool(lambda a: a * 2, name="double", input_schema=schema)
    async with open_pair(server, protocol_version=version) as pair:
        ok = await pair.client.call_tool("double", {"a": 2})
        bad = await pair.client.call_tool("double", {"a": "2"})
    assert ok.content == [TextContent(text="4")]
    assert bad.is_error


async def test_verbatim_schema_tools_may_have_any_hints(version: str) -> None:
    server = Server("t")
    schema = {"type": "object", "properties": {"data": {"type": "string"}}}

    @server.tool(input_schema=schema)
    async def upload(data: bytes) -> str:  # bytes has no JSON Schema form, nor needs one
        return f"got {data!r}"

    with pytest.raises(SchemaError):
        server.add_tool(upload, name="typed")
    async with open_pair(server, protocol_version=version) as pair:
        result = await pair.client.call_tool("upload", {"data": "x"})
    assert result.content == [TextContent(text="got 'x'")]


def test_invalid_or_unsupported_verbatim_schemas_are_refused() -> None:
    server = Server("t")
    with pytest.raises(ValueError, match="invalid JSON Schema"):
        server.add_tool(lambda: "x", name="bad", input_schema={"type": "object", "required": 3})
    with pytest.raises(ValueError, match="unsupported JSON Schema dialect"):
        server.add_tool(
            lambda: "x",
            name="odd",
            input_schema={"$schema": "https://example.com/my-dialect", "type": "object"},
        )


@pytest.mark.parametrize(
    "schema", [{"type": "array"}, {"properties": {"a": {}}}, {"type": ["object", "null"]}]
)
def test_verbatim_input_schema_must_be_an_object_schema(schema: dict[str, Any]) -> None:
    """Every revision's schema has ``inputSchema.type: const "object"``."""
    with pytest.raises(ValueError, match='input_schema must have "type": "object" at its root'):
        Server("t").add_tool(lambda: "x", name="bad", input_schema=schema)


@pytest.mark.parametrize("revision", ALL_VERSIONS)
async def test_non_object_structured_content_reaches_only_the_revision_that_allows_it(
    revision: str,
) -> None:
    server = Server("t")
    result = CallToolResult(content=[TextContent(text="hello")], structured_content="hello")
    server.add_tool(lambda: result, name="hello")
    server.add_tool(lambda: CallToolResult(content=[], structured_content={"a": 1}), name="object")
    async with open_pair(server, protocol_version=revision) as pair:
        hello = await pair.client.call_tool("hello")
        raw = wire_result(pair.server_sent.sent, "tools/call", pair.client_sent.sent)
        obj = await pair.client.call_tool("object")
    assert hello.content == [TextContent(text="hello")]
    if revision == MODERN:
        assert raw["structuredContent"] == "hello"
    else:
        assert "structuredContent" not in raw
    if revision >= "2025-06-18":
        assert obj.structured_content == {"a": 1}


async def test_remote_refs_are_never_fetched(version: str) -> None:
    """The ``$ref`` points at a live local server whose schema would accept the argument:
    fetching it would both hit the server and let the call through."""
    with serving_schemas() as host:
        schema = {
            "type": "object",
            "properties": {"a": {"$ref": f"{host.url}/schemas/a.json"}},
        }
        server = Server("t")
        server.add_tool(lambda **kw: "called", name="remote", input_schema=schema)
        async with open_pair(server, protocol_version=version) as pair:
            result = await pair.client.call_tool("remote", {"a": "x"})
    assert host.hits == []
    assert result.is_error
    assert "cannot validate" in result.content[0].text  # type: ignore[union-attr]


# -- bad arguments ---------------------------------------------------------------------------


async def test_field_schema_constraints_are_enforced_before_the_handler(version: str) -> None:
    server = Server("t")
    seen: list[float] = []

    @server.tool()
    def weigh(weight: Annotated[float, Field(schema={"minimum": 0})]) -> str:
        seen.append(weight)
        return f"{weight} kg"

    async with open_pair(server, protocol_version=version) as pair:
        (tool,) = await pair.client.list_tools()
        bad = await pair.client.call_tool("weigh", {"weight": -5})
        good = await pair.client.call_tool("weigh", {"weight": 5})
    assert tool.input_schema["properties"]["weight"] == {"type": "number", "minimum": 0}
    assert bad.is_error is True
    assert bad.content == [
        TextContent(
            text="Invalid arguments for tool weigh: weight: -5 is less than the minimum of 0"
        )
    ]
    assert good.content == [TextContent(text="5.0 kg")]
    assert seen == [5.0]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (None, "Invalid arguments for tool add: a: required argument missing"),
        ({"a": 1}, "Invalid arguments for tool add: b: required argument missing"),
        ({"a": "1", "b": 2}, "Invalid arguments for tool add: a: expected an integer, got str '1'"),
        ({"a": 1, "b": None}, "Invalid arguments for tool add: b: expected an integer, got null"),
        (
            {"a": 1, "b": 2, "scale": [1]},
            "Invalid arguments for tool add: scale: expected a number",
        ),
    ],
)
async def test_bad_arguments_give_an_error_result(
    version: str, arguments: dict[str, Any] | None, message: str
) -> None:
    server = Server("t")
    calls = []

    @server.tool()
    async def add(a: int, b: int, scale: float = 1.0) -> str:
        calls.append((a, b))
        return str((a + b) * scale)

    async with open_pair(server, protocol_version=version) as pair:
        result = await pair.client.call_tool("add", arguments)
        again = await pair.client.call_tool("add", {"a": 1, "b": 2})
    assert result.is_error is True
    assert result.content[0].text.startswith(message)  # type: ignore[union-attr]
    assert calls == [(1, 2)]
    assert again.content == [TextContent(text="3.0")]


async def test_unknown_tool_is_a_protocol_error(version: str) -> None:
    async with open_pair(Server("t", tools=True), protocol_version=version) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.call_tool("nope")
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert "nope" in info.value.message


# -- results ---------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\nfake"


async def test_return_values_become_content(version: str) -> None:
    server = Server("t")
    annotated = TextContent(text="hi", annotations=Annotations(audience=["user"], priority=0.5))
    image = ImageContent.from_bytes(PNG, "image/png")
    audio = AudioContent.from_bytes(b"RIFF", "audio/wav")
    text_resource = EmbeddedResource(
        resource=TextResourceContents(uri="mem://a", text="A", mime_type="text/plain")
    )
    blob_resource = EmbeddedResource(resource=BlobResourceContents.from_bytes("mem://b", b"\0\1"))
    link = ResourceLink(uri="file:///x.rs", name="x.rs", mime_type="text/x-rust")
    returns: dict[str, Any] = {
        "text": "plain",
        "nothing": None,
        "annotated": annotated,
        "image": image,
        "audio": audio,
        "text_resource": text_resource,
        "blob_resource": blob_resource,
        "link": link,
        "mixed": ["a", image, {"k": 1}],
    }
    for name, value in returns.items():
        server.add_tool(lambda value=value: value, name=name, structured=False)

    async with open_pair(server, protocol_version=version) as pair:
        got = {name: await pair.client.call_tool(name) for name in returns}
    assert got["text"].content == [TextContent(text="plain")]
    assert got["nothing"].content == []
    assert got["annotated"].content == [annotated]
    assert got["image"].content == [image]
    assert got["image"].content[0].decode() == PNG  # type: ignore[union-attr]
    assert got["audio"].content == [audio]
    assert got["text_resource"].content == [text_resource]
    assert got["blob_resource"].content[0].resource.decode() == b"\0\1"  # type: ignore[union-attr]
    assert got["link"].content == [link]
    assert got["mixed"].content == [TextContent(text="a"), image, TextContent(text='{"k":1}')]
    assert all(not r.is_error and r.structured_content is None for r in got.values())


async def test_bytes_become_an_embedded_blob(version: str) -> None:
    server = Server("t")

    @server.tool()
    async def raw() -> bytes:
        return b"\x00\xffdata"

    server.add_tool(lambda: [b"\x01", "and text", bytearray(b"\x02")], name="several")
    server.add_tool(lambda: memoryview(b"\x03"), name="untyped")
    async with open_pair(server, protocol_version=version) as pair:
        tools = {t.name: t for t in await pair.client.list_tools()}
        got = {name: await pair.client.call_tool(name) for name in tools}
        wire = wire_result(pair.server_sent.sent, "tools/call", pair.client_sent.sent)
    assert tools["raw"].output_schema is None
    assert all(not r.is_error and r.structured_content is None for r in got.values())
    (block,) = got["raw"].content
    assert isinstance(block, EmbeddedResource)
    assert isinstance(block.resource, BlobResourceContents)
    assert block.resource.uri == "tool://raw/result"
    assert block.resource.mime_type == "application/octet-stream"
    assert block.resource.decode() == b"\x00\xffdata"
    first, text, second = got["several"].content
    assert text == TextContent(text="and text")
    assert [(b.resource.uri, b.resource.decode()) for b in (first, second)] == [  # type: ignore[union-attr]
        ("tool://several/result/0", b"\x01"),
        ("tool://several/result/2", b"\x02"),
    ]
    assert wire["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "tool://untyped/result",
                "mimeType": "application/octet-stream",
                "blob": base64.b64encode(b"\x03").decode(),
            },
        }
    ]


async def test_call_tool_result_passes_through(version: str) -> None:
    server = Server("t")
    result = CallToolResult(content=[TextContent(text="custom")], is_error=True, meta={"k": "v"})
    server.add_tool(lambda: result, name="custom")
    async with open_pair(server, protocol_version=version) as pair:
        got = await pair.client.call_tool("custom")
    assert got.content == [TextContent(text="custom")]
    assert got.is_error is True
    assert got.meta is not None
    assert got.meta["k"] == "v"


@attrs.define
class Weather:
    temperature: float
    conditions: str


async def test_structured_output_from_return_annotation(version: str) -> None:
    server = Server("t")

    @server.tool()
    async def weather(city: str) -> Weather:
        return Weather(22.5, "cloudy")

    @server.tool()
    async def count(words: str) -> int:
        return len(words.split())

    @server.tool()
    async def stats() -> dict[str, int]:
        return {"a": 1}

    async with open_pair(server, protocol_version=version) as pair:
        tools = {t.name: t for t in await pair.client.list_tools()}
        w = await pair.client.call_tool("weather", {"city": "Oslo"})
        c = await pair.client.call_tool("count", {"words": "a b c"})
        s = await pair.client.call_tool("stats")
    assert tools["weather"].output_schema == {
        "type": "object",
        "title": "Weather",
        "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
        "required": ["temperature", "conditions"],
    }
    assert tools["count"].output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert w.structured_content == {"temperature": 22.5, "conditions": "cloudy"}
    assert orjson.loads(w.content[0].text) == w.structured_content  # type: ignore[union-attr]
    assert c.structured_content == {"result": 3}
    assert s.structured_content == {"a": 1}


async def test_verbatim_output_schema_and_the_server_checks_its_own_output(version: str) -> None:
    server = Server("t")
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0}},
        "required": ["n"],
    }

    @server.tool(output_schema=schema)
    async def number(n: int) -> Any:
        return {"n": n}

    @server.tool(output_schema=schema)
    async def raw(n: int) -> CallToolResult:
        return CallToolResult(content=[], structured_content={"n": str(n)})

    @server.tool(output_schema=schema)
    async def nothing() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="no structure")])

    @server.tool()
    async def typed() -> Weather:
        return {"temperature": "hot"}  # type: ignore[return-value]

    async with open_pair(server, protocol_version=version) as pair:
        ok = await pair.client.call_tool("number", {"n": 3})
        negative = await pair.client.call_tool("number", {"n": -1})
        wrong = await pair.client.call_tool("raw", {"n": 3})
        missing = await pair.client.call_tool("nothing")
        lying = await pair.client.call_tool("typed")
    assert ok.structured_content == {"n": 3}
    for bad in (negative, wrong, missing, lying):
        assert bad.is_error is True
        assert bad.structured_content is None
    assert "breaks its outputSchema" in negative.content[0].text  # type: ignore[union-attr]
    assert "returned no structured content" in missing.content[0].text  # type: ignore[union-attr]
    assert "temperature" in lying.content[0].text  # type: ignore[union-attr]


# -- failures --------------------------------------------------------------------------------


async def test_a_raising_tool_gives_an_error_result(version: str) -> None:
    server = Server("t")

    @server.tool()
    async def explode() -> str:
        raise RuntimeError("the disk is on fire")

    @server.tool()
    def refuse(reason: str) -> str:
        raise ToolError(f"Cannot do that: {reason}")

    @server.tool()
    async def protocol() -> str:
        raise McpError("Invalid params: no", code=ErrorCode.INVALID_PARAMS)

    async with open_pair(server, protocol_version=version) as pair:
        exploded = await pair.client.call_tool("explode")
        refused = await pair.client.call_tool("refuse", {"reason": "date in the past"})
        with pytest.raises(McpError) as info:
            await pair.client.call_tool("protocol")
        assert (await pair.client.call_tool("refuse", {"reason": "x"})).is_error
    assert exploded.is_error is True
    assert exploded.content == [
        TextContent(text="Error executing tool explode: the disk is on fire")
    ]
    assert refused.content == [TextContent(text="Cannot do that: date in the past")]
    assert info.value.code == ErrorCode.INVALID_PARAMS


async def test_a_cancelled_tool_sends_nothing(version: str, autojump_clock: Any) -> None:
    server = Server("t")
    started = trio.Event()
    cancelled = trio.Event()

    @server.tool()
    async def slow(ctx: Context) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.set()
            raise
        return "never"  # pragma: no cover

    async with open_pair(server, protocol_version=version) as pair:
        with trio.move_on_after(5) as scope:
            await pair.client.call_tool("slow")
        assert scope.cancelled_caught
        await cancelled.wait()
        await pair.client.list_tools()  # a round trip: a late answer would be here by now
        (call,) = pair.client_sent.requests("tools/call")
        (cancel,) = pair.client_sent.notifications("notifications/cancelled")
        assert cancel.params is not None
        assert cancel.params["requestId"] == call.id
        assert pair.server_sent.responses_to(call.id) == []
        assert pair.client.connection.statistics().responses_dropped == 0


async def test_sync_tools_and_context_parameter(version: str) -> None:
    server = Server("t")

    @server.tool()
    def where(ctx: Context) -> str:
        return f"{ctx.era} {ctx.protocol_version} {ctx.method}"

    async with open_pair(server, protocol_version=version) as pair:
        (tool,) = await pair.client.list_tools()
        result = await pair.client.call_tool("where")
    era = "modern" if version == MODERN else "legacy"
    assert result.content == [TextContent(text=f"{era} {version} tools/call")]
    assert tool.input_schema == {"type": "object", "properties": {}}


# -- older revisions -------------------------------------------------------------------------


@pytest.mark.parametrize("old", ALL_VERSIONS)
async def test_fields_newer_than_the_revision_are_left_out(old: str) -> None:
    server = Server("t")

    @server.tool(
        title="W",
        annotations=ToolAnnotations(read_only_hint=True),
        icons=[Icon(src="https://example.com/i.png")],
    )
    async def weather() -> Weather:
        return Weather(1.0, "x")

    async with open_pair(server, protocol_version=old) as pair:
        await pair.client.list_tools()
        listed = wire_result(pair.server_sent.sent, "tools/list", pair.client_sent.sent)
        await pair.client.call_tool("weather")
        called = wire_result(pair.server_sent.sent, "tools/call", pair.client_sent.sent)
    tool = listed["tools"][0]
    assert ("title" in tool) == (old >= "2025-06-18")
    assert ("outputSchema" in tool) == (old >= "2025-06-18")
    assert ("icons" in tool) == (old >= "2025-11-25")
    assert ("annotations" in tool) == (old >= "2025-03-26")
    assert ("structuredContent" in called) == (old >= "2025-06-18")
    assert orjson.loads(called["content"][0]["text"]) == {"temperature": 1.0, "conditions": "x"}


@pytest.mark.parametrize("old", ["2024-11-05", "2025-03-26"])
async def test_content_types_newer_than_the_revision_are_downgraded(old: str) -> None:
    server = Server("t")
    link = ResourceLink(uri="file:///x.rs", name="x.rs", title="Main", mime_type="text/x-rust")
    audio = AudioContent(data=base64.b64encode(b"RIFF").decode(), mime_type="audio/wav")
    server.add_tool(lambda: [link, audio, "text"], name="both")
    async with open_pair(server, protocol_version=old) as pair:
        result = await pair.client.call_tool("both")
    kinds = [block.type for block in result.content]
    assert "resource_link" not in kinds
    assert ("audio" in kinds) == (old >= "2025-03-26")
    assert result.content[0] == TextContent(text="Main: file:///x.rs (text/x-rust)")
    assert result.content[-1] == TextContent(text="text")
