"""``requestState`` for multi round-trip requests (2026-07-28): sealed so a client can carry
it but not forge, alter or replay it elsewhere.

A state is ``v1.<payload>.<tag>``: base64url JSON, and an HMAC-SHA256 tag
over it with the server's secret. The payload binds the state to the
request it belongs to (method plus a digest of the parameters that matter:
a tool's name and arguments, a prompt's name and arguments, a resource's
URI), to an expiry time, and to the principal when one is known; it also
carries the answers gathered in earlier rounds, so a retry needs nothing
from server memory. The payload is signed, not encrypted: it holds nothing
the client did not see or send.

Servers behind a load balancer must share the secret (``Server(secret=...)``).
Keys rotate: a sealer seals with its newest key and opens a state sealed with any of
its ``previous`` keys too, so states issued before a rotation stay good for their
lifetime (at most ``ttl``) while every new state carries the newest key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import orjson

from .._errors import ErrorCode, McpError

__all__ = ["RequestStateSealer", "SealedState", "binding_of"]

_VERSION = "v1"
#: Params that are not part of what a state is bound to.
_UNBOUND = frozenset({"_meta", "inputResponses", "requestState"})


def binding_of(method: str, params: Mapping[str, Any] | None) -> str:
    """A digest of what identifies a request: its method and salient params."""
    salient = {k: v for k, v in (params or {}).items() if k not in _UNBOUND}
    data = orjson.dumps([method, salient], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()[:32]


@attrs.frozen
class SealedState:
    """What a verified state says."""

    #: Answers gathered in earlier rounds, by input key (raw JSON, read on use).
    answers: dict[str, Any]
    #: The keys the previous round asked for: only these are read from ``inputResponses``.
    pending: tuple[str, ...]
    #: Which round this is (1 for the first retry).
    round: int


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class RequestStateSealer:
    """Seals and opens ``requestState`` values.

    Args:
        secret: the HMAC key new states are sealed with (at least 16 bytes).
        ttl: seconds a state stays valid.
        previous: keys rotated out, newest first: states they sealed still open,
            so keep each for ``ttl`` seconds after it stopped sealing, then drop it.
        clock: wall-clock seconds (``time.time``); states cross processes, so it
            must not be a per-process monotonic clock.
    """

    def __init__(
        self,
        secret: bytes,
        *,
        ttl: float = 600.0,
        clock: Callable[[], float] = time.time,
        previous: Sequence[bytes] = (),
    ) -> None:
        for index, key in enumerate((secret, *previous)):
            if len(key) < 16:
                which = "secret" if index == 0 else f"previous[{index - 1}] key"
                raise ValueError(f"the requestState {which} must be at least 16 bytes")
        self._secret = secret
        self._keys = (secret, *previous)
        self.ttl = ttl
        self._clock = clock

    def seal(
        self,
        *,
        binding: str,
        answers: Mapping[str, Any],
        pending: tuple[str, ...],
        round: int,
        principal: str | None = None,
    ) -> str:
        payload = {
            "b": binding,
            "e": int(self._clock() + self.ttl) + 1,
            "a": dict(answers),
            "p": list(pending),
            "r": round,
        }
        if principal is not None:
            payload["u"] = principal
        body = f"{_VERSION}.{_b64(orjson.dumps(payload))}"
        return f"{body}.{self._tag(body)}"

    def open(self, state: str, *, binding: str, principal: str | None = None) -> SealedState:
        """Verify ``state`` for the request with ``binding``.

        Raises:
            McpError: -32602 if the state is malformed, altered, expired, or belongs to
                another request or principal.
        """
        parts = state.split(".") if isinstance(state, str) else []
        if len(parts) != 3 or parts[0] != _VERSION:
            raise _invalid("malformed")
        body = f"{parts[0]}.{parts[1]}"
        if not any(hmac.compare_digest(parts[2], self._tag(body, key)) for key in self._keys):
            raise _invalid("it was altered or was not issued by this server")
        try:
            payload = orjson.loads(_unb64(parts[1]))
        except (ValueError, orjson.JSONDecodeError):
            raise _invalid("malformed") from None
        if not isinstance(payload, dict):
            raise _invalid("malformed")
        if payload.get("b") != binding:
            raise _invalid("it belongs to another request")
        if payload.get("u") != principal:
            raise _invalid("it belongs to another principal")
        expires = payload.get("e")
        if not isinstance(expires, int) or self._clock() > expires:
            raise _invalid("it has expired")
        answers = payload.get("a")
        pending = payload.get("p")
        round_ = payload.get("r")
        if (
            not isinstance(answers, dict)
            or not isinstance(pending, list)
            or not isinstance(round_, int)
        ):
            raise _invalid("malformed")
        return SealedState(answers, tuple(str(k) for k in pending), round_)

    def _tag(self, body: str, key: bytes | None = None) -> str:
        """The HMAC-SHA256 tag of ``body`` under ``key`` (the sealing key when omitted)."""
        mac = hmac.new(self._secret if key is None else key, body.encode("ascii"), hashlib.sha256)
        return _b64(mac.digest())


def _invalid(why: str) -> McpError:
    return McpError(
        f"Invalid params: requestState is invalid: {why}", code=ErrorCode.INVALID_PARAMS
    )
