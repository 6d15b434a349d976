"""A fake authorization server in memory: signing keys, its metadata and key set served
through an ``httpx.MockTransport`` (no socket), and tokens made to order, good or bad."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

import httpx
from joserfc import jwk, jws
from joserfc.jws import JWSRegistry

ISSUER = "https://as.example"
RESOURCE = "http://localhost/mcp"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unsigned(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """The signing input of a compact JWS."""
    return b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())


class FakeIssuer:
    """An authorization server: ``transport`` answers its metadata and key set (and an
    introspection endpoint); ``token`` mints access tokens."""

    def __init__(self, issuer: str = ISSUER) -> None:
        self.issuer = issuer
        self.keys: list[jwk.ECKey] = [jwk.ECKey.generate_key("P-256", auto_kid=True)]
        #: Paths fetched, in order.
        self.fetched: list[str] = []
        #: What the introspection endpoint says about each token.
        self.introspection: dict[str, dict[str, Any]] = {}
        self.introspection_status = 200
        self.jwks_status = 200

    @property
    def key(self) -> jwk.ECKey:
        """The key it signs with now."""
        return self.keys[0]

    def rotate(self) -> None:
        """Sign with a new key from now on (the old one stays published)."""
        self.keys.insert(0, jwk.ECKey.generate_key("P-256", auto_kid=True))

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.as_dict(private=False) | {"kid": k.kid} for k in self.keys]}

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.fetched.append(path)
        if path == "/.well-known/oauth-authorization-server":
            return httpx.Response(
                200,
                json={
                    "issuer": self.issuer,
                    "jwks_uri": f"{self.issuer}/jwks",
                    "token_endpoint": f"{self.issuer}/token",
                },
            )
        if path == "/jwks":
            return httpx.Response(self.jwks_status, json=self.jwks())
        if path == "/introspect":
            token = dict(httpx.QueryParams(request.content.decode()))["token"]
            answer = self.introspection.get(token, {"active": False})
            return httpx.Response(self.introspection_status, json=answer)
        return httpx.Response(404)

    def http_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": "alice",
            "aud": RESOURCE,
            "scope": "mcp:tools",
            "iat": now,
            "exp": now + 300,
            "client_id": "client-1",
            "jti": secrets.token_urlsafe(8),
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, *, key: Any = None, header: dict[str, Any] | None = None, **claims: Any) -> str:
        """A token signed with ES256 by ``key`` (the current key); ``claims`` override the
        defaults (``None`` removes one)."""
        key = key if key is not None else self.key
        head = {"alg": "ES256", "typ": "at+jwt", "kid": key.kid, **(header or {})}
        # Signed by hand, so that headers a library would refuse to write can be tested.
        signing_input = unsigned(head, self.claims(**claims))
        signature = JWSRegistry.algorithms["ES256"].sign(signing_input.encode(), key)
        return signing_input + "." + b64(signature)

    def token_alg_none(self, **claims: Any) -> str:
        return unsigned({"alg": "none", "typ": "at+jwt"}, self.claims(**claims)) + "."

    def token_hs256_with_public_key(self, **claims: Any) -> str:
        """The classic confusion attack: HMAC keyed with the issuer's *public* key."""
        secret = json.dumps(self.key.as_dict(private=False)).encode()
        signing_input = unsigned(
            {"alg": "HS256", "typ": "at+jwt", "kid": self.key.kid}, self.claims(**claims)
        )
        mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        return signing_input + "." + b64(mac)


class DpopKey:
    """A client's DPoP key, making proofs."""

    def __init__(self) -> None:
        self.key = jwk.ECKey.generate_key("P-256")

    @property
    def jkt(self) -> str:
        return self.key.thumbprint()

    def proof(
        self,
        method: str,
        url: str,
        token: str | None,
        *,
        key: Any = None,
        **overrides: Any,
    ) -> str:
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(12),
            "htm": method,
            "htu": url,
            "iat": int(time.time()),
        }
        if token is not None:
            claims["ath"] = b64(hashlib.sha256(token.encode()).digest())
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        signer = key if key is not None else self.key
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": signer.as_dict(private=False)}
        return jws.serialize_compact(header, json.dumps(claims).encode(), signer)
