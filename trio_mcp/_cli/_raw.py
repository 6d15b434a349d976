"""``--output raw``: the JSON-RPC messages a command exchanges with the server, one a line
as they pass, ``>`` for sent and ``<`` for received, on stdout (the command's usual output
is left out)."""

from __future__ import annotations

from typing import TextIO

from .. import _jsonrpc as rpc
from .._transports._stream import Received
from .._transports._tap import Direction, MessageTap

__all__ = ["raw_printer"]


def raw_printer(out: TextIO) -> MessageTap:
    """A message tap that writes each message to ``out`` (flushed: a pipe sees each at
    once)."""

    def tap(direction: Direction, message: Received) -> None:
        out.write(f"{'>' if direction == 'sent' else '<'} {_text(message)}\n")
        out.flush()

    return tap


def _text(message: Received) -> str:
    if isinstance(message, rpc.InvalidMessage):
        return f"(not a valid message: {message.reason})"
    if isinstance(message, rpc.Batch):
        return "[" + ",".join(_text(item) for item in message.items) + "]"
    return rpc.dumps(message).decode()
