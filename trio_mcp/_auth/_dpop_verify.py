"""DPoP proofs (RFC 9449) checked by a resource server: the client proves, on every request,
that it holds the private key a DPoP-bound access token (``cnf.jkt``) names.

Replay protection has two parts, as RFC 9449 section 11.1 and the MCP DPoP profile
describe: a proof is accepted only within ``max_age`` seconds of its ``iat``, and each
``jti`` only once in that window (a bounded in-memory cache; with several server
processes, turn on nonces, which any process can check). Server nonces are stateless:
a timestamp with a keyed MAC, accepted for ``nonce_lifetime`` seconds.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import logging
import secrets
import struct
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import orjson

from . import _lazy
from ._jwks import KEY_TYPES, key_fits
from ._jwt import DEFAULT_ALGORITHMS, check_signature, split_jws
from ._verifier import InvalidToken

__all__ = ["DpopRefused", "DpopVerifier", "access_token_hash", "normalize_htu"]

log = logging.getLogger("trio_mcp.auth")

_MAX_JTI_LENGTH = 256
#: How many clients' public keys a :class:`DpopVerifier` keeps imported by default.
DEFAULT_PROOF_KEYS: Final = 256


class DpopRefused(Exception):
    """A DPoP proof was refused. ``error`` is ``invalid_dpop_proof`` or ``use_dpop_nonce``
    (then ``nonce`` is the one to use)."""

    def __init__(self, error: str, description: str, *, nonce: str | None = None) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.nonce = nonce


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def access_token_hash(token: str) -> str:
    """The ``ath`` of a proof for ``token``: base64url(SHA-256(token))."""
    return _b64(hashlib.sha256(token.encode("ascii")).digest())


@functools.lru_cache(maxsize=256)
def normalize_htu(url: str) -> str:
    """``url`` as proofs' ``htu`` values are compared (RFC 9449 section 4.3): without query
    and fragment, scheme and host in lower case, default ports dropped, an empty path
    as ``/``. The last 256 answers are kept (a server's own URLs are few)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path or "/", "", ""))


class DpopVerifier:
    """Checks DPoP proofs for DPoP-bound access tokens.

    Args:
        algorithms: the proof signature algorithms accepted (asymmetric only).
        max_age: a proof is accepted while its ``iat`` is at most this many seconds
            from now, either way (default 300: the MCP DPoP profile's five minutes).
        replay_cache_size: the most ``jti`` values remembered (default 10,000). Each
            is forgotten once its proof is too old to be accepted anyway; when the
            cache is full of fresh ones, the oldest is forgotten (and logged).
        require_nonce: demand a server nonce in every proof (RFC 9449 section 9):
            a proof without one, or with a stale one, is refused with
            ``use_dpop_nonce`` and a fresh nonce in the ``DPoP-Nonce`` header.
        nonce_lifetime: seconds a nonce is accepted (default 300).
        nonce_key: the MAC key of nonces; give every process of a fleet the same one
            (by default a random one per verifier).
        proof_keys: how many clients' public keys are kept imported (default 256), so
            that a client's proofs, signed with the same key every time, do not import it
            again; the least recently used one is forgotten.
        clock: the time now, in seconds since the epoch (for tests).

    Raises:
        ValueError: an algorithm that is not an asymmetric signature algorithm, or a
            cache size below 1.
    """

    def __init__(
        self,
        *,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        max_age: float = 300.0,
        replay_cache_size: int = 10_000,
        require_nonce: bool = False,
        nonce_lifetime: float = 300.0,
        nonce_key: bytes | None = None,
        proof_keys: int = DEFAULT_PROOF_KEYS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        refused = [a for a in algorithms if a not in KEY_TYPES]
        if refused:
            raise ValueError(f"not accepted as DPoP proof algorithms: {refused}")
        if replay_cache_size < 1:
            raise ValueError("replay_cache_size must be at least 1")
        if isinstance(proof_keys, bool) or not isinstance(proof_keys, int) or proof_keys < 1:
            raise ValueError(f"proof_keys must be a whole number, at least 1, not {proof_keys!r}")
        self.proof_keys = proof_keys
        #: A proof's ``jwk`` (canonical JSON) -> the imported key and its thumbprint.
        self._keys: OrderedDict[bytes, tuple[Any, str]] = OrderedDict()
        self.algorithms = frozenset(algorithms)
        self.max_age = max_age
        self.replay_cache_size = replay_cache_size
        self.require_nonce = require_nonce
        self.nonce_lifetime = nonce_lifetime
        self._nonce_key = nonce_key if nonce_key is not None else secrets.token_bytes(32)
        self.clock = clock
        #: jti -> when it may be forgotten, oldest first.
        self._seen: OrderedDict[str, float] = OrderedDict()

    def statistics(self) -> dict[str, int]:
        """How many ``jti`` values are remembered."""
        return {"remembered_jti": len(self._seen)}

    # -- nonces -----------------------------------------------------------------------------

    def new_nonce(self) -> str:
        """A fresh server nonce."""
        stamp = struct.pack(">Q", int(self.clock()))
        return _b64(stamp + self._mac(stamp))

    def _mac(self, stamp: bytes) -> bytes:
        return hmac.new(self._nonce_key, stamp, hashlib.sha256).digest()[:16]

    def _nonce_fresh(self, nonce: object) -> bool:
        if not isinstance(nonce, str) or len(nonce) > 64:
            return False
        try:
            raw = base64.urlsafe_b64decode(nonce + "=" * (-len(nonce) % 4))
        except ValueError:
            return False
        if len(raw) != 24 or not hmac.compare_digest(raw[8:], self._mac(raw[:8])):
            return False
        issued: int = struct.unpack(">Q", raw[:8])[0]
        now = self.clock()
        return issued <= now + 1 and now - issued <= self.nonce_lifetime

    # -- proofs -----------------------------------------------------------------------------

    def check(self, proof: str, *, method: str, url: str, access_token: str, jkt: str) -> None:
        """Accept ``proof`` for a request of ``method`` to ``url`` carrying ``access_token``,
        bound to the key whose thumbprint is ``jkt``; remember its ``jti``. Never blocks.

        Raises:
            DpopRefused: the proof is not acceptable.
        """
        if not proof:
            raise _invalid("a DPoP proof (one DPoP header) is required")
        try:
            header, claims = split_jws(proof)
        except InvalidToken:
            raise _invalid("the DPoP proof is not a compact JWS") from None
        if header.get("typ") != "dpop+jwt":
            raise _invalid("the DPoP proof's typ is not dpop+jwt")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise _invalid(f"the DPoP proof's algorithm {alg!r} is not accepted")
        key, thumbprint = self._public_key(header.get("jwk"), alg)
        check_signature_or_refuse(proof, key, alg, header)
        if thumbprint != jkt:
            raise _invalid("the DPoP proof is signed with another key than the token is bound to")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > _MAX_JTI_LENGTH:
            raise _invalid("the DPoP proof has no usable jti")
        if claims.get("htm") != method:
            raise _invalid("the DPoP proof is for another HTTP method")
        htu = claims.get("htu")
        try:
            same_url = isinstance(htu, str) and normalize_htu(htu) == normalize_htu(url)
        except ValueError:  # not a URL at all (a bad port, a broken IPv6 address)
            same_url = False
        if not same_url:
            raise _invalid("the DPoP proof is for another URL")
        if claims.get("ath") != access_token_hash(access_token):
            raise _invalid("the DPoP proof is for another access token")
        iat = claims.get("iat")
        now = self.clock()
        if isinstance(iat, bool) or not isinstance(iat, (int, float)):
            raise _invalid("the DPoP proof has no iat")
        if abs(now - iat) > self.max_age:
            raise _invalid("the DPoP proof is too old, or from the future")
        if self.require_nonce and not self._nonce_fresh(claims.get("nonce")):
            raise DpopRefused(
                "use_dpop_nonce", "a fresh server nonce is required", nonce=self.new_nonce()
            )
        self._remember(f"{jkt}:{jti}", float(iat) + self.max_age, now)

    def _public_key(self, value: object, alg: str) -> tuple[Any, str]:
        """The key a proof's ``jwk`` header names, fit for ``alg``, and its thumbprint:
        imported once per key (the last ``proof_keys`` are kept, by their exact JSON)."""
        try:
            known = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            known = None
        entry = self._keys.get(known) if known is not None else None
        if entry is None:
            key = _public_key(value, alg)
            entry = (key, key.thumbprint())
            if known is not None:
                self._keys[known] = entry
                if len(self._keys) > self.proof_keys:
                    self._keys.popitem(last=False)
        else:
            self._keys.move_to_end(known)  # type: ignore[arg-type]
            if not key_fits(entry[0], alg):
                raise _invalid("the DPoP proof's jwk does not fit its algorithm")
        return entry

    def _remember(self, jti: str, forget_at: float, now: float) -> None:
        seen = self._seen
        while seen:
            oldest, until = next(iter(seen.items()))
            if until >= now:
                break
            del seen[oldest]
        if jti in seen:
            raise _invalid("the DPoP proof was used before (replayed jti)")
        if len(seen) >= self.replay_cache_size:
            log.warning(
                "DPoP replay cache full (%d fresh jti values): forgetting the oldest",
                self.replay_cache_size,
            )
            seen.popitem(last=False)
        seen[jti] = forget_at


def _invalid(description: str) -> DpopRefused:
    return DpopRefused("invalid_dpop_proof", description)


def _public_key(value: Any, alg: str) -> Any:
    if not isinstance(value, dict) or "d" in value or value.get("kty") not in ("RSA", "EC", "OKP"):
        raise _invalid("the DPoP proof's jwk is not a public key")

    try:
        key = _lazy.jwk.import_key(value)
    except Exception:  # noqa: BLE001 (whatever is wrong with it, it is no usable key)
        raise _invalid("the DPoP proof's jwk is not a public key") from None
    if key.is_private or not key_fits(key, alg):  # type: ignore[arg-type]
        raise _invalid("the DPoP proof's jwk does not fit its algorithm")
    return key


def check_signature_or_refuse(proof: str, key: Any, alg: str, header: dict[str, Any]) -> None:
    try:
        check_signature(proof, key, alg, header)
    except InvalidToken:
        raise _invalid("the DPoP proof's signature does not verify") from None
