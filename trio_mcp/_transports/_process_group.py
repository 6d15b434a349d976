"""A child's process group: signal every member, and wait until none is left (POSIX).

A stdio server runs in its own session, so its process group id is its pid,
and whatever it starts (an ``npx`` wrapper's ``node``, a tool's helper) stays
in that group unless it moves itself out on purpose. Signalling the group
reaches all of them, even after the leader has exited.

"Left" means alive: a zombie is dead even if nobody has reaped it yet. That
matters where the process that inherits orphans does not reap them (a
container whose PID 1 is not an init), because ``killpg(pgid, 0)`` still
finds unreaped zombies. On Linux the members are read from ``/proc``; where
there is no ``/proc`` the ``killpg`` probe is used, and an unreaped zombie
then counts as left.
"""

from __future__ import annotations

import os
import signal
from typing import Final

import trio

__all__ = ["live_members", "reap_orphans", "signal_group", "wait_group_gone"]

_PROC: Final = "/proc"
_POLL_INTERVAL: Final = 0.02


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to every process in the group. Returns ``False`` if the group is gone.

    A permission error (a member that changed its user id) does not prove the
    group is gone, so it counts as sent: the members we may signal got it.
    """
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _has_proc() -> bool:
    return os.path.isdir(os.path.join(_PROC, "self"))


def live_members(pgid: int) -> list[int]:
    """The pids of the group's members that are alive (zombies excluded where
    ``/proc`` tells them apart)."""
    if not _has_proc():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(_PROC, name, "stat"), "rb") as f:
                stat = f.read()
        except OSError:
            continue  # it exited while we looked
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(name))
    return members


def reap_orphans(pgid: int) -> None:
    """Reap the group's zombies that are our own children.

    Orphans are adopted by PID 1 or the nearest subreaper; when that is us, nobody
    else will reap them. Call this only after the leader has been reaped through
    its :class:`trio.Process`, so no exit status is taken from under it.
    """
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


async def wait_group_gone(pgid: int) -> None:
    """Block until no live process is left in the group (polling: a group has no event).

    Cancel it to stop waiting.
    """
    while True:
        reap_orphans(pgid)
        if not live_members(pgid):
            await trio.lowlevel.checkpoint()
            return
        await trio.sleep(_POLL_INTERVAL)
