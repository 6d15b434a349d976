"""Building the messages the fuzzer sends, in either era."""

from __future__ import annotations

from typing import Any, Final

import orjson

from .._protocol._envelope import write_envelope
from .._types._base import RequestId
from .._version import __version__

__all__ = ["CLIENT_INFO", "Speaker", "dumps"]

#: Who we say we are.
CLIENT_INFO: Final = {"name": "trio-mcp-fuzz", "version": __version__}


def dumps(value: Any) -> bytes:
    """Compact JSON, as the fuzzer writes every message."""
    return orjson.dumps(value)


class Speaker:
    """Writes requests and notifications for one era: modern requests carry the ``_meta``
    envelope of ``version``; legacy ones carry nothing extra.

    Args:
        era: ``"modern"`` or ``"legacy"``.
        version: the modern version for the envelope, or the legacy version to offer.
    """

    def __init__(self, era: str, version: str) -> None:
        self.era = era
        self.version = version

    def params(
        self, params: dict[str, Any] | None, *, envelope: bool = True, **meta: Any
    ) -> dict[str, Any] | None:
        """``params`` with the envelope (modern, unless ``envelope`` is false) and ``meta``
        added to ``_meta``."""
        out = dict(params) if params is not None else None
        if self.era == "modern" and envelope:
            out = write_envelope(
                out,
                protocol_version=self.version,
                client_capabilities={},
                client_info=CLIENT_INFO,
            )
        if meta:
            out = dict(out or {})
            merged = dict(out.get("_meta") or {})
            merged.update(meta)
            out["_meta"] = merged
        return out

    def request(
        self,
        id: RequestId,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        envelope: bool = True,
        **meta: Any,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        full = self.params(params, envelope=envelope, **meta)
        if full is not None:
            message["params"] = full
        return message

    def notification(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return message

    def initialize(self, id: RequestId, version: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": id,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
