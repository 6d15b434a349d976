"""Fuzz the tutorial's server from a script: serve it over HTTP in a task, point
``fuzz`` at it, print the report.

Run it: ``python examples/fuzz_glossary.py``
"""

from __future__ import annotations

import sys
from functools import partial

import trio
from first_server import server

from trio_mcp.fuzz import HttpTarget, fuzz
from trio_mcp.http import serve


async def main() -> int:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, server, "127.0.0.1", 0))
        target = HttpTarget(url=f"http://127.0.0.1:{port}/mcp")
        report = await fuzz(target, max_examples=5, seed=1, skip_tools=["nap"])
        nursery.cancel_scope.cancel()
    print(report.summary())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(trio.run(main))
