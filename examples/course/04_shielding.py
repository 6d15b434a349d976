"""Chapter 4: shielding and cleanup. Closing a child process is a ladder of steps (close its
stdin, then SIGTERM, then SIGKILL), each a cancel scope with a deadline, all inside a
shielded scope, so the child is reaped even when we leave because of a cancellation.

Run it: ``python examples/course/04_shielding.py`` (see docs/course/04-shielding-and-cleanup.md)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio

from trio_mcp import open_stdio_client
from trio_mcp.transports import ProcessMessageStream

# A child that ignores end of input and SIGTERM: only SIGKILL stops it.
STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
"""
SERVER = Path(__file__).resolve().parent.parent / "first_server.py"  # the tutorial's server


async def shut_down(process: trio.Process, grace: float) -> str:
    """Stop ``process`` and reap it; say which step stopped it.

    Runs to its end even in a cancelled scope; takes about 2 * grace at most."""
    with trio.CancelScope(shield=True):
        assert process.stdin is not None
        await process.stdin.aclose()  # 1. end of input: a polite child exits now
        with trio.move_on_after(grace):
            await process.wait()
            return "end of input"
        process.terminate()  # 2. SIGTERM
        with trio.move_on_after(grace):
            await process.wait()
            return "SIGTERM"
        process.kill()  # 3. SIGKILL cannot be ignored
        await process.wait()
    return "SIGKILL"


async def main() -> None:
    command = [sys.executable, "-c", STUBBORN]
    process = await trio.lowlevel.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    with trio.fail_after(10):
        print("child says:", (await process.stdout.receive_some()).decode().strip())
    with trio.move_on_after(1) as scope:  # we are cancelled after 1 s...
        try:
            await trio.sleep_forever()
        finally:  # ...and the cleanup still runs to its end, shielded
            stopped_by = await shut_down(process, grace=0.5)
            print(f"stopped by {stopped_by}; exit status {process.returncode}")
    print("the outer scope was cancelled:", scope.cancelled_caught)

    # trio_mcp's stdio client runs the same ladder when its block is left, however it is left.
    with trio.fail_after(10), trio.CancelScope() as scope:
        async with open_stdio_client([sys.executable, str(SERVER)]) as client:
            stream = client.session.stream
            assert isinstance(stream, ProcessMessageStream)
            server = stream.process
            print("an MCP server is running:", client.server_info.name)  # type: ignore[union-attr]
            scope.cancel()  # leave by a cancellation, as a deadline or Ctrl-C would
            await trio.sleep_forever()
    print("its exit status after the ladder:", server.returncode)


if __name__ == "__main__":
    trio.run(main)
