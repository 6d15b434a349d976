"""The ceiling: a bare ASGI app on Hypercorn's Trio worker answering the echo tool with canned
JSON-RPC, no MCP library (after /work/shared/bench/servers/hypercorn_bare.py, answering the
stateless era too). Usage: python hypercorn_bare.py PORT [WORKERS]"""

import sys

import orjson
import trio
from hypercorn.config import Config
from hypercorn.trio import serve


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = orjson.loads(body)
    if "id" not in request:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    if request["method"] == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bare", "version": "1"},
        }
    else:
        text = request["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}]}
    out = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
    headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"abc")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


if __name__ == "__main__":
    config = Config()
    config.bind = [f"127.0.0.1:{sys.argv[1]}"]
    config.accesslog = None
    config.loglevel = "WARNING"
    if len(sys.argv) > 2 and int(sys.argv[2]) > 1:
        from hypercorn.run import run

        config.application_path = f"{__file__}:app"
        config.worker_class = "trio"
        config.workers = int(sys.argv[2])
        sys.exit(run(config))
    trio.run(serve, app, config)
