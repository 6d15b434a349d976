"""Answers one request over the stdio server stream, printing stray text meanwhile, then
closes the stream and writes a JSON-RPC line with plain ``print``: by then stdout must be the
real one again."""

import json

import trio

from trio_mcp import jsonrpc as rpc
from trio_mcp.transports import open_stdio_server_stream


async def main() -> None:
    async with open_stdio_server_stream() as stream:
        print("stray text while serving", flush=True)
        request = await stream.receive()
        assert isinstance(request, rpc.JsonRpcRequest)
        await stream.send(rpc.ResultResponse(request.id, {"echo": request.params}))
    print(json.dumps({"jsonrpc": "2.0", "method": "stdout/restored"}), flush=True)


trio.run(main)
