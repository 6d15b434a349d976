"""A stdio peer whose tool ``deep`` has an input schema nested ``argv[1]`` objects deep
(JSON allows it; serialisers and recursive walks may not), beside a plain tool ``plain``.
Answers initialize, tools/list, tools/call and ping; ignores notifications."""

from __future__ import annotations

import json
import sys
from typing import Any

DEPTH = int(sys.argv[1])


def deep_schema() -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    node = schema
    for _ in range(DEPTH):
        child: dict[str, Any] = {"type": "object"}
        node["properties"] = {"a": child}
        node = child
    return schema


TOOLS = [
    {"name": "deep", "description": "Deep.", "inputSchema": deep_schema()},
    {"name": "plain", "description": "Plain.", "inputSchema": {"type": "object"}},
]


def answer(request: dict[str, Any]) -> dict[str, Any]:
    method = request["method"]
    if method == "initialize":
        return {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deep", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": request["params"]["name"]}]}
    return {}


sys.setrecursionlimit(10 * DEPTH + 1000)
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message and "method" in message:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
