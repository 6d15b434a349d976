"""Opening a client's conversation: choosing the era (asked for, remembered, or probed with
``server/discover``) and the handshake of that era, before the
:class:`~trio_mcp.Client` is made.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import trio

from .._errors import ProtocolError, UnsupportedProtocolVersion
from .._protocol._era import EraCache, judge_probe
from .._session._engine import Session
from .._types._lifecycle import DiscoverResult
from .._types._mrtr import InputRequiredResult
from .._versions import MODERN_VERSIONS, SUPPORTED_VERSIONS

__all__ = ["open_conversation"]


async def open_conversation(
    session: Session,
    *,
    protocol_version: str | None,
    probe_timeout: float,
    handshake_timeout: float,
    era_cache: EraCache | None,
    peer: str | None,
) -> DiscoverResult | None:
    """Open ``session``'s conversation in one era (see :func:`~trio_mcp.connect_client`);
    returns the server's ``server/discover`` answer in the modern era.

    Blocks through the probe and the handshake.

    Raises:
        ValueError: ``protocol_version`` is not one we speak.
        McpError: the server refused the handshake.
        UnsupportedProtocolVersion: no revision in common.
        trio.TooSlowError: the handshake took longer than ``handshake_timeout``.
    """
    conn = session.connection
    if protocol_version is not None:
        if protocol_version not in SUPPORTED_VERSIONS:
            raise ValueError(f"unsupported protocol version {protocol_version!r}")
        if protocol_version in MODERN_VERSIONS:
            return await _open_modern(session, protocol_version, handshake_timeout)
        await _initialize(session, protocol_version, handshake_timeout)
        return None
    remembered = era_cache.get(peer) if era_cache is not None and peer is not None else None
    if remembered is not None:
        era, version = remembered
        if era == "modern" and version in conn.modern_versions:
            return await _open_modern(session, version, handshake_timeout)
        await _initialize(session, conn.legacy_versions[0], handshake_timeout)
        return None
    if conn.modern_versions:
        verdict = await _probe(session, probe_timeout)
    else:
        verdict = None
    discovery = None
    if verdict is not None and verdict.era == "modern":
        assert verdict.version is not None
        if verdict.discovery is not None:
            conn.use_modern(verdict.version)
            conn.record_discovery(verdict.discovery)
            discovery = verdict.discovery
        else:
            discovery = await _open_modern(session, verdict.version, handshake_timeout)
    else:
        if not conn.legacy_versions:
            raise UnsupportedProtocolVersion(
                "the server speaks no modern protocol version, and we speak no legacy one",
                supported=[],
                requested=conn.modern_versions[0],
            )
        await _initialize(session, conn.legacy_versions[0], handshake_timeout)
    if era_cache is not None and peer is not None:
        modern = conn.version in MODERN_VERSIONS
        era_cache.remember(peer, "modern" if modern else "legacy", conn.version if modern else None)
    return discovery


async def _probe(session: Session, limit: float) -> Any:
    """Send ``server/discover`` before any handshake and judge the era (stdio's way)."""
    conn = session.connection
    pending, message = conn.send_request("server/discover", None)
    answer = None
    async with session.track(pending, message, notify_cancel=False) as call:
        with trio.move_on_after(limit):
            answer = await call.answer()
    return judge_probe(answer, conn.modern_versions)


async def _open_modern(session: Session, version: str, limit: float) -> DiscoverResult:
    conn = session.connection
    conn.use_modern(version)
    with _handshake_deadline("server/discover", limit):
        try:
            result = await session.send_request("server/discover", None, model=DiscoverResult)
        except UnsupportedProtocolVersion as exc:
            raise UnsupportedProtocolVersion(
                f"the server does not speak {version}",
                supported=exc.supported,
                requested=version,
            ) from None
    if isinstance(result, InputRequiredResult):
        raise ProtocolError("the server answered server/discover with input_required")
    conn.record_discovery(result)
    return result


async def _initialize(session: Session, version: str, limit: float) -> None:
    conn = session.connection
    pending, message = conn.initialize_request(version)
    with _handshake_deadline("initialize", limit):
        async with session.track(pending, message) as call:
            answer = await call.answer()
    _, initialized = conn.complete_initialize(answer)
    await session.send_message(initialized)


@contextmanager
def _handshake_deadline(method: str, seconds: float) -> Iterator[None]:
    """``trio.fail_after(seconds)`` for the opening request ``method``, whose
    :exc:`trio.TooSlowError` says which request went unanswered and for how long (a bare
    one says nothing, and the opening is where a wrong command or a hung server shows)."""
    with trio.move_on_after(seconds) as scope:
        yield
    if scope.cancelled_caught:
        raise trio.TooSlowError(
            f"the server did not answer {method} within {seconds:g} seconds"
            " (the client's handshake_timeout)"
        )
