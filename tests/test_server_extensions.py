"""Protocol extensions declared with ``Server(extensions=...)``, and the ``resultType`` that
2026-07-28 results of :meth:`Server.method` handlers carry (the conformance fixture added
both by hand before)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from spec_support import load_schema

from trio_mcp import Context, Server, jsonrpc
from trio_mcp.testing import connect
from trio_mcp.transports import MemoryMessageStream, memory_stream_pair

SKILLS = "io.modelcontextprotocol/skills"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}


async def ask(
    stream: MemoryMessageStream, id: int, method: str, params: dict[str, Any] | None
) -> dict[str, Any]:
    """Send a raw request; return its result (asserting it is not an error)."""
    await stream.send(jsonrpc.JsonRpcRequest(id, method, params))
    with trio.fail_after(5):
        while True:
            message = await stream.receive()
            assert not isinstance(message, jsonrpc.ErrorResponse), message.error
            if isinstance(message, jsonrpc.ResultResponse):
                assert message.id == id
                return message.result


async def initialize(stream: MemoryMessageStream, version: str) -> dict[str, Any]:
    result = await ask(
        stream,
        0,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )
    await stream.send(jsonrpc.JsonRpcNotification("notifications/initialized", None))
    return result


def skills_server() -> Server:
    return Server("s", extensions={SKILLS: {"directoryRead": True}, "com.example/x": {}})


async def test_extensions_are_declared_to_modern_peers() -> None:
    server = skills_server()
    ours, theirs = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, theirs)
        discovered = await ask(ours, 1, "server/discover", {"_meta": MODERN_META})
        assert discovered["capabilities"]["extensions"] == {
            SKILLS: {"directoryRead": True},
            "com.example/x": {},
        }
        await ours.aclose()


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_extensions_are_not_sent_to_revisions_without_the_field(version: str) -> None:
    schema = load_schema(version)
    if schema is not None:  # the premise: this revision's schema has no such field
        capabilities = schema["$defs" if "$defs" in schema else "definitions"]
        assert "extensions" not in capabilities["ServerCapabilities"]["properties"]
    server = skills_server()
    ours, theirs = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, theirs)
        result = await initialize(ours, version)
        assert result["protocolVersion"] == version
        assert "extensions" not in result["capabilities"]
        await ours.aclose()


async def test_extensions_reach_our_client_and_the_server_lists_them() -> None:
    server = skills_server()
    assert dict(server.extensions) == {SKILLS: {"directoryRead": True}, "com.example/x": {}}
    async with connect(server, protocol_version="2026-07-28") as client:
        assert client.server_capabilities.extensions == {
            SKILLS: {"directoryRead": True},
            "com.example/x": {},
        }
    async with connect(server, protocol_version="2025-11-25") as client:
        assert client.server_capabilities.extensions is None
    assert Server("plain").capabilities().extensions is None


@pytest.mark.parametrize(
    "extensions",
    [{"skills": {}}, {"/skills": {}}, {"io.example/": {}}, {"-io/x": {}}, {"io..x/y": {}}],
)
def test_an_extension_identifier_needs_its_prefix(extensions: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="invalid extension identifier"):
        Server("s", extensions=extensions)


def test_extension_settings_are_objects() -> None:
    with pytest.raises(TypeError, match="must be a mapping"):
        Server("s", extensions={SKILLS: True})  # type: ignore[dict-item]


# -- resultType on Server.method results ------------------------------------------------------

SHARED: dict[str, Any] = {"items": [1, 2]}


def custom_server() -> Server:
    server = Server("custom")

    @server.method("example/items")
    async def items(ctx: Context, params: Any) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        return SHARED

    @server.method("example/typed")
    async def typed(ctx: Context, params: Any) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        return {"resultType": "input_required", "inputRequests": {}, "requestState": "s"}

    return server


async def test_custom_method_results_carry_result_type_in_2026() -> None:
    server = custom_server()
    ours, theirs = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, theirs)
        result = await ask(ours, 1, "example/items", {"_meta": MODERN_META})
        assert result["resultType"] == "complete"
        assert result["items"] == [1, 2]
        assert SHARED == {"items": [1, 2]}  # the handler's dict is not changed
        # A resultType the handler gave is kept.
        kept = await ask(ours, 2, "example/typed", {"_meta": MODERN_META})
        assert kept["resultType"] == "input_required"
        await ours.aclose()


async def test_custom_method_results_have_no_result_type_before_2026() -> None:
    server = custom_server()
    ours, theirs = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, theirs)
        await initialize(ours, "2025-11-25")
        result = await ask(ours, 1, "example/items", None)
        assert result == {"items": [1, 2]}
        await ours.aclose()
