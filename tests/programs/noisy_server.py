"""A trio_mcp server whose stderr never stops: a thread writes numbered lines to it as fast
as the pipe takes them, from start to exit. Its tools still answer."""

import os
import threading

import trio_mcp

server = trio_mcp.Server("noisy")


@server.tool()
async def echo(text: str) -> str:
    return text


def flood() -> None:
    n = 0
    while True:
        chunk = b"".join(b"noise %09d %s\n" % (n + i, b"." * 80) for i in range(600))
        n += 600
        try:
            os.write(2, chunk)
        except OSError:
            return


if __name__ == "__main__":
    threading.Thread(target=flood, daemon=True).start()
    trio_mcp.run(server)
