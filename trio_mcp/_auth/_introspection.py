"""Opaque (or any) access tokens checked by asking the authorization server (RFC 7662)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from ._fetch import JsonFetcher, warn_if_insecure
from ._jwt import MAX_TOKEN_LENGTH, check_lifetime
from ._verifier import (
    DEFAULT_PRINCIPAL_CLAIMS,
    AccessToken,
    InvalidToken,
    VerifierUnavailable,
    claims_token,
    principal_claims_option,
)

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """A :class:`~trio_mcp.auth.TokenVerifier` that asks the authorization server's
    introspection endpoint (RFC 7662) about every token.

    Nothing is cached: a revoked token is refused on its next request, and each request
    costs one round trip to the endpoint (at most ``fetch_timeout`` seconds; beyond, the
    request gets ``503``). A token must be ``active``; its ``exp``/``nbf``/``iat``, when
    the answer gives them, are checked as for JWTs; its issuer, when ``issuer`` is given,
    must be that. Its audience is checked by the resource server (an answer without
    ``aud`` is therefore refused).

    Args:
        endpoint: the introspection endpoint's URL.
        client_id, client_secret: this resource server's credentials there (HTTP Basic,
            RFC 6749 section 2.3.1); without them, none are sent.
        issuer: the issuer the answers must name.
        leeway: seconds of clock skew allowed.
        http_client: the httpx client for the calls (by default one per call).
        fetch_timeout: seconds a call may take.
        principal_claims: the claims the principal is taken from, the first one present
            (a non-empty string) winning: by default ``("sub", "client_id")``, so a
            token without ``sub`` (a client acting on its own behalf) speaks for its
            client id; ``("sub",)`` refuses such tokens. See
            :data:`~trio_mcp.auth.DEFAULT_PRINCIPAL_CLAIMS`.
        clock: the time now, in seconds since the epoch (for tests).
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        leeway: float = 60.0,
        http_client: httpx.AsyncClient | None = None,
        fetch_timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        principal_claims: Sequence[str] = DEFAULT_PRINCIPAL_CLAIMS,
    ) -> None:
        warn_if_insecure(endpoint)
        self.endpoint = endpoint
        self.issuer = issuer
        self.leeway = leeway
        self.clock = clock
        self.principal_claims = principal_claims_option(principal_claims)
        self._auth: httpx.Auth | None = None
        if client_id is not None:
            # RFC 6749 section 2.3.1: each part form-encoded before Basic encoding.
            secret = quote(client_secret or "", safe="")
            self._auth = httpx.BasicAuth(quote(client_id, safe=""), secret)
        self.fetcher = JsonFetcher(http_client, timeout=fetch_timeout)

    def __repr__(self) -> str:
        return f"<IntrospectionVerifier at {self.endpoint!r}>"

    async def verify(self, token: str) -> AccessToken:
        """Ask the endpoint about ``token``. Blocks for the round trip.

        Raises:
            InvalidToken: not active, expired, or of another issuer.
            VerifierUnavailable: the endpoint did not answer properly.
        """
        if len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("the token is too long")
        status, answer = await self.fetcher.request(
            "POST",
            self.endpoint,
            data={"token": token, "token_type_hint": "access_token"},
            auth=self._auth,
        )
        if status != 200 or not isinstance(answer, dict):
            raise VerifierUnavailable(f"the introspection endpoint answered {status}")
        claims: dict[str, Any] = answer
        if claims.get("active") is not True:
            raise InvalidToken("the token is not active")
        if self.issuer is not None and claims.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        if claims.get("exp") is not None:
            check_lifetime(claims, self.clock(), self.leeway)
        return claims_token(claims, principal_claims=self.principal_claims)
