"""DPoP proofs on the client side (RFC 9449 §4): a key per client, a fresh proof per
HTTP request. Needs the ``auth`` extra (joserfc, cryptography).

A proof names the request's method (``htm``) and URL without query or fragment
(``htu``), carries a fresh ``jti`` and ``iat``, the server's ``nonce`` when it asked for
one, and ``ath`` (the access token's hash) when it goes with a token to a resource.

With a request body to a resource it can also carry ``content_digest`` (RFC 9530's
``sha-256=:<base64>:`` of the body), which the MCP DPoP extension's draft required to
bind a proof to its JSON-RPC message. SEP-1932 as accepted dropped that requirement;
RFC 9449 verifiers ignore claims they do not know, so sending it costs one hash.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey

from .._jose import jwk_thumbprint, token_hash

__all__ = ["DPoPKey", "content_digest", "htu"]


def content_digest(body: bytes) -> str:
    """RFC 9530's SHA-256 digest of a body: ``sha-256=:<standard base64>:``."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


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
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
        body: bytes | None = None,
    ) -> str:
        """A fresh proof for one request (a new ``jti`` every call); ``body``, when given,
        adds its ``content_digest``."""
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
        if body is not None:
            claims["content_digest"] = content_digest(body)
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key)
