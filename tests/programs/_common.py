"""What the test peers share. Plain blocking Python with no trio, so that the peers behave as
any stdio server might; each peer is one misbehaviour.

A peer's first message is a ``peer/started`` notification naming the pids of the processes it
started (itself included), so a test can check afterwards that none of them is left alive.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any

_GRANDCHILD = """
import os, signal, sys
if {ignore_term}:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
os.write({ready_fd}, b"ready\\n")
while True:
    signal.pause()
"""


def send(message: dict[str, Any]) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def announce(**pids: int) -> None:
    send({"jsonrpc": "2.0", "method": "peer/started", "params": {"pid": os.getpid(), **pids}})


def echo_until_eof() -> None:
    """Send every line back as it came, until stdin ends."""
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def sleep_forever() -> None:
    while True:
        signal.pause()


def spawn_child(*, ignore_term: bool, inherit_stdio: bool) -> int:
    """Start a process that stays in our process group and sleeps forever; return its pid
    once it is ready (its SIGTERM disposition is set)."""
    ready_r, ready_w = os.pipe()
    stdio = None if inherit_stdio else subprocess.DEVNULL
    child = subprocess.Popen(
        [sys.executable, "-c", _GRANDCHILD.format(ignore_term=ignore_term, ready_fd=ready_w)],
        stdin=stdio,
        stdout=stdio,
        stderr=stdio,
        pass_fds=(ready_w,),
    )
    os.close(ready_w)
    with os.fdopen(ready_r, "rb") as ready:
        assert ready.readline() == b"ready\n"
    return child.pid
