"""JWT access tokens (RFC 9068) checked against the issuer's published keys."""

from __future__ import annotations

import base64
import binascii
import functools
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import httpx
import orjson
import trio

from . import _lazy
from ._fetch import JsonFetcher, warn_if_insecure
from ._jwks import KEY_TYPES, JwksCache
from ._token_cache import DEFAULT_VERIFIED_TOKENS, VerifiedTokenCache
from ._verifier import (
    DEFAULT_PRINCIPAL_CLAIMS,
    AccessToken,
    InvalidToken,
    claims_token,
    principal_claims_option,
)

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier", "decode_segment", "split_jws"]

#: The signature algorithms accepted unless you choose: asymmetric ones only.
DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")
#: The longest token looked at (a request's headers are bounded by the HTTP server anyway).
MAX_TOKEN_LENGTH = 16 * 1024


def decode_segment(segment: str) -> bytes:
    """A base64url segment of a compact JWS (no padding).

    Raises:
        InvalidToken: it is not base64url.
    """
    if not segment or "=" in segment:
        raise InvalidToken("the token is not a compact JWS")
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        raise InvalidToken("the token is not a compact JWS") from None


def split_jws(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The protected header and the claims of a compact JWS, *unverified*.

    Raises:
        InvalidToken: it is not a compact JWS with a JSON object header and payload.
    """
    if len(token) > MAX_TOKEN_LENGTH or not token.isascii():
        raise InvalidToken("the token is not a compact JWS")
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("the token is not a compact JWS")
    try:
        header = orjson.loads(decode_segment(parts[0]))
        claims = orjson.loads(decode_segment(parts[1]))
    except orjson.JSONDecodeError:
        raise InvalidToken("the token is not a compact JWS") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise InvalidToken("the token is not a compact JWS")
    return header, claims


def check_signature(token: str, key: Any, alg: str, header: Mapping[str, Any]) -> None:
    """Raises :class:`InvalidToken` unless ``token``, whose protected header
    (:func:`split_jws`) is ``header``, is signed by ``key`` with ``alg``.

    The checks are joserfc's, those ``jws.deserialize_compact`` makes (the header's
    parameters, strictly; the key fits ``alg``; the signature verifies), called one by one
    so that the token is not decoded a second time. ``alg`` must be one the caller accepts
    (never ``none``).
    """
    algorithms = _lazy.JWSRegistry.algorithms  # (before the try: no joserfc, ImportError)
    signing_input, _, signature = token.rpartition(".")
    try:
        _header_registry().check_header(dict(header))
        model = algorithms[alg]
        model.check_key(key)
        valid = model.verify(signing_input.encode("ascii"), decode_segment(signature), key)
    except Exception:  # noqa: BLE001 (whatever fails to decode or fit, it does not verify)
        valid = False
    if not valid:
        raise InvalidToken("the token's signature does not verify")


@functools.cache
def _header_registry() -> Any:
    """joserfc's registry of JWS header parameters, strict as ``deserialize_compact``'s:
    a parameter it does not know, or of the wrong type, is refused."""
    return _lazy.JWSRegistry()


def _number(claims: dict[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidToken(f"the token's {name!r} claim is not a number")
    return float(value)


def check_lifetime(claims: dict[str, Any], now: float, leeway: float) -> None:
    """Raises :class:`InvalidToken` for a token without ``exp``, expired, not yet valid
    (``nbf``) or issued in the future (``iat``), each with ``leeway`` seconds of clock
    skew allowed."""
    exp = _number(claims, "exp")
    if exp is None:
        raise InvalidToken("the token has no expiry")
    if now >= exp + leeway:
        raise InvalidToken("the token has expired")
    nbf = _number(claims, "nbf")
    if nbf is not None and nbf > now + leeway:
        raise InvalidToken("the token is not valid yet")
    iat = _number(claims, "iat")
    if iat is not None and iat > now + leeway:
        raise InvalidToken("the token was issued in the future")


class JwtVerifier:
    """A :class:`~trio_mcp.auth.TokenVerifier` for JWT access tokens (RFC 9068) signed by
    ``issuer``.

    The issuer's keys are found through its metadata (RFC 8414, or OpenID Connect
    Discovery) unless ``jwks_uri`` is given, and cached (see
    :class:`~trio_mcp.auth.JwksCache` for when they are fetched again). A token must
    name an algorithm of ``algorithms`` (``none`` and the HMAC ones are never accepted:
    a public key is no shared secret), carry ``iss`` equal to ``issuer`` and an ``exp``
    in the future, and no ``nbf`` or ``iat`` in the future, each with ``leeway``
    seconds of clock skew. Its audience is checked by the resource server.

    Args:
        issuer: the authorization server's issuer identifier, exactly as it writes it.
        jwks_uri: its key set (skips metadata discovery).
        algorithms: the signature algorithms accepted.
        token_types: when given, the accepted ``typ`` header values (say
            ``["at+jwt"]``, RFC 9068's); by default any.
        leeway: seconds of clock skew allowed.
        jwks_max_age: seconds the keys are kept before they are fetched again.
        jwks_refresh_interval: the least seconds between two fetches caused by tokens
            naming unknown keys.
        max_keys: the most keys kept from the set.
        http_client: the httpx client for fetches (by default one per fetch).
        fetch_timeout: seconds a fetch may take.
        principal_claims: the claims the principal is taken from, the first one present
            (a non-empty string) winning: by default ``("sub", "client_id")``, so a
            token without ``sub`` (a client acting on its own behalf) speaks for its
            client id; ``("sub",)`` refuses such tokens. See
            :data:`~trio_mcp.auth.DEFAULT_PRINCIPAL_CLAIMS`.
        verified_tokens: how many verified tokens are remembered (by their SHA-256, never
            the token), so that a client sending the same token again is not checked in
            full again (default 1,024; ``0`` remembers none). A remembered token answers
            only within its lifetime (it is refused on expiry exactly as without the
            cache) and while the issuer's key set is the one it was checked against
            (fetching the keys again, on rotation or after ``jwks_max_age``, forgets them
            all); :meth:`forget` drops one, or all, when you learn of a revocation.
        clock: the time now, in seconds since the epoch (for tests).

    Raises:
        ValueError: an algorithm that is not an asymmetric signature algorithm, or a
            negative ``verified_tokens``.
    """

    def __init__(
        self,
        issuer: str,
        *,
        jwks_uri: str | None = None,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        token_types: Collection[str] | None = None,
        leeway: float = 60.0,
        jwks_max_age: float = 3600.0,
        jwks_refresh_interval: float = 30.0,
        max_keys: int = 64,
        http_client: httpx.AsyncClient | None = None,
        fetch_timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        principal_claims: Sequence[str] = DEFAULT_PRINCIPAL_CLAIMS,
        verified_tokens: int = DEFAULT_VERIFIED_TOKENS,
    ) -> None:
        refused = [a for a in algorithms if a not in KEY_TYPES]
        if refused:
            raise ValueError(
                f"not accepted as access-token signature algorithms: {refused} "
                f"(choose among {sorted(KEY_TYPES)})"
            )
        warn_if_insecure(issuer)
        self.issuer = issuer
        self.algorithms = frozenset(algorithms)
        self.token_types = (
            None if token_types is None else frozenset(_media_type(t) for t in token_types)
        )
        self.leeway = leeway
        self.clock = clock
        self.principal_claims = principal_claims_option(principal_claims)
        self.verified = VerifiedTokenCache(verified_tokens)
        self.keys = JwksCache(
            issuer,
            jwks_uri=jwks_uri,
            fetcher=JsonFetcher(http_client, timeout=fetch_timeout),
            max_age=jwks_max_age,
            refresh_interval=jwks_refresh_interval,
            max_keys=max_keys,
            clock=clock,
        )

    def __repr__(self) -> str:
        return f"<JwtVerifier for {self.issuer!r}>"

    def forget(self, token: str | None = None) -> None:
        """Forget that ``token`` (or every token) was verified: its next request is checked
        in full. For revocations you learn of (the token itself is not kept)."""
        self.verified.forget(None if token is None else self.verified.key(token))

    async def verify(self, token: str) -> AccessToken:
        """Check ``token``; may fetch the issuer's keys (see the class notes).

        A token verified before (see ``verified_tokens``) is answered from memory: then
        this is only a cancellation point (:func:`trio.lowlevel.checkpoint_if_cancelled`).

        Raises:
            InvalidToken: the token is not acceptable.
            VerifierUnavailable: the issuer's keys could not be fetched.
        """
        if len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("the token is not a compact JWS")
        cache_key = self.verified.key(token)
        known = self.verified.get(
            cache_key, now=self.clock(), generation=self.keys.fresh_generation()
        )
        if known is not None:
            await trio.lowlevel.checkpoint_if_cancelled()
            return known
        header, claims = split_jws(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken(f"the token's algorithm {alg!r} is not accepted")
        if "crit" in header:
            raise InvalidToken("the token has critical header parameters this server does not know")
        if self.token_types is not None:
            typ = header.get("typ")
            if not isinstance(typ, str) or _media_type(typ) not in self.token_types:
                raise InvalidToken(f"the token's type {typ!r} is not an access token's")
        if claims.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        check_lifetime(claims, self.clock(), self.leeway)
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's 'kid' is not a string")
        key, generation = await self.keys.key_and_generation(kid, alg)
        check_signature(token, key, alg, header)
        verified = claims_token(claims, principal_claims=self.principal_claims)
        self.verified.put(
            cache_key,
            verified,
            valid_from=_valid_from(claims, self.leeway),
            valid_until=float(claims["exp"]) + self.leeway,
            generation=generation,
        )
        return verified


def _valid_from(claims: Mapping[str, Any], leeway: float) -> float:
    """From when :func:`check_lifetime` accepts ``claims``: neither ``nbf`` nor ``iat``
    more than ``leeway`` ahead (``-inf`` without either)."""
    starts = [float(claims[name]) for name in ("nbf", "iat") if claims.get(name) is not None]
    return max(starts, default=-math.inf) - leeway


def _media_type(typ: str) -> str:
    """``typ`` compared as RFC 7515 section 4.1.9 says: case-insensitively, with an omitted
    ``application/`` prefix."""
    typ = typ.lower()
    return typ.removeprefix("application/")
