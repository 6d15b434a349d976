"""Who the client is to an authorization server: :class:`ClientInfo` (a client ID and
how it authenticates at the token endpoint) and the code that adds that authentication
to a token request (``none``, ``client_secret_basic``, ``client_secret_post``,
``private_key_jwt``).
"""

from __future__ import annotations

import base64
import secrets
import time
from typing import Literal
from urllib.parse import quote

import attrs

from .. import _lazy
from ._errors import RegistrationError

__all__ = ["AuthMethod", "ClientInfo", "authenticate"]

AuthMethod = Literal["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@attrs.frozen
class ClientInfo:
    """A client ID at one authorization server, and its token endpoint authentication.

    ``issuer`` binds the credentials to the authorization server that issued them: they
    are never presented to another. Pre-registered credentials may leave it ``None``;
    they are then bound to the first authorization server they are used with.
    ``auth_method`` ``None`` picks one from what the server supports and what is here.
    ``private_key`` (PEM) signs ``private_key_jwt`` assertions.
    """

    client_id: str
    client_secret: str | None = attrs.field(default=None, repr=False)
    issuer: str | None = None
    auth_method: AuthMethod | None = None
    private_key: str | bytes | None = attrs.field(default=None, repr=False)
    signing_algorithm: str = "ES256"

    def choose_method(self, supported: tuple[str, ...] | None) -> AuthMethod:
        """The token endpoint authentication to use with a server supporting
        ``supported`` (``None``: the RFC 8414 default, ``client_secret_basic``)."""
        if self.auth_method is not None:
            return self.auth_method
        offered = supported if supported is not None else ("client_secret_basic",)
        if self.private_key is not None and "private_key_jwt" in offered:
            return "private_key_jwt"
        if self.client_secret is not None:
            for method in ("client_secret_basic", "client_secret_post"):
                if method in offered:
                    return method
            return "client_secret_basic"
        if self.private_key is not None:
            return "private_key_jwt"
        return "none"


def authenticate(
    client: ClientInfo,
    method: AuthMethod,
    form: dict[str, str],
    headers: dict[str, str],
    *,
    issuer: str,
) -> None:
    """Add ``client``'s authentication to a token request's form and headers."""
    if method == "client_secret_basic":
        if client.client_secret is None:
            raise RegistrationError("client_secret_basic needs a client secret")
        # RFC 6749 §2.3.1: each part form-urlencoded before base64
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    elif method == "client_secret_post":
        if client.client_secret is None:
            raise RegistrationError("client_secret_post needs a client secret")
        form["client_id"] = client.client_id
        form["client_secret"] = client.client_secret
    elif method == "private_key_jwt":
        form["client_id"] = client.client_id
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = client_assertion(client, audience=issuer)
    else:
        form["client_id"] = client.client_id


def client_assertion(client: ClientInfo, *, audience: str, lifetime: int = 300) -> str:
    """An RFC 7523 §2.2 client assertion: ``iss`` and ``sub`` the client ID, ``aud`` the
    authorization server's issuer, short-lived, with a fresh ``jti``."""
    if client.private_key is None:
        raise RegistrationError("private_key_jwt needs a private key")

    key = _lazy.jwk.import_key(client.private_key, _key_type(client.signing_algorithm))
    now = int(time.time())
    claims = {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + lifetime,
        "jti": secrets.token_urlsafe(16),
    }
    return _lazy.jwt.encode({"alg": client.signing_algorithm}, claims, key)


def _key_type(algorithm: str) -> Literal["EC", "RSA", "OKP"]:
    if algorithm.startswith("ES"):
        return "EC"
    if algorithm == "EdDSA":
        return "OKP"
    return "RSA"
