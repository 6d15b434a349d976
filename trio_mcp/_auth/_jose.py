"""The small JOSE pieces both sides share: base64url, PKCE S256, the access-token hash
(``ath``) and the RFC 7638 JWK thumbprint. Signing and verifying live in joserfc."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping

import orjson

__all__ = ["b64url_decode", "b64url_encode", "jwk_thumbprint", "pkce_pair", "token_hash"]

#: The members of each key type that enter its RFC 7638 thumbprint, in order.
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}


def b64url_encode(data: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """The bytes of unpadded base64url text. Raises ``ValueError`` on anything else."""
    if not isinstance(text, str) or any(c in text for c in "+/="):
        raise ValueError("not base64url text")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError("not base64url text") from exc


def pkce_pair() -> tuple[str, str]:
    """A fresh PKCE ``(code_verifier, code_challenge)`` for the S256 method (RFC 7636)."""
    verifier = b64url_encode(secrets.token_bytes(32))  # 43 characters of the unreserved set
    return verifier, b64url_encode(hashlib.sha256(verifier.encode("ascii")).digest())


def token_hash(access_token: str) -> str:
    """The ``ath`` claim of a DPoP proof: base64url(SHA-256(token)) (RFC 9449 §4.2)."""
    return b64url_encode(hashlib.sha256(access_token.encode("ascii")).digest())


def jwk_thumbprint(jwk: Mapping[str, object]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, base64url-encoded.

    Raises:
        ValueError: the key type is not EC, RSA or OKP, or a required member is missing.
    """
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or any(not isinstance(jwk.get(name), str) for name in members):
        raise ValueError("not a public JWK this library can fingerprint")
    canonical = orjson.dumps({name: jwk[name] for name in members})  # sorted, no spaces
    return b64url_encode(hashlib.sha256(canonical).digest())
