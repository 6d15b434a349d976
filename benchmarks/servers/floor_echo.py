"""The floor: the least Trio code that serves the echo benchmark over stdio.

A reader task parses each line and starts a task per request (as any concurrent
server must); a writer task batches answers. It knows only initialize,
notifications, tools/list and tools/call of ``echo``: no validation, no
protocol. What trio_mcp adds on top of this is the cost of the protocol.
"""

import os

import orjson
import trio

TOOL = {
    "name": "echo",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def answer(message: dict) -> dict | None:
    method = message.get("method")
    if "id" not in message or method is None:
        return None
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": message["params"]["arguments"]["text"]}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


async def main() -> None:
    stdin = trio.lowlevel.FdStream(os.dup(0))
    stdout = trio.lowlevel.FdStream(os.dup(1))
    send, receive = trio.open_memory_channel[bytes](1024)

    async def handle(message: dict) -> None:
        response = answer(message)
        if response is not None:
            await send.send(orjson.dumps(response) + b"\n")

    async def writer() -> None:
        async for data in receive:
            batch = [data]
            while True:
                try:
                    batch.append(receive.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            await stdout.send_all(b"".join(batch))

    async with trio.open_nursery() as outer:
        outer.start_soon(writer)
        async with send, trio.open_nursery() as handlers:
            buffer = b""
            while chunk := await stdin.receive_some(1 << 16):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        handlers.start_soon(handle, orjson.loads(line))


if __name__ == "__main__":
    trio.run(main)
