"""What the server says while a command waits: progress and log messages, on stderr (stdout
is the result's). On a terminal, progress is a bar redrawn in place; otherwise (a pipe, a
file, a test) each update is a plain line."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson

from .._types._base import LOGGING_LEVELS, LoggingLevel
from .._types._notifications import LoggingMessageNotificationParams, ProgressNotificationParams

__all__ = ["Reporter"]

_BAR_WIDTH = 24


class Reporter:
    """Shows progress and log messages on ``stream`` (stderr by default).

    Args:
        terminal: draw a bar (default: whether ``stream`` is a terminal).
        log_level: show only log messages of this level and above (a server may send
            others: the level asked for is a wish, and older servers log unasked).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        terminal: bool | None = None,
        log_level: LoggingLevel | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self._least = LOGGING_LEVELS.index(log_level) if log_level is not None else 0
        self._bar: str | None = None  # the bar on screen, to redraw after a log line

    def progress(self, params: ProgressNotificationParams) -> None:
        """A progress notification (a ``Client`` ``on_progress`` callback)."""
        amount = _number(params.progress)
        total = f"/{_number(params.total)}" if params.total is not None else ""
        message = f" {params.message}" if params.message else ""
        if not self.terminal:
            self._write(f"progress {amount}{total}{message}\n")
            return
        if params.total:
            done = max(0, min(_BAR_WIDTH, round(_BAR_WIDTH * params.progress / params.total)))
            bar = "[" + "#" * done + "-" * (_BAR_WIDTH - done) + "] "
        else:
            bar = ""
        self._bar = f"{bar}{amount}{total}{message}"
        self._write(f"\r\x1b[K{self._bar}")

    def log(self, params: LoggingMessageNotificationParams) -> None:
        """A log message from the server (a ``Client`` ``on_log`` handler)."""
        if params.level in LOGGING_LEVELS and LOGGING_LEVELS.index(params.level) < self._least:
            return
        data = params.data if isinstance(params.data, str) else orjson.dumps(params.data).decode()
        logger = f"{params.logger}: " if params.logger else ""
        line = f"[{params.level}] {logger}{data}".replace("\n", " ")
        if self._bar is not None:
            self._write(f"\r\x1b[K{line}\n{self._bar}")
        else:
            self._write(line + "\n")

    def finish(self) -> None:
        """End the bar's line, if one is drawn."""
        if self._bar is not None:
            self._bar = None
            self._write("\n")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
