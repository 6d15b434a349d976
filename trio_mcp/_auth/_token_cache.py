"""Access tokens already verified, so that a client sending the same token on every request
pays for its signature once.

The cache holds the SHA-256 of each token, never the token. An entry answers only while
everything the full check depends on is as it was: the time is inside the token's lifetime
(``nbf``/``iat`` .. ``exp``, with the verifier's leeway, so an expired token is refused at
the same moment it would be without the cache), and the issuer's key set is the one the
token was checked against (a key rotation, or keys old enough to be fetched again, sends
every token through the full check). Past ``size`` entries the least recently used one is
forgotten.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Final

import attrs

from ._verifier import AccessToken

__all__ = ["DEFAULT_VERIFIED_TOKENS", "VerifiedTokenCache"]

#: How many verified tokens a :class:`~trio_mcp.auth.JwtVerifier` remembers by default.
DEFAULT_VERIFIED_TOKENS: Final = 1024


@attrs.frozen
class _Entry:
    token: AccessToken
    valid_from: float
    valid_until: float
    generation: int


class VerifiedTokenCache:
    """At most ``size`` verified tokens, by the SHA-256 of the token (``size`` 0: none).

    Nothing here blocks or checkpoints.
    """

    def __init__(self, size: int = DEFAULT_VERIFIED_TOKENS) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"verified_tokens must be a whole number, 0 or more, not {size!r}")
        self.size = size
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()

    @staticmethod
    def key(token: str) -> bytes:
        """What the cache knows ``token`` by: its SHA-256 digest."""
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

    def get(self, key: bytes, *, now: float, generation: int | None) -> AccessToken | None:
        """The token verified under ``key``, if it was checked against key set
        ``generation`` (``None``: the keys must be fetched again, so nothing answers) and
        ``now`` is inside its lifetime; an entry that no longer answers is dropped."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.generation != generation or not entry.valid_from <= now < entry.valid_until:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry.token

    def put(
        self,
        key: bytes,
        token: AccessToken,
        *,
        valid_from: float,
        valid_until: float,
        generation: int,
    ) -> None:
        """Remember ``token``, verified against key set ``generation``, as valid from
        ``valid_from`` until (not including) ``valid_until``."""
        if self.size == 0:
            return
        self._entries[key] = _Entry(token, valid_from, valid_until, generation)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def forget(self, key: bytes | None = None) -> None:
        """Drop the entry of ``key``, or every entry."""
        if key is None:
            self._entries.clear()
        else:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)
