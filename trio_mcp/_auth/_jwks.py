"""The signing keys of an authorization server: discovered from its metadata, cached, and
fetched again when a token names a key the cache does not know (key rotation)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import urlsplit, urlunsplit

import trio

if TYPE_CHECKING:
    from joserfc import jwk

from . import _lazy
from ._fetch import JsonFetcher
from ._verifier import InvalidToken, VerifierUnavailable

__all__ = ["PublicKey", "JwksCache", "metadata_urls"]

log = logging.getLogger("trio_mcp.auth")

#: A verification key (joserfc's key classes, imported lazily).
PublicKey: TypeAlias = "jwk.RSAKey | jwk.ECKey | jwk.OKPKey"

#: The key type each accepted algorithm needs (``none`` and HMAC are never accepted).
KEY_TYPES = {
    "RS256": "RSA",
    "RS384": "RSA",
    "RS512": "RSA",
    "PS256": "RSA",
    "PS384": "RSA",
    "PS512": "RSA",
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
    "EdDSA": "OKP",
    "Ed25519": "OKP",
}
_CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be (RFC 8414 section 3.1, then OpenID Connect
    Discovery, path-inserted and path-appended)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(new_path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, new_path, "", ""))

    urls = [at("/.well-known/oauth-authorization-server" + path)]
    urls.append(at("/.well-known/openid-configuration" + path) if path else "")
    urls.append(at(path + "/.well-known/openid-configuration"))
    return [u for u in urls if u]


def key_fits(key: PublicKey, alg: str) -> bool:
    """Whether ``key`` can check a signature made with ``alg``."""
    if key.key_type != KEY_TYPES.get(alg):
        return False
    declared = key.get("alg")
    if declared is not None and declared != alg:
        return False
    curve = _CURVES.get(alg)
    if curve is not None and key.get("crv") != curve:
        return False
    return key.key_type != "OKP" or key.get("crv") == "Ed25519"


class JwksCache:
    """An issuer's public signing keys.

    The first token fetches the issuer's metadata (for its ``jwks_uri``, unless given)
    and the key set. The keys are kept for ``max_age`` seconds; a token whose ``kid``
    is not among them makes the cache fetch the set again, at most once every
    ``refresh_interval`` seconds (so a stream of made-up ``kid`` values costs the
    authorization server one request per interval, not one per token). At most
    ``max_keys`` keys are kept. Fetches are single-flight: tasks that need the keys
    while one fetches wait for it. A failed fetch is not tried again for
    ``refresh_interval`` seconds either: meanwhile the keys cached before (if any) are
    used, and without any, tokens cannot be checked (:class:`VerifierUnavailable`).
    """

    def __init__(
        self,
        issuer: str,
        *,
        jwks_uri: str | None = None,
        fetcher: JsonFetcher,
        max_age: float = 3600.0,
        refresh_interval: float = 30.0,
        max_keys: int = 64,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self.jwks_uri = jwks_uri
        self.fetcher = fetcher
        self.max_age = max_age
        self.refresh_interval = refresh_interval
        self.max_keys = max_keys
        self.clock = clock
        self._keys: list[PublicKey] | None = None
        self._fetched_at = -float("inf")
        self._failed_at = -float("inf")
        self._generation = 0
        self._lock = trio.Lock()

    def statistics(self) -> dict[str, int]:
        """How many keys are cached, and how many times the set was fetched."""
        return {"keys": len(self._keys or ()), "fetches": self._generation}

    def fresh_generation(self) -> int | None:
        """Which key set is cached (it changes with every fetch), or ``None`` when there is
        none yet or it is older than ``max_age`` (the next :meth:`key_for` fetches it
        again). What was checked against a generation holds while it stays the same."""
        if self._keys is None or self.clock() - self._fetched_at > self.max_age:
            return None
        return self._generation

    async def key_for(self, kid: str | None, alg: str) -> PublicKey:
        """The key that checks a token signed with ``alg`` under ``kid``.

        Raises:
            InvalidToken: no key of the issuer fits.
            VerifierUnavailable: the keys could not be fetched.
        """
        key, _ = await self.key_and_generation(kid, alg)
        return key

    async def key_and_generation(self, kid: str | None, alg: str) -> tuple[PublicKey, int]:
        """:meth:`key_for`, and the generation of the key set the key was found in (what a
        check made with it holds for, see :meth:`fresh_generation`). Blocks while the keys
        are fetched; always a checkpoint.

        Raises:
            InvalidToken: no key of the issuer fits.
            VerifierUnavailable: the keys could not be fetched.
        """
        if self._keys is None or self.clock() - self._fetched_at > self.max_age:
            await self._refresh(self._generation)
        key = self._find(kid, alg)
        if key is None and self.clock() - self._fetched_at >= self.refresh_interval:
            log.info("a token names an unknown key %r: fetching %s's keys", kid, self.issuer)
            await self._refresh(self._generation)
            key = self._find(kid, alg)
        if key is None:
            raise InvalidToken("no signing key of the issuer matches the token")
        generation = self._generation
        await trio.lowlevel.checkpoint()
        return key, generation

    def _find(self, kid: str | None, alg: str) -> PublicKey | None:
        fitting = [k for k in self._keys or () if key_fits(k, alg)]
        if kid is not None:
            fitting = [k for k in fitting if k.kid == kid]
        elif len(fitting) > 1:
            return None  # without a kid, only an unambiguous key will do
        return fitting[0] if fitting else None

    async def _refresh(self, seen_generation: int) -> None:
        async with self._lock:
            if self._generation != seen_generation:
                return  # another task fetched while this one waited
            if self.clock() - self._failed_at < self.refresh_interval:
                if self._keys is None:
                    raise VerifierUnavailable(f"the keys of {self.issuer} could not be fetched")
                return
            try:
                if self.jwks_uri is None:
                    self.jwks_uri = await self._discover()
                document = await self.fetcher.get_json(self.jwks_uri)
                keys = self._import(document)
            except VerifierUnavailable as exc:
                self._failed_at = self.clock()
                if self._keys is None:
                    raise
                log.warning("keeping the cached keys of %s: %s", self.issuer, exc)
                return
            self._keys = keys
            self._fetched_at = self.clock()
            self._generation += 1

    async def _discover(self) -> str:
        problems = []
        for url in metadata_urls(self.issuer):
            try:
                metadata = await self.fetcher.get_json(url)
            except VerifierUnavailable as exc:
                problems.append(str(exc))
                continue
            if metadata.get("issuer") != self.issuer:
                # RFC 8414 section 3.3: metadata naming another issuer is not this one's.
                problems.append(f"{url} names issuer {metadata.get('issuer')!r}")
                continue
            jwks_uri = metadata.get("jwks_uri")
            if isinstance(jwks_uri, str) and jwks_uri:
                return jwks_uri
            problems.append(f"{url} has no jwks_uri")
        raise VerifierUnavailable(
            f"no metadata of issuer {self.issuer} gives its keys: " + "; ".join(problems)
        )

    def _import(self, document: dict[str, Any]) -> list[PublicKey]:
        entries = document.get("keys")
        if not isinstance(entries, list):
            raise VerifierUnavailable(f"{self.jwks_uri} is not a JWK set")

        keys: list[PublicKey] = []
        for entry in entries:
            if len(keys) >= self.max_keys:
                log.warning("%s: over %d keys, ignoring the rest", self.jwks_uri, self.max_keys)
                break
            if not isinstance(entry, dict) or entry.get("kty") not in ("RSA", "EC", "OKP"):
                continue  # symmetric keys never sign access tokens here
            if "d" in entry or entry.get("use", "sig") != "sig":
                continue
            try:
                key = _lazy.jwk.import_key(entry)
            except Exception:  # noqa: BLE001 (a key we cannot read is a key we do not use)
                log.warning("%s: skipping a key that does not import", self.jwks_uri)
                continue
            keys.append(key)  # type: ignore[arg-type]
        return keys
