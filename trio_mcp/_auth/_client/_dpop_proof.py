"""DPoP proofs on the client side (RFC 9449 §4): a key per client, a fresh proof per
HTTP request. Needs the ``auth`` extra (joserfc, cryptography).

A proof names the request's method (``htm``) and URL without query or fragment
(``htu``), carries a fresh ``jti`` and ``iat``, the server's ``nonce`` when it asked for
one, and ``ath`` (the access token's hash) when it goes with a token to a resource.
"""

from __future__ import annotations

import secrets
import time
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey

from .._jose import jwk_thumbprint, token_hash

__all__ = ["DPoPKey", "htu"]


def htu(url: str) -> str:
    """The ``htu`` of a request URL: without its query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DPoPKey:
    """An ES256 (P-256) key pair that signs DPoP proofs. Make one per client; the
    authorization server binds the tokens it issues to its thumbprint."""

    algorithm = "ES256"

    def __init__(self, key: ECKey | None = None) -> None:
        self._key = key if key is not None else ECKey.generate_key("P-256")
        self.public_jwk = dict(self._key.as_dict(private=False))
        self.thumbprint = jwk_thumbprint(self.public_jwk)

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        """A fresh proof for one request (a new ``jti`` every call)."""
        claims: dict[str, object] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key)
