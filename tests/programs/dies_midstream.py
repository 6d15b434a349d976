"""Answers ``initialize`` (declaring tools), then dies (exit status 3) on the first request
after it, with a last word on stderr."""

import json
import os
import sys

for line in sys.stdin.buffer:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue  # notifications
    if message["method"] == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "dies-midstream", "version": "0"},
        }
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        sys.stdout.write("\n")
        sys.stdout.flush()
        continue
    sys.stderr.write("starting work on " + message["method"] + "\n")
    sys.stderr.write("fatal: out of cheese\n")
    sys.stderr.flush()
    os._exit(3)
