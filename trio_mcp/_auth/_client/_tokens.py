"""Tokens and where they are kept: the :class:`TokenStore` protocol, an in-memory store
(the default) and a file store for command-line programs.

Tokens are stored per authorization server and protected resource (:class:`TokenKey`),
so a token is only ever looked up for the resource and issuer it was issued for. Their
``repr`` hides the secrets, so logging a :class:`Tokens` never logs a token.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

import attrs
import orjson
import trio

from ._errors import InsecureTokenStore

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
    """Tokens in a directory, one JSON file per issuer and resource, for command-line
    programs that log in once.

    The file name is a hash of the key, so neither the issuer nor the resource shows in
    a directory listing. The store treats its files the way ssh treats its keys:

    - the directory is created with mode 0700; an existing one must belong to this user
      and be writable by no one else (a shared or world-writable directory would let
      another user swap the files), else :exc:`~trio_mcp.auth.InsecureTokenStore` names
      it and says how to fix it;
    - a token file must be a regular file of this user that no one else can read or
      write (its mode at most 0600), and a symbolic link is never followed: else
      :exc:`~trio_mcp.auth.InsecureTokenStore` names the file and its mode;
    - a save writes a new temporary file with a unique name, created exclusively with
      mode 0600 and without following links, then renames it over the token file, so a
      link planted at either name is replaced, never written through.

    A missing file, or one that cannot be parsed, reads as no tokens. Each method runs
    its file system calls in a worker thread and blocks until they are done.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path(self, key: TokenKey) -> Path:
        digest = hashlib.sha256(f"{key.issuer}\n{key.resource}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    async def load(self, key: TokenKey) -> Tokens | None:
        """The stored tokens for ``key``, or ``None``. Raises
        :exc:`~trio_mcp.auth.InsecureTokenStore` for a directory or file that others could
        change or read (see the class)."""
        data = await trio.to_thread.run_sync(self._read, self.path(key))
        if data is None:
            return None
        try:
            return Tokens.from_json(orjson.loads(data))
        except ValueError:  # orjson.JSONDecodeError is a ValueError
            return None

    async def save(self, key: TokenKey, tokens: Tokens) -> None:
        """Store ``tokens`` for ``key``, replacing what was there. Raises
        :exc:`~trio_mcp.auth.InsecureTokenStore` for a directory that others could change
        (see the class)."""
        await trio.to_thread.run_sync(self._write, self.path(key), orjson.dumps(tokens.to_json()))

    async def delete(self, key: TokenKey) -> None:
        """Forget the tokens for ``key`` (removes the file, or a link in its place)."""
        await trio.to_thread.run_sync(self._remove, self.path(key))

    def _read(self, path: Path) -> bytes | None:
        if not self._check_directory(create=False):
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise InsecureTokenStore(
                    f"token file {path} is a symbolic link; remove it (tokens are stored "
                    "as regular files only)"
                ) from None
            raise
        try:
            _check_private_file(path, os.fstat(fd))
            with os.fdopen(fd, "rb", closefd=False) as file:
                return file.read()
        finally:
            os.close(fd)

    def _write(self, path: Path, data: bytes) -> None:
        self._check_directory(create=True)
        # mkstemp: O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600, a name no one can guess.
        fd, temporary = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
        try:
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, path)  # replaces a link at ``path``, never follows it
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise

    def _remove(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # unlink removes a link itself, never its target

    def _check_directory(self, *, create: bool) -> bool:
        """Whether the directory exists (made with mode 0700 when ``create``); raises
        :exc:`~trio_mcp.auth.InsecureTokenStore` if it is not this user's alone."""
        directory = self.directory
        if create:
            try:
                directory.mkdir(mode=0o700, parents=True)
            except FileExistsError:
                pass
        try:
            info = os.stat(directory)
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(info.st_mode):
            raise InsecureTokenStore(f"token store {directory} is not a directory")
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid != os.geteuid():
            raise InsecureTokenStore(
                f"token store directory {directory} belongs to user {info.st_uid}, not to "
                f"this user ({os.geteuid()}); use a directory of your own"
            )
        if mode & 0o022:
            raise InsecureTokenStore(
                f"token store directory {directory} has mode {mode:04o}: others can write "
                f"to it; run `chmod 700 {directory}` or use a directory of your own"
            )
        return True


def _check_private_file(path: Path, info: os.stat_result) -> None:
    """Raise :exc:`~trio_mcp.auth.InsecureTokenStore` unless ``info`` is a regular file of
    this user that no one else can read or write."""
    mode = stat.S_IMODE(info.st_mode)
    if not stat.S_ISREG(info.st_mode):
        raise InsecureTokenStore(f"token file {path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise InsecureTokenStore(
            f"token file {path} belongs to user {info.st_uid}, not to this user "
            f"({os.geteuid()}); remove it"
        )
    if mode & 0o077:
        raise InsecureTokenStore(
            f"token file {path} has mode {mode:04o}: others can read or write it; "
            f"run `chmod 600 {path}` (or remove it) and log in again if it may have leaked"
        )
