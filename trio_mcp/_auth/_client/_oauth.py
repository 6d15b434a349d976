"""The :class:`OAuth` flow: an ``httpx.Auth`` that authorizes MCP requests.

Theory of operation. Each request goes out with the current token, if there is one and
the request is for the protected resource's origin. A ``401`` runs discovery (protected
resource metadata, then authorization server metadata) and gets a token: a stored one,
a refreshed one, or a new one from the flow's grant; a ``403 insufficient_scope`` asks
for the union of the granted and the challenged scopes (a request leads to
``max_authorizations`` authorizations at most, the first one included); a
``use_dpop_nonce`` challenge is retried with the server's nonce. Then the request is
sent again.

Locking. Getting a token is single-flight: one ``trio.Lock``, held while a token is
obtained and for nothing else. A request never holds it while it is sent or while its
response streams, so a long-lived GET stream never delays a POST. A task that waited
for the lock and finds that another task got a new token meanwhile (the token
*generation* moved on) just retries with it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING

import attrs
import httpx
import trio

from .. import _lazy
from ._challenge import Challenge, parse_challenges
from ._client_auth import ClientInfo
from ._errors import DiscoveryError, TokenRequestError
from ._grants import ClientRegistry, Grant, GrantContext
from ._metadata import (
    ResourceMetadata,
    ServerMetadata,
    canonical_resource,
    legacy_server_metadata,
    parse_resource_metadata,
    parse_server_metadata,
    resource_metadata_urls,
    same_origin,
    server_metadata_urls,
)
from ._requester import Requester, nonce_challenge
from ._tokens import MemoryTokenStore, TokenKey, Tokens, TokenStore

if TYPE_CHECKING:
    from ._dpop_proof import DPoPKey

__all__ = ["DEFAULT_MAX_AUTHORIZATIONS", "OAuth"]

#: Authorizations one request may lead to (a ``401``'s and the step-ups of
#: ``403 insufficient_scope`` together), so a server that never accepts ends the loop.
DEFAULT_MAX_AUTHORIZATIONS = 3


def challenge_of(response: httpx.Response) -> Challenge | None:
    """The response's Bearer or DPoP challenge (else its first one), if any."""
    challenges = parse_challenges(", ".join(response.headers.get_list("WWW-Authenticate")))
    for challenge in challenges:
        if challenge.scheme.lower() in ("bearer", "dpop"):
            return challenge
    return challenges[0] if challenges else None


@attrs.frozen
class _Binding:
    """The protected resource the flow authorizes for, and its authorization server."""

    server_url: str
    resource: ResourceMetadata | None
    server: ServerMetadata

    @property
    def resource_uri(self) -> str:
        return self.resource.resource if self.resource is not None else self.server_url

    @property
    def key(self) -> TokenKey:
        return TokenKey(self.server.issuer, self.resource_uri)


class OAuth(httpx.Auth):
    """OAuth 2.1 for MCP requests, as an ``httpx.Auth`` flow.

    Pass it as ``auth=`` to :func:`~trio_mcp.http.open_http_client` (or to your own
    ``httpx.AsyncClient``). One flow serves one protected resource: the first ``401``
    binds it, and tokens are never attached to a request for another origin.

    Args:
        grant: how to get a token once the authorization server is known
            (:class:`AuthorizationCode`, :class:`ClientCredentials`, :class:`JwtBearer`,
            :class:`EnterpriseManaged`).
        client: pre-registered client credentials (used before any registration).
        scopes: scopes to ask for when the server's challenge names none (default: the
            resource's ``scopes_supported``, else none).
        token_store: where tokens are kept (default: in memory, for this object's life).
        dpop: ``True`` to always ask for DPoP-bound tokens, ``False`` never, ``None``
            (default) when the authorization server supports ES256 proofs.
        dpop_content_digest: put the body's ``content_digest`` in the DPoP proofs of
            requests with a body (default ``True``; see :mod:`._dpop_proof`).
        http_client: the ``httpx.AsyncClient`` for requests to authorization servers
            (yours to close; give it no ``auth``). Default: one per operation.
        max_authorizations: authorizations (the first one and step-ups) one request may
            lead to (default 3); past it the last ``401``/``403`` goes to the caller.

    Blocking: a request that needs a token waits while one is obtained (discovery,
    registration, and for the authorization code grant, the user). Cancel it with the
    caller's cancel scope; the lock is released and the next request starts over.
    """

    requires_request_body = True

    def __init__(
        self,
        grant: Grant,
        *,
        client: ClientInfo | None = None,
        scopes: Sequence[str] | None = None,
        token_store: TokenStore | None = None,
        dpop: bool | None = None,
        dpop_content_digest: bool = True,
        http_client: httpx.AsyncClient | None = None,
        max_authorizations: int = DEFAULT_MAX_AUTHORIZATIONS,
    ) -> None:
        self.grant = grant
        self.max_authorizations = max_authorizations
        self._clients = ClientRegistry(client)
        self._scopes = tuple(scopes) if scopes is not None else None
        self._store: TokenStore = token_store if token_store is not None else MemoryTokenStore()
        self._dpop_mode = dpop
        self._content_digest = dpop_content_digest
        self._dpop: DPoPKey | None = None
        self._requester = Requester(http_client)
        self._lock = trio.Lock()
        self._generation = 0
        self._tokens: Tokens | None = None
        self._binding: _Binding | None = None
        self._rs_nonce: str | None = None

    @property
    def tokens(self) -> Tokens | None:
        """The current tokens (their ``repr`` hides the secrets)."""
        return self._tokens

    @property
    def issuer(self) -> str | None:
        """The issuer of the authorization server in use, once known."""
        return self._binding.server.issuer if self._binding is not None else None

    # -- the request flow ------------------------------------------------------------

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        authorizations = nonce_retries = 0
        renewed = False
        while True:
            generation, tokens = self._generation, self._tokens
            ours = self._for_resource(request)
            if ours and tokens is not None:
                if tokens.expired() and not renewed:
                    renewed = True
                    await self._renew(request, None, generation, step_up=False)
                    continue
                self._attach(request, tokens)
            response = yield request
            dpop_sent = ours and tokens is not None and "DPoP" in request.headers
            if dpop_sent and response.headers.get("DPoP-Nonce"):
                self._rs_nonce = response.headers["DPoP-Nonce"]
            if not ours:
                return
            if dpop_sent and nonce_challenge(response) is not None and nonce_retries < 2:
                nonce_retries += 1
                continue
            if authorizations >= self.max_authorizations:
                return
            if response.status_code == 401 and not renewed:
                renewed = True
                authorizations += 1
                await self._renew(request, challenge_of(response), generation, step_up=False)
                continue
            if response.status_code == 403:
                challenge = challenge_of(response)
                if challenge is not None and challenge.param("error") == "insufficient_scope":
                    authorizations += 1
                    await self._renew(request, challenge, generation, step_up=True)
                    continue
            return

    def _for_resource(self, request: httpx.Request) -> bool:
        """Whether a token may go with this request: before the first ``401`` binds the
        flow, every request may be challenged; after, only those to the resource."""
        if self._binding is None:
            return True
        return same_origin(str(request.url), self._binding.resource_uri)

    def _attach(self, request: httpx.Request, tokens: Tokens) -> None:
        if tokens.token_type == "DPoP" and self._dpop is not None:
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self._dpop.proof(
                request.method,
                str(request.url),
                access_token=tokens.access_token,
                nonce=self._rs_nonce,
                body=request.content if self._content_digest and request.content else None,
            )
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
            request.headers.pop("DPoP", None)  # a proof from an earlier attempt

    # -- getting a token (single flight) -------------------------------------------------

    async def _renew(
        self,
        request: httpx.Request,
        challenge: Challenge | None,
        generation: int,
        *,
        step_up: bool,
    ) -> None:
        async with self._lock:
            if self._generation != generation:
                return  # another request got a token while this one waited
            await self._obtain(str(request.url), challenge, step_up=step_up)

    async def _obtain(self, url: str, challenge: Challenge | None, *, step_up: bool) -> None:
        failed = self._tokens
        async with self._requester.client() as http:
            binding = self._binding
            if challenge is not None or binding is None:
                binding = await self._discover(http, canonical_resource(url), challenge)
            if self._binding is not None and self._binding.server.issuer != binding.server.issuer:
                failed = None  # a new authorization server: nothing of the old one is used
            self._binding = binding
            self._choose_dpop(binding.server)
            context = GrantContext(
                http=http,
                requester=self._requester,
                server=binding.server,
                resource=binding.resource_uri,
                scopes=self._choose_scopes(challenge, binding, step_up=step_up),
                clients=self._clients,
                dpop=self._dpop,
            )
            tokens = None if step_up else await self._reuse(context, binding.key, failed)
            if tokens is None:
                tokens = await self.grant.obtain(context)
                client = self._clients.get(binding.server.issuer)
                if client is not None and client.client_secret is None:
                    tokens = attrs.evolve(tokens, client_id=client.client_id)
        await self._store.save(binding.key, tokens)
        self._tokens = tokens
        self._generation += 1

    async def _reuse(
        self, context: GrantContext, key: TokenKey, failed: Tokens | None
    ) -> Tokens | None:
        """A stored token that is not the one that just failed, else a refreshed one."""
        stored = await self._store.load(key)
        failed_token = failed.access_token if failed is not None else None
        if stored is not None and not stored.expired() and stored.access_token != failed_token:
            return stored
        for candidate in (stored, failed):
            if candidate is not None and candidate.refresh_token is not None:
                try:
                    return await self._refresh(context, candidate)
                except TokenRequestError:
                    await self._store.delete(key)
                    return None
        return None

    async def _refresh(self, context: GrantContext, tokens: Tokens) -> Tokens:
        assert tokens.refresh_token is not None
        client = self._clients.get(context.server.issuer)
        if client is None and tokens.client_id is not None:  # stored by an earlier run
            client = ClientInfo(tokens.client_id, issuer=context.server.issuer, auth_method="none")
        fresh = await context.token_request(
            client, {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        )
        if fresh.refresh_token is None:  # not rotated: the old one stays valid
            fresh = attrs.evolve(fresh, refresh_token=tokens.refresh_token)
        if not fresh.scope:
            fresh = attrs.evolve(fresh, scope=tokens.scope)
        return attrs.evolve(fresh, client_id=tokens.client_id)

    def _choose_dpop(self, server: ServerMetadata) -> None:
        wanted = self._dpop_mode
        if wanted is None:
            wanted = "ES256" in (server.dpop_signing_alg_values_supported or ())
        if wanted and self._dpop is None:
            self._dpop = _lazy.DPoPKey()
        elif not wanted:
            self._dpop = None

    def _choose_scopes(
        self, challenge: Challenge | None, binding: _Binding, *, step_up: bool
    ) -> tuple[str, ...] | None:
        """The spec's order: the challenge's ``scope``, else the flow's ``scopes``, else
        the resource's ``scopes_supported``, else none. A step-up asks for the union of
        the scopes held and the challenged ones. ``offline_access`` is added for a user's
        grant only when the authorization server lists it."""
        challenged = (challenge.param("scope") or "").split() if challenge else []
        scopes: tuple[str, ...] | None
        if step_up:
            held = self._tokens.scope if self._tokens is not None else ()
            scopes = tuple(dict.fromkeys([*held, *challenged]))
        elif challenged:
            scopes = tuple(challenged)
        elif self._scopes is not None:
            scopes = self._scopes
        elif binding.resource is not None and binding.resource.scopes_supported:
            scopes = binding.resource.scopes_supported
        else:
            scopes = None
        offered = binding.server.scopes_supported or ()
        if scopes and self.grant.interactive and "offline_access" in offered:
            scopes = tuple(dict.fromkeys([*scopes, "offline_access"]))
        elif scopes and "offline_access" not in offered:
            scopes = tuple(s for s in scopes if s != "offline_access") or None
        return scopes or None

    # -- discovery -------------------------------------------------------------------------

    async def _discover(
        self, http: httpx.AsyncClient, server_url: str, challenge: Challenge | None
    ) -> _Binding:
        """Protected resource metadata from the challenge's ``resource_metadata``, else
        the path-based then the root well-known URL; then the first of its authorization
        servers whose metadata is found. A server without protected resource metadata is
        a 2025-03-26 server: its origin is the authorization server, with default
        endpoints when it has no metadata either."""
        hinted = challenge.param("resource_metadata") if challenge is not None else None
        urls = [*([hinted] if hinted else []), *resource_metadata_urls(server_url)]
        resource: ResourceMetadata | None = None
        for candidate in dict.fromkeys(urls):
            document = await self._requester.get_json(http, candidate)
            if document is not None:
                resource = parse_resource_metadata(document, server_url=server_url)
                break
        if resource is None:
            legacy = legacy_server_metadata(server_url)
            found = await self._server_metadata(http, legacy.issuer)
            return _Binding(server_url, None, found or legacy)
        for issuer in resource.authorization_servers:
            server = await self._server_metadata(http, issuer)
            if server is not None:
                return _Binding(server_url, resource, server)
        raise DiscoveryError(
            f"no metadata found for the authorization servers of {resource.resource}"
        )

    async def _server_metadata(self, http: httpx.AsyncClient, issuer: str) -> ServerMetadata | None:
        for url in server_metadata_urls(issuer):
            document = await self._requester.get_json(http, url)
            if document is not None:
                return parse_server_metadata(document, issuer=issuer)
        return None
