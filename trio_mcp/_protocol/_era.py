"""Telling a legacy server from a modern one (client side, sans-IO).

On stdio a dual-era client probes with ``server/discover``. A
``DiscoverResult`` or a *recognized modern error* (-32022 with its
``supported`` list) means a modern server; any other answer, or none within
the probe's deadline, means a legacy server, whatever the error code: legacy
servers answer an unknown pre-``initialize`` request with
implementation-defined errors, or not at all.

The verdict belongs to the server, not to one request, so an
:class:`EraCache` remembers it per peer (a command line, an origin).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs

from .. import _jsonrpc as rpc
from .._errors import ErrorCode, UnsupportedProtocolVersion
from .._types._converter import StructureError, structure
from .._types._lifecycle import DiscoverResult
from .._versions import Era

__all__ = ["EraCache", "EraVerdict", "judge_probe"]


@attrs.frozen
class EraVerdict:
    """What a probe told us: the era, the modern revision to speak (if modern), and the
    ``DiscoverResult`` if the server sent one."""

    era: Era
    version: str | None = None
    discovery: DiscoverResult | None = None


def judge_probe(
    answer: rpc.ResultResponse | rpc.ErrorResponse | rpc.InvalidMessage | None,
    modern_versions: Sequence[str],
) -> EraVerdict:
    """Judge the answer to a ``server/discover`` probe (``None``: no answer in time).

    Raises:
        UnsupportedProtocolVersion: the server is modern but shares no modern revision
            with us (falling back to ``initialize`` would not help: do not).
    """
    if isinstance(answer, rpc.ResultResponse):
        try:
            result = structure(answer.result, DiscoverResult)
        except StructureError:
            return EraVerdict("legacy")
        version = _pick(result.supported_versions, modern_versions)
        if version is None:
            raise UnsupportedProtocolVersion(
                "the server speaks only modern protocol versions we do not",
                supported=result.supported_versions,
                requested=modern_versions[0],
            )
        return EraVerdict("modern", version, result)
    if (
        isinstance(answer, rpc.ErrorResponse)
        and answer.error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
    ):
        data: Any = answer.error.data
        supported = data.get("supported") if isinstance(data, dict) else None
        if isinstance(supported, list) and all(isinstance(v, str) for v in supported):
            version = _pick(supported, modern_versions)
            if version is not None:
                return EraVerdict("modern", version)
            if any(v >= "2026-07-28" for v in supported):
                raise UnsupportedProtocolVersion(
                    "the server speaks only modern protocol versions we do not",
                    supported=supported,
                    requested=modern_versions[0],
                )
    return EraVerdict("legacy")


def _pick(theirs: Sequence[str], ours: Sequence[str]) -> str | None:
    for version in ours:
        if version in theirs:
            return version
    return None


class EraCache:
    """Remembers each peer's era, keyed by whatever names the peer (a command, an origin).

    Clients that share a cache probe a server once; a cached verdict that later
    proves wrong should be :meth:`forget`-ten and the peer probed again.
    """

    def __init__(self) -> None:
        self._verdicts: dict[str, tuple[Literal["modern", "legacy"], str | None]] = {}

    def get(self, peer: str) -> tuple[Literal["modern", "legacy"], str | None] | None:
        return self._verdicts.get(peer)

    def remember(
        self, peer: str, era: Literal["modern", "legacy"], version: str | None = None
    ) -> None:
        self._verdicts[peer] = (era, version)

    def forget(self, peer: str) -> None:
        self._verdicts.pop(peer, None)
