"""Opening fresh connections to a target, for the probe, the fuzzing and the replays."""

from __future__ import annotations

import trio

from . import _lazy
from ._checker import Checker
from ._connection import Connection, StdioConnection, Timing
from ._target import HttpTarget, StdioTarget, Target
from ._validate import Validator

__all__ = ["Opener"]

#: The largest message accepted from a server, at least (bigger when we send bigger).
_MIN_READ_LIMIT = 4 * 1024 * 1024


class Opener:
    """Opens connections to ``target`` whose tasks (and processes) live in ``nursery``.

    Args:
        target: what to connect to.
        nursery: owns every connection's tasks; cancelling it ends them all (stdio
            children then go through the shutdown ladder).
        validator: schema checks for the connections' checkers.
        timing: deadlines.
        max_message_size: the largest message the fuzzer sends.
    """

    def __init__(
        self,
        target: Target,
        nursery: trio.Nursery,
        validator: Validator,
        timing: Timing,
        max_message_size: int,
    ) -> None:
        self.target = target
        self.nursery = nursery
        self.validator = validator
        self.timing = timing
        self.max_message_size = max_message_size

    @property
    def transport(self) -> str:
        return "stdio" if isinstance(self.target, StdioTarget) else "http"

    async def open(self, era: str) -> Connection:
        """A fresh connection (a new process; a new HTTP client) that will speak ``era``.

        Blocks until it is ready (the process started). Raises what starting it
        raises (``FileNotFoundError`` for a command that does not exist...).
        """
        checker = Checker(
            self.validator,
            era=era,
            deadline=self.timing.deadline,
            transport=self.transport,
            startup=self.timing.startup if self.transport == "stdio" else 0.0,
        )
        target = self.target
        if isinstance(target, StdioTarget):
            return await StdioConnection.start(
                self.nursery,
                target.command,
                checker,
                self.timing,
                env=dict(target.env) if target.env is not None else None,
                cwd=target.cwd,
                max_message_size=max(_MIN_READ_LIMIT, 4 * self.max_message_size),
            )
        assert isinstance(target, HttpTarget)
        connection: Connection = await _lazy.HttpConnection.start(
            self.nursery, target, checker, self.timing
        )
        return connection
