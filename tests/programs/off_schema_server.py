"""A stdio server whose answers our client accepts but the official schema does not: its
tool's ``inputSchema`` is an array schema (the schema says ``"type": "object"``). For
``trio-mcp --strict``. Plain blocking Python, 2025-11-25 only."""

import json
import sys

from _common import send

for line in sys.stdin.buffer:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "off-schema", "version": "1"},
        }})  # fmt: skip
    elif method == "tools/list":
        tool = {"name": "sum", "inputSchema": {"type": "array", "items": {"type": "number"}}}
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [tool]}})
    elif id is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "nope"}})
