"""The ways to get an access token once the authorization server is known: the
authorization code flow (with PKCE, registration and the callback checks), client
credentials, the JWT-bearer grant of workload identity federation, and
enterprise-managed authorization (RFC 8693 token exchange for an ID-JAG, then the
RFC 7523 JWT-bearer grant).

Each grant is a small value with one method, ``obtain(context)``, that the
:class:`~trio_mcp.auth.OAuth` flow calls with the lock for a new token held.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs
import httpx

from .._jose import pkce_pair
from ._client_auth import ClientInfo, authenticate
from ._errors import CallbackError, RegistrationError, TokenRequestError
from ._metadata import ServerMetadata
from ._requester import Requester
from ._tokens import Tokens

if TYPE_CHECKING:  # joserfc is imported only when DPoP is used
    from ._dpop_proof import DPoPKey

__all__ = [
    "AuthorizationCode",
    "ClientCredentials",
    "ClientRegistry",
    "EnterpriseManaged",
    "Grant",
    "GrantContext",
    "JwtBearer",
    "RedirectHandler",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

#: ``async (authorization_url) -> callback_url``: show the user the authorization page
#: and return the URL the authorization server redirected back to.
RedirectHandler = Callable[[str], Awaitable[str]]
#: A string, or an async function returning a fresh one (a workload token, an ID token).
Secret = str | Callable[[], Awaitable[str]]


async def _value(secret: Secret) -> str:
    return secret if isinstance(secret, str) else await secret()


class ClientRegistry:
    """Client IDs per authorization server (SEP-2352): credentials obtained from one
    issuer are only ever presented to that issuer. Pre-registered credentials without
    an issuer are bound to the first one they are used with."""

    def __init__(self, preregistered: ClientInfo | None = None) -> None:
        self._pending = preregistered
        self._by_issuer: dict[str, ClientInfo] = {}
        if preregistered is not None and preregistered.issuer is not None:
            self._by_issuer[preregistered.issuer] = preregistered
            self._pending = None

    def get(self, issuer: str) -> ClientInfo | None:
        found = self._by_issuer.get(issuer)
        if found is None and self._pending is not None:
            found = self._by_issuer[issuer] = attrs.evolve(self._pending, issuer=issuer)
            self._pending = None
        return found

    def remember(self, info: ClientInfo) -> None:
        assert info.issuer is not None
        self._by_issuer[info.issuer] = info

    def forget(self, issuer: str) -> None:
        self._by_issuer.pop(issuer, None)


@attrs.define
class GrantContext:
    """What a grant works with: the validated authorization server, the resource and
    scopes to ask for, the client IDs known so far, and the HTTP to use."""

    http: httpx.AsyncClient
    requester: Requester
    server: ServerMetadata
    resource: str
    scopes: tuple[str, ...] | None
    clients: ClientRegistry
    dpop: DPoPKey | None = None

    async def token_request(
        self, client: ClientInfo | None, form: dict[str, str], *, url: str | None = None
    ) -> Tokens:
        """A token request to the server's token endpoint, authenticated as ``client``
        (``None``: not at all), with ``resource`` added."""
        headers: dict[str, str] = {}
        form = {**form, "resource": self.resource}
        if client is not None:
            method = client.choose_method(self.server.token_endpoint_auth_methods_supported)
            authenticate(client, method, form, headers, issuer=self.server.issuer)
        return await self.requester.token_request(
            self.http,
            url or self.server.token_endpoint,
            form,
            headers,
            dpop=self.dpop,
            requested_scope=self.scopes or (),
        )

    def scope_form(self) -> dict[str, str]:
        return {"scope": " ".join(self.scopes)} if self.scopes else {}


class Grant(Protocol):
    """How a flow gets a new token from a validated authorization server."""

    @property
    def interactive(self) -> bool:
        """Whether a user takes part (then ``offline_access`` and refresh tokens apply)."""
        ...

    async def obtain(self, context: GrantContext) -> Tokens: ...


def _is_loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    host = (parts.hostname or "").lower()
    return parts.scheme not in ("http", "https") or host in ("localhost", "127.0.0.1", "::1")


@attrs.frozen
class AuthorizationCode:
    """The authorization code flow with PKCE (S256): a user approves in a browser.

    ``redirect_handler`` shows the authorization URL and returns the callback URL (see
    :func:`~trio_mcp.auth.open_loopback_redirect` for a browser and a loopback server);
    ``redirect_uri`` is where the authorization server sends the user back.

    Registration follows the spec's order: pre-registered credentials (the flow's
    ``client=``), a Client ID Metadata Document when the server supports them and
    ``client_metadata_url`` is set, then dynamic client registration.
    """

    redirect_handler: RedirectHandler
    redirect_uri: str
    client_name: str = "trio-mcp"
    client_metadata_url: str | None = None
    application_type: str | None = None
    interactive: bool = attrs.field(default=True, init=False)

    async def obtain(self, context: GrantContext) -> Tokens:
        server = context.server
        if server.authorization_endpoint is None:
            raise RegistrationError(f"{server.issuer} has no authorization_endpoint")
        if "S256" not in (server.code_challenge_methods_supported or ()):
            raise CallbackError(
                f"{server.issuer} does not advertise PKCE with S256 "
                "(code_challenge_methods_supported): refusing to authorize there"
            )
        client = await self._client(context)
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        query = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": context.resource,
            **context.scope_form(),
        }
        callback = await self.redirect_handler(_with_query(server.authorization_endpoint, query))
        code = check_callback(callback, state=state, server=server)
        return await context.token_request(
            client,
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.redirect_uri,
                "code_verifier": verifier,
            },
        )

    async def _client(self, context: GrantContext) -> ClientInfo:
        server = context.server
        known = context.clients.get(server.issuer)
        if known is not None:
            return known
        if self.client_metadata_url is not None and server.client_id_metadata_document_supported:
            info = ClientInfo(self.client_metadata_url, issuer=server.issuer, auth_method="none")
            context.clients.remember(info)
            return info
        if server.registration_endpoint is None:
            raise RegistrationError(
                f"no client ID for {server.issuer}: it offers neither Client ID Metadata "
                "Documents nor dynamic registration, and none was pre-registered"
            )
        info = await self._register(context, server.registration_endpoint)
        context.clients.remember(info)
        return info

    async def _register(self, context: GrantContext, endpoint: str) -> ClientInfo:
        supported = context.server.token_endpoint_auth_methods_supported
        method = next(
            (m for m in ("none", "client_secret_basic", "client_secret_post")
             if supported is None or m in supported),
            None,
        )  # fmt: skip
        application_type = self.application_type or (
            "native" if _is_loopback(self.redirect_uri) else "web"
        )
        document: dict[str, object] = {
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "application_type": application_type,
        }
        if method is not None:
            document["token_endpoint_auth_method"] = method
        try:
            answer = await context.requester.post_json(context.http, endpoint, document)
        except TokenRequestError as exc:
            raise RegistrationError(f"dynamic client registration failed: {exc}") from None
        client_id = answer.get("client_id")
        secret = answer.get("client_secret")
        chosen = answer.get("token_endpoint_auth_method")
        if not isinstance(client_id, str) or not client_id:
            raise RegistrationError(f"{endpoint} registered no client_id")
        known = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
        return ClientInfo(
            client_id,
            client_secret=secret if isinstance(secret, str) and secret else None,
            issuer=context.server.issuer,
            auth_method=chosen if chosen in known else None,
        )


def _with_query(url: str, query: dict[str, str]) -> str:
    parts = urlsplit(url)
    pairs = [*parse_qsl(parts.query, keep_blank_values=True), *query.items()]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(pairs), ""))


def check_callback(callback_url: str, *, state: str, server: ServerMetadata) -> str:
    """The authorization code from a callback URL, after the checks the spec requires:
    ``state`` identical to the one sent, then ``iss`` (RFC 9207 §2.4) compared to the
    recorded issuer by simple string comparison — required when the server advertises
    it, compared whenever present. Only then is an ``error`` looked at.

    Raises:
        CallbackError: the response is refused.
    """
    params: dict[str, str] = {}
    for name, value in parse_qsl(urlsplit(callback_url).query, keep_blank_values=True):
        if name in params:
            raise CallbackError(f"the authorization response repeats {name!r}")
        params[name] = value
    if params.get("state") != state:
        raise CallbackError("the authorization response's state does not match: refused")
    iss = params.get("iss")
    if iss is None and server.iss_parameter_supported:
        raise CallbackError(
            f"{server.issuer} advertises the iss parameter but the response has none: refused"
        )
    if iss is not None and iss != server.issuer:
        raise CallbackError("the authorization response comes from another issuer: refused")
    if "error" in params:
        description = params.get("error_description", "")[:300]
        raise CallbackError(f"authorization refused: {params['error'][:100]} {description}")
    code = params.get("code")
    if not code:
        raise CallbackError("the authorization response carries no code")
    return code


@attrs.frozen
class ClientCredentials:
    """The client credentials grant, for a program acting on its own behalf: ``client``
    holds its ID and a secret (``client_secret_basic``/``_post``) or a private key
    (``private_key_jwt``)."""

    client: ClientInfo
    interactive: bool = attrs.field(default=False, init=False)

    async def obtain(self, context: GrantContext) -> Tokens:
        client = context.clients.get(context.server.issuer) or self.client
        return await context.token_request(
            client, {"grant_type": "client_credentials", **context.scope_form()}
        )


@attrs.define
class JwtBearer:
    """Workload identity federation: the RFC 7523 JWT-bearer grant with a token the
    platform gave the workload (``assertion``: the JWT, or an async function returning a
    fresh one). A refusal is final: no retry, and no other grant is tried."""

    assertion: Secret
    client_id: str | None = None
    interactive: bool = attrs.field(default=False, init=False)
    _refused: TokenRequestError | None = attrs.field(default=None, init=False)

    async def obtain(self, context: GrantContext) -> Tokens:
        if self._refused is not None:
            raise self._refused
        client = ClientInfo(self.client_id, auth_method="none") if self.client_id else None
        form = {"grant_type": JWT_BEARER, "assertion": await _value(self.assertion)}
        try:
            return await context.token_request(client, {**form, **context.scope_form()})
        except TokenRequestError as exc:
            self._refused = exc
            raise


@attrs.frozen
class EnterpriseManaged:
    """Enterprise-managed authorization: the user's ID token from the enterprise identity
    provider is exchanged there (RFC 8693) for an ID-JAG naming this authorization server
    and resource, which the JWT-bearer grant (RFC 7523) turns into an access token.

    ``client`` authenticates at the authorization server; ``idp_client`` at the
    identity provider's token endpoint ``idp_token_endpoint``.
    """

    id_token: Secret
    idp_token_endpoint: str
    idp_client: ClientInfo
    client: ClientInfo
    interactive: bool = attrs.field(default=False, init=False)

    async def obtain(self, context: GrantContext) -> Tokens:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": context.server.issuer,
            "resource": context.resource,
            "subject_token": await _value(self.id_token),
            "subject_token_type": ID_TOKEN,
            **context.scope_form(),
        }
        headers: dict[str, str] = {}
        authenticate(
            self.idp_client,
            self.idp_client.choose_method(None if self.idp_client.client_secret else ("none",)),
            form,
            headers,
            issuer=self.idp_token_endpoint,
        )
        exchanged = await context.requester.token_request(
            context.http, self.idp_token_endpoint, form, headers, any_token_type=True
        )
        return await context.token_request(
            self.client,
            {"grant_type": JWT_BEARER, "assertion": exchanged.access_token, **context.scope_form()},
        )
