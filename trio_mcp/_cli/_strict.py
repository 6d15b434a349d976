"""``--strict``: every JSON-RPC message a command exchanged, checked against the official
JSON Schema of the revision it spoke (the schemas are not shipped: ``--spec-dir DIR`` or
``$TRIO_MCP_SPEC_DIR`` names a directory of ``schema-<version>.json`` files). Each
violation is one line on stderr, with the message's direction, method and the JSON path;
any makes the exit status 1."""

from __future__ import annotations

import sys
from typing import Any

import attrs
import orjson

from .. import _jsonrpc as rpc
from .._fuzz._validate import Validator, spec_dir_from_environment
from .._transports._stream import Received
from .._transports._tap import Direction
from ._errors import CliError

__all__ = ["MAX_MESSAGES", "StrictRecorder"]

#: The most messages one command keeps for the check (a command exchanges a few dozen).
MAX_MESSAGES = 100_000


@attrs.define
class StrictRecorder:
    """Keeps what passes (a message tap), and checks it once the command is done."""

    spec_dir: str | None
    messages: list[tuple[Direction, dict[str, Any] | str]] = attrs.Factory(list)
    #: The revision the command spoke (set once the client is open).
    version: str | None = None
    _validator: Validator = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        found = self.spec_dir or spec_dir_from_environment()
        validator = Validator(found)
        if not validator.schema_versions():
            raise CliError(
                "--strict needs the official JSON Schemas: --spec-dir DIR or "
                "$TRIO_MCP_SPEC_DIR naming a directory of schema-<version>.json files"
            )
        self._validator = validator

    def tap(self, direction: Direction, message: Received) -> None:
        if len(self.messages) >= MAX_MESSAGES:
            return
        if isinstance(message, rpc.InvalidMessage):
            self.messages.append((direction, f"not a valid JSON-RPC message: {message.reason}"))
        elif isinstance(message, rpc.Batch):
            for item in message.items:
                self.tap(direction, item)
        else:
            self.messages.append((direction, orjson.loads(rpc.dumps(message))))

    def report(self) -> int:
        """Print each violation; returns 1 if there was one, else 0."""
        version = self.version
        if version is None:
            return 0  # nothing was exchanged in a known revision
        if version not in self._validator.schema_versions():
            raise CliError(f"--strict: no official schema of {version} in the schema directory")
        asked: dict[tuple[Direction, Any], str] = {}
        violations = 0
        for direction, message in self.messages:
            if isinstance(message, str):
                violations += 1
                print(f"strict: {direction}: {message}", file=sys.stderr)
                continue
            method = message.get("method")
            if "id" in message and isinstance(method, str):
                asked[(direction, message["id"])] = method
            answered = None
            if "method" not in message:
                other: Direction = "received" if direction == "sent" else "sent"
                answered = asked.get((other, message.get("id")))
            problems = self._validator.message_problems(message, version, answered)
            for problem in problems or ():
                violations += 1
                what = method or f"the answer to {answered or 'a request'}"
                print(f"strict: {direction} {what} (id {message.get('id')}): {problem}",
                      file=sys.stderr)  # fmt: skip
        return 1 if violations else 0
