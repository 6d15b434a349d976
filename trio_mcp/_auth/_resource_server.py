"""An MCP server as an OAuth 2.1 protected resource: the checks every HTTP request passes
before it reaches the MCP endpoint.

Theory of operation
-------------------

:meth:`ProtectedResource.admit` runs at the ASGI edge, before the body is
read. In order, a request is refused with:

- ``400 invalid_request`` for a token in the query string (the MCP spec forbids
  it), or several ``Authorization`` (or ``DPoP``) headers;
- ``401`` without ``error`` when it carries no token (the challenge names the
  metadata document and the scopes to ask for);
- ``401 invalid_token`` when the verifier refuses the token or it was issued for
  another resource (its audience must name :attr:`~ProtectedResource.resource`),
  or a DPoP-bound token comes as a plain bearer token;
- ``401 invalid_dpop_proof`` / ``use_dpop_nonce`` when its DPoP proof fails;
- ``403 insufficient_scope`` when it lacks the scopes every request needs;
- ``503`` when the token cannot be checked now (the issuer is out of reach).

Then, once the body is parsed, :meth:`~ProtectedResource.refuse_scopes`
refuses with ``403 insufficient_scope`` a call of a tool, read of a resource or
get of a prompt whose required scopes the token lacks, before any handler runs.

What goes on to the MCP endpoint is the verified :class:`AccessToken` (never the
token itself: the ``Authorization`` and ``DPoP`` headers are removed from the
ASGI scope) whose subject becomes the request's principal.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import orjson

from .._errors import ErrorCode
from .._types._base import RequestId
from ._dpop_verify import DpopRefused, DpopVerifier
from ._jwt import JwtVerifier
from ._metadata import (
    WELL_KNOWN,
    ProtectedResourceMetadata,
    canonical_resource,
    metadata_url as well_known_metadata_url,
    same_resource,
)
from ._verifier import (
    ACCESS_TOKEN_KEY,
    AccessToken,
    InvalidToken,
    TokenVerifier,
    VerifierUnavailable,
)

if TYPE_CHECKING:
    from ._exchange import HttpExchange

__all__ = ["AuthRefusal", "ProtectedResource"]

log = logging.getLogger("trio_mcp.auth")

#: RFC 6750's b64token.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
#: Header names that carry credentials: never passed further than the edge.
_CREDENTIAL_HEADERS = frozenset({b"authorization", b"dpop"})
_QUERY_TOKEN_NAMES = frozenset({"access_token"})


def _quoted(value: str) -> str:
    """``value`` fit for a quoted-string of a challenge (RFC 6750 section 3: printable ASCII
    without ``"`` and ``\\``), cut to a sensible length."""
    cleaned = "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in value)
    return cleaned[:200]


class AuthRefusal(Exception):
    """A request refused at the edge: the HTTP answer to send."""

    def __init__(
        self,
        status: int,
        description: str,
        *,
        challenges: Sequence[str],
        headers: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.challenges = list(challenges)
        self.headers = list(headers)

    def message(self) -> str:
        """The message of the JSON-RPC error (-32600) that carries the refusal: the status's
        reason phrase and the description."""
        reason = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden"}.get(
            self.status, "Service Unavailable"
        )
        return f"{reason}: {self.description}"

    def response_headers(self) -> list[tuple[bytes, bytes]]:
        headers = [(b"www-authenticate", c.encode("ascii")) for c in self.challenges]
        if self.status == 503:
            headers.append((b"retry-after", b"5"))
        return headers + self.headers


class ProtectedResource:
    """An MCP server's authorization as an OAuth 2.1 resource server: pass it as
    ``asgi_app(server, auth=...)`` or ``serve(server, auth=...)``.

    Args:
        resource: the server's canonical URI, as clients name it (say
            ``https://mcp.example.com/mcp``): tokens must be issued for it (their
            audience), and its metadata is served at the matching well-known path.
        verifier: checks tokens (:class:`JwtVerifier`, :class:`IntrospectionVerifier`
            or your own :class:`TokenVerifier`).
        authorization_servers: the issuers clients should get tokens from.
        scopes_supported: the scopes a client should ask for to start with (in the
            metadata, and in the ``401`` challenge).
        required_scopes: scopes every request needs (``403`` without them). Tools,
            resources and prompts add their own (``@server.tool(scopes=[...])``).
        implied_scopes: scope hierarchies: ``{"admin": ["mcp:tools", "mcp:read"]}``
            makes a token granted ``admin`` count as granted the others too.
        dpop: checks DPoP proofs; without it, DPoP-bound tokens are refused.
        require_dpop: refuse plain bearer tokens (only DPoP-bound ones are accepted).
        resource_name, resource_documentation: for the metadata document.
        metadata_extra: further fields for the metadata document.
        metadata_url: where clients find the metadata document, when not at the
            resource's own well-known URL: a WebSocket server's (``serve_websocket``
            answers nothing but handshakes) served by an HTTP app (``asgi_app`` with this
            object serves it at this URL's path too).

    Raises:
        ValueError: ``resource`` is not an absolute http(s) URI without fragment, no
            authorization server, or ``require_dpop`` without ``dpop``.
    """

    def __init__(
        self,
        resource: str,
        *,
        verifier: TokenVerifier,
        authorization_servers: Sequence[str],
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Collection[str] = (),
        implied_scopes: Mapping[str, Collection[str]] | None = None,
        dpop: DpopVerifier | None = None,
        require_dpop: bool = False,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        metadata_extra: Mapping[str, Any] | None = None,
        metadata_url: str | None = None,
    ) -> None:
        if require_dpop and dpop is None:
            raise ValueError("require_dpop needs a DpopVerifier (dpop=...)")
        if not authorization_servers:
            raise ValueError("name at least one authorization server")
        self.resource = canonical_resource(resource)
        self.verifier = verifier
        self.required_scopes = frozenset(required_scopes)
        self.implied_scopes = {k: frozenset(v) for k, v in (implied_scopes or {}).items()}
        self.dpop = dpop
        self.require_dpop = require_dpop
        self.metadata = ProtectedResourceMetadata(
            resource=self.resource,
            authorization_servers=list(authorization_servers),
            scopes_supported=list(scopes_supported) if scopes_supported is not None else None,
            resource_name=resource_name,
            resource_documentation=resource_documentation,
            dpop_signing_alg_values_supported=sorted(dpop.algorithms) if dpop else None,
            dpop_bound_access_tokens_required=True if require_dpop else None,
            extra=dict(metadata_extra or {}),
        )
        self._metadata_body = orjson.dumps(self.metadata.to_json())
        #: Where the metadata is served inside the app: the path-based well-known URI
        #: (RFC 9728 section 3.1) and the root one (for clients that try it first).
        path = urlsplit(self.resource).path.rstrip("/")
        self.metadata_paths = frozenset({WELL_KNOWN + path, WELL_KNOWN})
        #: The metadata URL named in challenges.
        self.metadata_url = well_known_metadata_url(self.resource)
        if metadata_url is not None:
            self.metadata_url = metadata_url
            self.metadata_paths |= {urlsplit(metadata_url).path}
        scopes = scopes_supported if scopes_supported is not None else sorted(required_scopes)
        self._initial_scope = " ".join(scopes) if scopes else None
        parts = urlsplit(self.resource)
        self._origin = f"{parts.scheme}://{parts.netloc}"

    @classmethod
    def for_issuer(
        cls,
        resource: str,
        issuer: str,
        *,
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Collection[str] = (),
        implied_scopes: Mapping[str, Collection[str]] | None = None,
        dpop: DpopVerifier | None = None,
        require_dpop: bool = False,
        resource_name: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        metadata_url: str | None = None,
    ) -> ProtectedResource:
        """A resource accepting JWT access tokens of one authorization server: its keys
        come from its metadata (see :class:`JwtVerifier`)."""
        return cls(
            resource,
            verifier=JwtVerifier(issuer, http_client=http_client),
            authorization_servers=[issuer],
            scopes_supported=scopes_supported,
            required_scopes=required_scopes,
            implied_scopes=implied_scopes,
            dpop=dpop,
            require_dpop=require_dpop,
            resource_name=resource_name,
            metadata_url=metadata_url,
        )

    def __repr__(self) -> str:
        return f"<ProtectedResource {self.resource!r}>"

    # -- challenges -------------------------------------------------------------------------

    def _challenge(
        self,
        scheme: str,
        error: str | None = None,
        description: str | None = None,
        scope: str | None = None,
    ) -> str:
        params = []
        if error is not None:
            params.append(f'error="{error}"')
        if description is not None and error is not None:
            # (RFC 6750 section 3.1: no error information for a request without a token.)
            params.append(f'error_description="{_quoted(description)}"')
        if scope is not None:
            params.append(f'scope="{_quoted(scope)}"')
        params.append(f'resource_metadata="{self.metadata_url}"')
        if scheme == "DPoP" and self.dpop is not None:
            params.append(f'algs="{" ".join(sorted(self.dpop.algorithms))}"')
        return f"{scheme} " + ", ".join(params)

    def _challenges(self, error: str | None = None, description: str | None = None) -> list[str]:
        schemes = ["DPoP"] if self.require_dpop else ["Bearer"]
        if self.dpop is not None and not self.require_dpop:
            schemes.append("DPoP")
        return [self._challenge(s, error, description, self._initial_scope) for s in schemes]

    def _refuse(self, status: int, error: str | None, description: str) -> AuthRefusal:
        return AuthRefusal(status, description, challenges=self._challenges(error, description))

    def insufficient_scope(self, needed: Iterable[str], description: str) -> AuthRefusal:
        """The ``403`` for a token without the scopes ``needed`` (all of them are named:
        the client asks for them in one go)."""
        scope = " ".join(sorted(needed))
        scheme = "DPoP" if self.require_dpop else "Bearer"
        challenge = self._challenge(scheme, "insufficient_scope", description, scope)
        return AuthRefusal(403, description, challenges=[challenge])

    # -- checks -----------------------------------------------------------------------------

    def granted(self, token: AccessToken) -> frozenset[str]:
        """The scopes ``token`` grants, with the ones they imply (:attr:`implied_scopes`)."""
        granted = set(token.scopes)
        pending = list(granted)
        while pending:
            for implied in self.implied_scopes.get(pending.pop(), ()):
                if implied not in granted:
                    granted.add(implied)
                    pending.append(implied)
        return frozenset(granted)

    def refuse_scopes(self, token: AccessToken, needed: frozenset[str]) -> AuthRefusal | None:
        """The ``403`` for a request needing ``needed`` (besides :attr:`required_scopes`),
        or ``None`` when ``token`` grants them all."""
        needed = needed | self.required_scopes
        if needed <= self.granted(token):
            return None
        return self.insufficient_scope(needed, "the token lacks a scope this request needs")

    async def authenticate(
        self,
        *,
        method: str,
        url: str,
        headers: Sequence[tuple[bytes, bytes]],
        query_string: bytes = b"",
    ) -> AccessToken:
        """The verified token of a request. Blocks while the verifier does.

        Args:
            method: the HTTP method.
            url: the URL the client sent the request to (DPoP proofs name it).
            headers: the raw request headers.
            query_string: the raw query string.

        Raises:
            AuthRefusal: the answer to send instead.
        """
        if query_string and any(
            name in _QUERY_TOKEN_NAMES
            for name, _ in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
        ):
            raise self._refuse(
                400, "invalid_request", "access tokens are not accepted in the query string"
            )
        authorizations = [v for n, v in headers if n.lower() == b"authorization"]
        if not authorizations:
            raise self._refuse(401, None, "an access token is required")
        if len(authorizations) > 1:
            raise self._refuse(400, "invalid_request", "more than one Authorization header")
        scheme, _, credentials = authorizations[0].decode("latin-1").strip().partition(" ")
        scheme = scheme.lower()
        token = credentials.strip()
        if scheme not in ("bearer", "dpop"):
            raise self._refuse(401, None, "an access token is required")
        if not _B64TOKEN.fullmatch(token):
            raise self._refuse(401, "invalid_token", "the access token is malformed")
        if scheme == "dpop" and self.dpop is None:
            raise self._refuse(401, "invalid_token", "DPoP-bound tokens are not accepted here")
        if scheme == "bearer" and self.require_dpop:
            raise self._refuse(401, "invalid_token", "only DPoP-bound tokens are accepted here")
        try:
            verified = await self.verifier.verify(token)
        except InvalidToken as exc:
            log.info("refused an access token: %s", exc.description)
            raise self._refuse(401, "invalid_token", exc.description) from None
        except VerifierUnavailable as exc:
            log.warning("could not check an access token: %s", exc)
            description = "the access token cannot be checked now"
            raise AuthRefusal(503, description, challenges=[]) from None
        if not any(
            aud == self.resource or same_resource(aud, self.resource) for aud in verified.audience
        ):
            raise self._refuse(401, "invalid_token", "the token was issued for another resource")
        if scheme == "bearer":
            if verified.jkt is not None:
                raise self._refuse(
                    401, "invalid_token", "the token is DPoP-bound: send it with a DPoP proof"
                )
        else:
            self._check_proof(verified, token, method, url, headers)
        if not self.required_scopes <= self.granted(verified):
            raise self.insufficient_scope(
                self.required_scopes, "the token lacks a scope every request needs"
            )
        return verified

    def _check_proof(
        self,
        verified: AccessToken,
        token: str,
        method: str,
        url: str,
        headers: Sequence[tuple[bytes, bytes]],
    ) -> None:
        assert self.dpop is not None
        if verified.jkt is None:
            raise self._refuse(401, "invalid_token", "the token is not DPoP-bound")
        proofs = [v for n, v in headers if n.lower() == b"dpop"]
        try:
            self.dpop.check(
                proofs[0].decode("latin-1") if len(proofs) == 1 else "",
                method=method,
                url=url,
                access_token=token,
                jkt=verified.jkt,
            )
        except DpopRefused as refused:
            log.info("refused a DPoP proof: %s", refused.description)
            challenge = self._challenge("DPoP", refused.error, refused.description)
            extra = [] if refused.nonce is None else [(b"dpop-nonce", refused.nonce.encode())]
            raise AuthRefusal(
                401, refused.description, challenges=[challenge], headers=extra
            ) from None

    # -- the ASGI edge ----------------------------------------------------------------------

    async def serve_metadata(self, http: HttpExchange) -> None:
        """Answer a request for the metadata document (anyone may read it)."""
        cors = [(b"access-control-allow-origin", b"*")]
        if http.method in ("GET", "HEAD"):
            body = self._metadata_body if http.method == "GET" else b""
            headers = [*cors, (b"cache-control", b"max-age=3600")]
            if not body:
                headers.append((b"content-type", b"application/json"))
            await http.respond(200, body, headers=headers)
        elif http.method == "OPTIONS":
            await http.respond(
                204, headers=[*cors, (b"access-control-allow-methods", b"GET, HEAD, OPTIONS")]
            )
        else:
            await http.respond(405, headers=[(b"allow", b"GET, HEAD, OPTIONS")])

    def request_url(self, http: HttpExchange) -> str:
        """The URL the client sent ``http`` to, as it named it: this resource's origin, and
        the path (with the prefix the app is mounted at)."""
        root = (http.scope.get("root_path") or "").rstrip("/")
        return self.url_for(root + http.path)

    def url_for(self, path: str) -> str:
        """The URL a client names for ``path`` on this resource's origin (what its DPoP
        proofs name as ``htu``)."""
        return self._origin + path

    async def admit(self, http: HttpExchange) -> AccessToken | None:
        """Authenticate ``http``: its verified token, or ``None`` once the refusal was
        sent. On success the credential headers are removed from its scope and the token
        is put there (under :data:`ACCESS_TOKEN_KEY`)."""
        scope = http.scope
        try:
            token = await self.authenticate(
                method=http.method,
                url=self.request_url(http),
                headers=scope["headers"],
                query_string=scope.get("query_string") or b"",
            )
        except AuthRefusal as refusal:
            await self.send_refusal(http, refusal)
            return None
        scope["headers"] = [h for h in scope["headers"] if h[0].lower() not in _CREDENTIAL_HEADERS]
        http.headers.pop("authorization", None)
        http.headers.pop("dpop", None)
        scope[ACCESS_TOKEN_KEY] = token
        return token

    @staticmethod
    async def send_refusal(
        http: HttpExchange, refusal: AuthRefusal, *, id: RequestId | None = None
    ) -> None:
        """Send ``refusal`` with a JSON-RPC error body."""
        await http.respond_error(
            refusal.status,
            ErrorCode.INVALID_REQUEST,
            refusal.message(),
            id=id,
            headers=refusal.response_headers(),
        )
