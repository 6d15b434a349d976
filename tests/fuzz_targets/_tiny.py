"""A tiny dual-era MCP server in plain Python (no trio_mcp, no asyncio), for the fuzzer's
tests: correct as it stands, and each ``*.py`` beside it breaks it in exactly one way.

It starts in a few tens of milliseconds, which keeps fuzzing with a fresh
process per example cheap. One thread: a ``select`` loop over stdin with a
heap of timers (for the slow tool).
"""

from __future__ import annotations

import heapq
import itertools
import json
import os
import select
import sys
import time
from typing import Any, ClassVar

LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN = ("2026-07-28",)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

TOOLS = [
    {
        "name": "echo",
        "description": "Says the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "add",
        "description": "Adds two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        },
    },
    {
        "name": "divide",
        "description": "Divides a by b (integers).",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "slow",
        "description": "Answers after a tenth of a second.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
CAPABILITIES = {"tools": {}}


class Invalid(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class TinyServer:
    """Override the ``on_*`` hooks to break it."""

    #: Seconds the ``slow`` tool takes to answer.
    SLOW_DELAY = 0.1
    #: The tools it offers (some of ``TOOLS``).
    tools: ClassVar[list[dict[str, Any]]] = TOOLS
    #: What ``server/discover`` says it can do.
    capabilities: ClassVar[dict[str, Any]] = CAPABILITIES

    def __init__(self) -> None:
        self.timers: list[tuple[float, int, Any]] = []
        self.order = itertools.count()
        self.pending: dict[Any, int] = {}  # request id -> timer number, for cancellation
        self.cancelled: set[int] = set()

    # -- output ------------------------------------------------------------------------------

    def write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        os.write(1, data)

    def result(self, id: Any, result: dict[str, Any], modern: bool) -> None:
        if modern:
            result = {"resultType": "complete", **result}
        self.write({"jsonrpc": "2.0", "id": self.echo_id(id), "result": result})

    def error(self, id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.write({"jsonrpc": "2.0", "id": self.echo_id(id), "error": error})

    def echo_id(self, id: Any) -> Any:
        return id

    def later(self, delay: float, id: Any, action: Any) -> None:
        number = next(self.order)
        heapq.heappush(self.timers, (time.monotonic() + delay, number, action))
        self.pending[id] = number

    # -- input -------------------------------------------------------------------------------

    def on_line(self, line: bytes) -> None:
        try:
            message = self.parse(line)
        except (ValueError, RecursionError):
            self.error(None, -32700, "Parse error")
            return
        if isinstance(message, list):
            self.error(None, -32600, "Invalid Request: batches are not supported")
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.reject(message, "not a JSON-RPC 2.0 message")
            return
        if "method" not in message:
            if "result" in message or "error" in message:
                return  # a response to nothing we asked: ignored
            self.reject(message, "no method")
            return
        method = message["method"]
        if not isinstance(method, str):
            self.reject(message, "method must be a string")
            return
        if "id" not in message:
            self.on_notification(method, message.get("params"))
            return
        id = message["id"]
        if type(id) not in (str, int):
            self.error(None, -32600, "Invalid Request: bad id")
            return
        params = message.get("params", {})
        if not isinstance(params, dict):
            self.error(id, -32600, "Invalid Request: params must be an object")
            return
        try:
            self.on_request(id, method, params)
        except Invalid as exc:
            self.error(id, exc.code, str(exc), exc.data)

    def parse(self, line: bytes) -> Any:
        return json.loads(line)

    def reject(self, message: Any, why: str) -> None:
        id = message.get("id") if isinstance(message, dict) else None
        if isinstance(message, dict) and "id" not in message:
            return  # an invalid notification: nothing to answer
        self.error(id if type(id) in (str, int) else None, -32600, f"Invalid Request: {why}")

    def on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            number = self.pending.pop(params.get("requestId"), None)
            if number is not None:
                self.on_cancel(number)

    def on_cancel(self, number: int) -> None:
        self.cancelled.add(number)

    def on_request(self, id: Any, method: str, params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and META_VERSION in meta
        if modern or method == "server/discover":
            self.check_envelope(meta)
        if method == "initialize" and not modern:
            requested = params.get("protocolVersion")
            version = requested if requested in LEGACY else LEGACY[0]
            self.result(
                id,
                {
                    "protocolVersion": version,
                    "capabilities": CAPABILITIES,
                    "serverInfo": {"name": "tiny", "version": "1.0"},
                },
                False,
            )
        elif method == "ping" and not modern:
            self.result(id, {}, False)
        elif method == "server/discover":
            self.result(
                id,
                {
                    "supportedVersions": list(MODERN),
                    "capabilities": self.capabilities,
                    "ttlMs": 0,
                    "cacheScope": "private",
                },
                True,
            )
        elif method == "tools/list":
            result: dict[str, Any] = {"tools": self.tools}
            if "cursor" in params:
                raise Invalid(-32602, "Invalid params: unknown cursor")
            if modern:
                result.update(ttlMs=0, cacheScope="private")
            self.result(id, result, modern)
        elif method == "tools/call":
            self.call_tool(id, params, modern)
        else:
            self.unknown_method(id, method)

    def unknown_method(self, id: Any, method: str) -> None:
        self.error(id, -32601, f"Method not found: {method}")

    def check_envelope(self, meta: Any) -> None:
        if not isinstance(meta, dict) or not isinstance(meta.get(META_VERSION), str):
            raise Invalid(-32602, "Invalid params: _meta needs a protocol version")
        if meta[META_VERSION] not in MODERN:
            raise Invalid(
                -32022,
                "Unsupported protocol version",
                {"supported": list(MODERN), "requested": meta[META_VERSION]},
            )
        if not isinstance(meta.get(META_CAPABILITIES), dict):
            raise Invalid(-32602, "Invalid params: _meta needs client capabilities")

    def call_tool(self, id: Any, params: dict[str, Any], modern: bool) -> None:
        name = params.get("name")
        arguments = params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise Invalid(-32602, "Invalid params")
        tool = next((t for t in self.tools if t["name"] == name), None)
        if tool is None:
            raise Invalid(-32602, f"Unknown tool: {name}")
        problem = self.check_arguments(tool, arguments)
        if problem:
            self.tool_result(id, problem, modern, is_error=True)
            return
        self.on_tool(id, name, arguments, modern)

    def check_arguments(self, tool: dict[str, Any], arguments: dict[str, Any]) -> str | None:
        schema = tool["inputSchema"]
        for name in schema.get("required", []):
            if name not in arguments:
                return f"missing argument {name}"
        for name, value in arguments.items():
            kind = schema["properties"].get(name, {}).get("type")
            if kind is None:
                return f"unknown argument {name}"
            if kind == "integer" and (type(value) is not int):
                return f"{name} must be an integer"
            if kind == "string" and not isinstance(value, str):
                return f"{name} must be a string"
        return None

    def tool_result(
        self, id: Any, text: str, modern: bool, *, is_error: bool = False, structured: Any = None
    ) -> None:
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if is_error:
            result["isError"] = True
        if structured is not None:
            result["structuredContent"] = structured
        self.result(id, result, modern)

    def on_tool(self, id: Any, name: str, arguments: dict[str, Any], modern: bool) -> None:
        if name == "echo":
            self.tool_result(id, arguments["text"], modern)
        elif name == "add":
            total = arguments["a"] + arguments["b"]
            self.tool_result(id, str(total), modern, structured=self.add_output(total))
        elif name == "divide":
            if arguments["b"] == 0:
                self.on_divide_by_zero(id, modern)
            else:
                self.tool_result(id, str(arguments["a"] / arguments["b"]), modern)
        elif name == "slow":
            self.later(self.SLOW_DELAY, id, lambda: self.tool_result(id, "done", modern))

    def add_output(self, total: int) -> Any:
        return {"sum": total}

    def on_divide_by_zero(self, id: Any, modern: bool) -> None:
        self.tool_result(id, "division by zero", modern, is_error=True)

    # -- the loop ----------------------------------------------------------------------------

    def run(self) -> None:
        buffer = b""
        while True:
            timeout = None
            if self.timers:
                timeout = max(0.0, self.timers[0][0] - time.monotonic())
            readable, _, _ = select.select([0], [], [], timeout)
            if readable:
                chunk = os.read(0, 65536)
                if not chunk:
                    return
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        self.on_line(line)
            while self.timers and self.timers[0][0] <= time.monotonic():
                _, number, action = heapq.heappop(self.timers)
                if number not in self.cancelled:
                    action()
                self.pending = {k: v for k, v in self.pending.items() if v != number}


def main(server: TinyServer) -> None:
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    sys.exit(0)
