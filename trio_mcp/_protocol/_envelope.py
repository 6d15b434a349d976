"""The per-request ``_meta`` envelope of modern revisions (2026-07-28).

Every modern request names its protocol version and client capabilities in
``params._meta``; a server reads them here, and a client writes them here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs
import orjson

from .._errors import ErrorCode, McpError, UnsupportedProtocolVersion
from .._types._base import LOGGING_LEVELS, Implementation, LoggingLevel
from .._types._capabilities import ClientCapabilities
from .._types._converter import StructureError, structure

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
PROGRESS_TOKEN: Final = "progressToken"


@attrs.frozen(kw_only=True)
class Envelope:
    """What a modern request says about itself."""

    protocol_version: str
    client_capabilities: ClientCapabilities
    client_info: Implementation | None = None
    log_level: LoggingLevel | None = None


def declares_modern_version(params: dict[str, Any] | None) -> bool:
    """Whether a request carries a modern envelope at all (its ``_meta`` names a version)."""
    if params is None:
        return False
    meta = params.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION in meta


def read_envelope(params: dict[str, Any] | None, supported: Sequence[str]) -> Envelope:
    """Read and check a modern request's envelope.

    A client sends the same envelope with every request, so the envelopes read are
    remembered (up to 128, by their fields' JSON): a repeat is one dictionary look-up.
    Envelopes are frozen, so sharing one is safe.

    Raises:
        McpError: -32602 when a required field is missing or malformed.
        UnsupportedProtocolVersion: -32022 when the version is not in ``supported``.
    """
    meta = params.get("_meta") if params is not None else None
    if type(meta) is not dict:
        raise McpError(
            f"Invalid params: _meta with {PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r} "
            "is required",
            code=ErrorCode.INVALID_PARAMS,
        )
    version = meta.get(PROTOCOL_VERSION)
    if type(version) is not str:
        raise McpError(
            f"Invalid params: _meta[{PROTOCOL_VERSION!r}] must be a version string",
            code=ErrorCode.INVALID_PARAMS,
        )
    if version not in supported:
        raise UnsupportedProtocolVersion(supported=list(supported), requested=version)
    raw_caps = meta.get(CLIENT_CAPABILITIES)
    raw_info = meta.get(CLIENT_INFO)
    level = meta.get(LOG_LEVEL)
    try:
        key: tuple[Any, ...] | None = (
            version,
            orjson.dumps(raw_caps),
            None if raw_info is None else orjson.dumps(raw_info),
            level,
        )
        found = _envelopes.get(key)  # type: ignore[arg-type]
    except TypeError:  # not JSON, or a level that cannot be a key: read it the long way
        key = found = None
    if found is not None:
        return found
    if type(raw_caps) is not dict:
        raise McpError(
            f"Invalid params: _meta[{CLIENT_CAPABILITIES!r}] must be an object",
            code=ErrorCode.INVALID_PARAMS,
        )
    try:
        capabilities = structure(raw_caps, ClientCapabilities)
        info = None if raw_info is None else structure(raw_info, Implementation)
    except StructureError as exc:
        raise McpError(f"Invalid params: _meta: {exc}", code=ErrorCode.INVALID_PARAMS) from None
    if level is not None and level not in LOGGING_LEVELS:
        raise McpError(
            f"Invalid params: _meta[{LOG_LEVEL!r}] must be one of {', '.join(LOGGING_LEVELS)}",
            code=ErrorCode.INVALID_PARAMS,
        )
    envelope = Envelope(
        protocol_version=version,
        client_capabilities=capabilities,
        client_info=info,
        log_level=level,
    )
    if key is not None:
        if len(_envelopes) >= _CACHE_LIMIT:
            _envelopes.clear()
        _envelopes[key] = envelope
    return envelope


_CACHE_LIMIT = 128
_envelopes: dict[tuple[Any, ...], Envelope] = {}


def write_envelope(
    params: dict[str, Any] | None,
    *,
    protocol_version: str,
    client_capabilities: dict[str, Any],
    client_info: dict[str, Any] | None,
    log_level: LoggingLevel | None = None,
) -> dict[str, Any]:
    """``params`` with the modern envelope added to its ``_meta`` (a new dict; the caller's
    keys in ``_meta`` are kept)."""
    out = dict(params) if params else {}
    meta = dict(out.get("_meta") or ())
    meta[PROTOCOL_VERSION] = protocol_version
    meta[CLIENT_CAPABILITIES] = client_capabilities
    if client_info is not None:
        meta[CLIENT_INFO] = client_info
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    out["_meta"] = meta
    return out
