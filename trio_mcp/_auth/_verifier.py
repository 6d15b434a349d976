"""What a verified access token says, and the protocol every token verifier follows.

A :class:`TokenVerifier` turns the raw token of one request into an
:class:`AccessToken` or refuses it with :class:`InvalidToken`. The raw token
goes no further than the verifier: the :class:`AccessToken` does not hold it,
so nothing a handler can reach could pass it on to another service.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol, runtime_checkable

import attrs

#: The ASGI scope key under which the verified :class:`AccessToken` of a request reaches the
#: MCP endpoint (the token itself never does).
ACCESS_TOKEN_KEY: Final = "trio_mcp.access_token"

log = logging.getLogger("trio_mcp.auth")

__all__ = [
    "ACCESS_TOKEN_KEY",
    "DEFAULT_PRINCIPAL_CLAIMS",
    "AccessToken",
    "InvalidToken",
    "TokenVerifier",
    "VerifierUnavailable",
    "claims_token",
    "scopes_of",
]


class InvalidToken(Exception):
    """The access token is not acceptable (malformed, badly signed, expired, issued by or
    for someone else, revoked). The request gets ``401`` with ``error="invalid_token"``;
    ``description`` goes into ``error_description`` (it must not repeat the token)."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class VerifierUnavailable(Exception):
    """The token cannot be checked right now (the authorization server's keys or its
    introspection endpoint are out of reach). The request gets ``503`` with
    ``Retry-After``, not ``401``: the client's token may well be good."""


@attrs.frozen(kw_only=True)
class AccessToken:
    """A verified access token, without the token itself.

    Attributes:
        subject: who the token speaks for: the first of the verifier's
            ``principal_claims`` the token carries (by default the ``sub`` claim, else,
            for a client acting on its own behalf, its ``client_id``). It becomes the
            request's principal.
        scopes: the scopes granted.
        audience: the resources the token was issued for (``aud``).
        issuer: the authorization server that issued it (``iss``).
        client_id: the OAuth client that holds it, when the token says.
        expires_at: when it expires (seconds since the epoch), when it says.
        jkt: the JWK SHA-256 thumbprint the token is bound to (``cnf.jkt``, DPoP), or
            ``None`` for a bearer token.
        claims: every claim, for policies of your own.
    """

    subject: str
    scopes: frozenset[str] = frozenset()
    audience: tuple[str, ...] = ()
    issuer: str | None = None
    client_id: str | None = None
    expires_at: float | None = None
    jkt: str | None = None
    claims: Mapping[str, Any] = attrs.field(factory=dict, repr=False)


@runtime_checkable
class TokenVerifier(Protocol):
    """Verifies access tokens for a resource server.

    ``verify`` may block (fetching keys, asking an introspection endpoint); it runs in
    the task of the request being authorized, so cancelling that request cancels it.
    It checks the token's integrity, issuer and lifetime; the caller (the resource
    server) checks the audience, the scopes and any proof of possession.
    """

    async def verify(self, token: str) -> AccessToken:
        """The verified token.

        Raises:
            InvalidToken: the token is not acceptable.
        """
        ...


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token's claims grant: ``scope`` (a space-separated string, RFC 9068 and
    RFC 7662) or ``scp`` (a list, as some authorization servers write it)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp", scope)
    if isinstance(scp, list):
        return frozenset(s for s in scp if isinstance(s, str))
    if isinstance(scp, str):
        return frozenset(scp.split())
    return frozenset()


#: The claims a verifier takes the principal from by default, in order: the subject,
#: else (a client acting on its own behalf, whose token may carry no ``sub``) its client id.
DEFAULT_PRINCIPAL_CLAIMS: Final = ("sub", "client_id")


def principal_claims_option(principal_claims: Sequence[str]) -> tuple[str, ...]:
    """``principal_claims`` checked: a non-empty sequence of distinct claim names.

    Raises:
        TypeError: a single string (it would read as one claim per character) or a
            sequence of something else than strings.
        ValueError: an empty sequence, an empty name or a repeated one.
    """
    if isinstance(principal_claims, str) or not all(
        isinstance(claim, str) for claim in principal_claims
    ):
        raise TypeError(
            f"principal_claims must be a sequence of claim names, such as ('sub',), "
            f"not {principal_claims!r}"
        )
    claims = tuple(principal_claims)
    if not claims or not all(claims) or len(set(claims)) != len(claims):
        raise ValueError(
            f"principal_claims must name at least one claim, each once: {principal_claims!r}"
        )
    return claims


def claims_token(
    claims: Mapping[str, Any], *, principal_claims: Sequence[str] = DEFAULT_PRINCIPAL_CLAIMS
) -> AccessToken:
    """An :class:`AccessToken` from checked claims (JWT or introspection).

    Its subject (the principal) is the first of ``principal_claims`` that the claims
    hold as a non-empty string. Taking it from another claim than the first is logged
    at debug level (naming the claims, never the token or their values).

    Raises:
        InvalidToken: none of ``principal_claims`` names a subject.
    """
    subject = None
    for claim in principal_claims:
        value = claims.get(claim)
        if isinstance(value, str) and value:
            subject = value
            if claim != principal_claims[0]:
                log.debug(
                    "the token has no %r claim; its principal is its %r claim",
                    principal_claims[0],
                    claim,
                )
            break
    if subject is None:
        raise InvalidToken(f"the token names no subject (none of {list(principal_claims)})")
    client_id = claims.get("client_id")
    if not isinstance(client_id, str):
        client_id = None
    aud = claims.get("aud")
    audience: tuple[str, ...]
    if isinstance(aud, str):
        audience = (aud,)
    elif isinstance(aud, list):
        audience = tuple(a for a in aud if isinstance(a, str))
    else:
        audience = ()
    exp = claims.get("exp")
    cnf = claims.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    issuer = claims.get("iss")
    return AccessToken(
        subject=subject,
        scopes=scopes_of(claims),
        audience=audience,
        issuer=issuer if isinstance(issuer, str) else None,
        client_id=client_id,
        expires_at=float(exp) if isinstance(exp, (int, float)) and _is_number(exp) else None,
        jkt=jkt if isinstance(jkt, str) else None,
        claims=dict(claims),
    )


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
