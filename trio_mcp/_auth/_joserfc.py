"""joserfc (the ``auth`` extra), loaded through :mod:`._lazy` when a key is first imported or a
signature first checked or made: a program that imports :mod:`trio_mcp.auth` for a client flow
that needs no JOSE (bearer tokens, client secrets) neither needs the extra nor pays for loading
it."""

from __future__ import annotations

try:
    from joserfc import jwk, jws, jwt
    from joserfc.errors import JoseError
    from joserfc.jws import JWSRegistry
except ImportError as exc:
    raise ImportError(
        "trio_mcp.auth needs joserfc and cryptography for this: pip install 'trio-mcp[auth]'"
    ) from exc

__all__ = ["JWSRegistry", "JoseError", "jwk", "jws", "jwt"]
