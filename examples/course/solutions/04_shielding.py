"""Chapter 4, exercise: three children, each stopped at a different step of the ladder, all
shut down at once (one task each in a nursery), within one deadline of the caller's.

Run it: ``python examples/course/solutions/04_shielding.py``
"""

from __future__ import annotations

import subprocess
import sys

import trio

CHILDREN = {
    # reads until end of input, then exits
    "polite": "import sys; print('ready', flush=True); sys.stdin.read()",
    # ignores end of input; SIGTERM's default action ends it
    "deaf": "import time; print('ready', flush=True); time.sleep(60)",
    # ignores end of input and SIGTERM
    "stubborn": "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(60)",
}


async def shut_down(process: trio.Process, grace: float) -> str:
    """Stop ``process`` and reap it; say which step stopped it."""
    with trio.CancelScope(shield=True):
        assert process.stdin is not None
        await process.stdin.aclose()
        with trio.move_on_after(grace):
            await process.wait()
            return "end of input"
        process.terminate()
        with trio.move_on_after(grace):
            await process.wait()
            return "SIGTERM"
        process.kill()
        await process.wait()
    return "SIGKILL"


async def run_child(
    name: str, code: str, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    try:
        await process.stdout.receive_some()  # "ready": its signal handlers are in place
        task_status.started()
        await trio.sleep_forever()
    finally:
        print(f"{name}: stopped by {await shut_down(process, grace=2)}")


async def main() -> None:
    with trio.fail_after(20):  # a bound on the whole program, never reached
        async with trio.open_nursery() as nursery:
            for name, code in CHILDREN.items():
                await nursery.start(run_child, name, code)  # returns once it is ready
            nursery.cancel_scope.cancel()  # then cancel all three
    print("every child reaped")


if __name__ == "__main__":
    trio.run(main)
