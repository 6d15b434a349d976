"""The keyword options of a child-process stream, as a typed dictionary (a module of its
own, so that naming them costs no import of the process transport itself)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TypedDict

__all__ = ["ProcessOptions"]


class ProcessOptions(TypedDict, total=False):
    """The keyword options of :func:`open_process_stream` and
    :func:`connect_process_stream` (typed, so that a misspelt option is an error your type
    checker reports; see :func:`open_process_stream` for what each means and its
    default), which :func:`~trio_mcp.open_stdio_client` takes too."""

    env: Mapping[str, str] | None
    cwd: str | os.PathLike[str] | None
    grace: float
    kill_timeout: float
    exit_wait: float
    stderr: Callable[[str], object] | None
    stderr_tail_lines: int
    stderr_rate: float
    max_message_size: int
    send_buffer: int
