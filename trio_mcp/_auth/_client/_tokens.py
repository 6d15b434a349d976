"""Tokens and where they are kept: the :class:`TokenStore` protocol, an in-memory store
(the default) and a file store for command-line programs.

Tokens are stored per authorization server and protected resource (:class:`TokenKey`),
so a token is only ever looked up for the resource and issuer it was issued for. Their
``repr`` hides the secrets, so logging a :class:`Tokens` never logs a token.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any, Protocol

import attrs
import orjson
import trio

__all__ = ["FileTokenStore", "MemoryTokenStore", "TokenKey", "TokenStore", "Tokens"]


@attrs.frozen
class TokenKey:
    """Which tokens: those ``issuer`` issued for ``resource``."""

    issuer: str
    resource: str


@attrs.frozen
class Tokens:
    """An access token (and maybe a refresh token) from a token response.

    ``expires_at`` is a ``time.time()`` value or ``None``; ``scope`` the granted scopes
    (or the requested ones when the response did not say); ``token_type`` is
    ``"Bearer"`` or ``"DPoP"``; ``client_id`` the public client they were issued to, so
    that a later run can refresh them; ``issued_at`` the ``time.time()`` they were
    received at (``None``: unknown), which tells their lifetime.
    """

    access_token: str = attrs.field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = attrs.field(default=None, repr=False)
    expires_at: float | None = None
    scope: tuple[str, ...] = ()
    client_id: str | None = None
    issued_at: float | None = None

    def expired(self, *, margin: float = 30.0) -> bool:
        """Whether the token expires within ``margin`` seconds (wall clock), or within a
        quarter of its lifetime when that is shorter: a token that lives less than four
        margins is used for three quarters of its life, not refreshed before every
        request."""
        if self.expires_at is None:
            return False
        if self.issued_at is not None:
            margin = min(margin, max(0.0, self.expires_at - self.issued_at) / 4)
        return time.time() + margin >= self.expires_at

    def to_json(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scope": list(self.scope),
            "client_id": self.client_id,
            "issued_at": self.issued_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> Tokens:
        """Tokens read back from :meth:`to_json`. Raises ``ValueError`` if malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            raise ValueError("not stored tokens")  # noqa: TRY004 - one error for bad data
        refresh = data.get("refresh_token")
        client_id = data.get("client_id")
        expires = data.get("expires_at")
        scope = data.get("scope") or []
        issued = data.get("issued_at")
        if not isinstance(refresh, str | None) or not isinstance(client_id, str | None):
            raise ValueError("not stored tokens")  # noqa: TRY004 - one error for bad data
        if not all(isinstance(t, int | float | None) for t in (expires, issued)):
            raise ValueError("not stored tokens")
        if not isinstance(scope, list) or not all(isinstance(s, str) for s in scope):
            raise ValueError("not stored tokens")
        return cls(
            access_token=data["access_token"],
            token_type=str(data.get("token_type") or "Bearer"),
            refresh_token=refresh,
            expires_at=None if expires is None else float(expires),
            scope=tuple(scope),
            client_id=client_id,
            issued_at=None if issued is None else float(issued),
        )


class TokenStore(Protocol):
    """Where an :class:`~trio_mcp.auth.OAuth` flow keeps tokens between requests (and,
    for a persistent store, between runs). Each method may block (a file, a keyring)."""

    async def load(self, key: TokenKey) -> Tokens | None: ...

    async def save(self, key: TokenKey, tokens: Tokens) -> None: ...

    async def delete(self, key: TokenKey) -> None: ...


class MemoryTokenStore:
    """Tokens in a dict, for the life of the object (the default store)."""

    def __init__(self) -> None:
        self._tokens: dict[TokenKey, Tokens] = {}

    async def load(self, key: TokenKey) -> Tokens | None:
        await trio.lowlevel.checkpoint()
        return self._tokens.get(key)

    async def save(self, key: TokenKey, tokens: Tokens) -> None:
        await trio.lowlevel.checkpoint()
        self._tokens[key] = tokens

    async def delete(self, key: TokenKey) -> None:
        await trio.lowlevel.checkpoint()
        self._tokens.pop(key, None)


class FileTokenStore:
    """Tokens in a directory, one JSON file per issuer and resource, each created with
    mode 0600 (the directory 0700), for command-line programs that log in once.

    The file name is a hash of the key, so neither the issuer nor the resource shows in
    a directory listing. A file that cannot be read back is treated as absent.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path(self, key: TokenKey) -> Path:
        digest = hashlib.sha256(f"{key.issuer}\n{key.resource}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    async def load(self, key: TokenKey) -> Tokens | None:
        try:
            data = await trio.Path(self.path(key)).read_bytes()
            return Tokens.from_json(orjson.loads(data))
        except (OSError, ValueError):
            return None

    async def save(self, key: TokenKey, tokens: Tokens) -> None:
        await trio.to_thread.run_sync(self._write, self.path(key), orjson.dumps(tokens.to_json()))

    def _write(self, path: Path, data: bytes) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, path)

    async def delete(self, key: TokenKey) -> None:
        try:
            await trio.Path(self.path(key)).unlink()
        except FileNotFoundError:
            pass
