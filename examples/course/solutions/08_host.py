"""Chapter 8, exercise: the supervisor written by hand. A nursery holds one task per
server; each task is a loop: connect, use the server until it fails, wait (doubling the
wait each time), start again. Each server here crashes on purpose, three times.

Run it: ``python examples/course/solutions/08_host.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from trio_mcp import ConnectionClosed, open_stdio_client

SERVER = [sys.executable, str(Path(__file__).resolve().parent.parent / "08_host.py"), "serve"]


async def supervise(name: str, attempts: int) -> None:
    delay = 0.1
    for attempt in range(1, attempts + 1):
        try:
            async with open_stdio_client(SERVER) as client:
                await client.call_tool("pid")
                await client.call_tool("crash")
        except ConnectionClosed as error:
            print(f"{name}: attempt {attempt} ended, exit status {error.returncode}")
        await trio.sleep(delay)
        delay = min(delay * 2, 1.0)
    print(f"{name}: gave up after {attempts} attempts")


async def main() -> None:
    with trio.fail_after(60):  # real processes: a bound, never reached
        async with trio.open_nursery() as nursery:
            nursery.start_soon(supervise, "alpha", 3)
            nursery.start_soon(supervise, "beta", 3)
    print("every supervisor has finished, and every child is reaped")


if __name__ == "__main__":
    trio.run(main)
