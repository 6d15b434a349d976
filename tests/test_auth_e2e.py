"""Our OAuth client against a real authorization server nobody here wrote, calling our
protected server: oidc-provider (npm, run with node on 127.0.0.1, see
tests/auth_support/oidc.py) issues the tokens; ``trio_mcp.auth.OAuth`` gets them (dynamic
registration, PKCE, the ``resource`` indicator, the user's login and consent played by
``act_as_user``), refreshes them, steps up a scope, binds them to a DPoP key, or uses
client credentials; a ``Server`` with ``ProtectedResource`` served by Hypercorn checks
them. Everything goes over real HTTP on 127.0.0.1; the client credentials grant also over
a WebSocket (``serve_websocket(auth=...)``, ``open_websocket_client(auth=...)``).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
import trio
from auth_support.oidc import OidcProvider, act_as_user, free_port, start_oidc_provider
from http_support import modern_body, modern_headers

from trio_mcp import Context, McpError, Server
from trio_mcp.auth import (
    AuthorizationCode,
    ClientCredentials,
    ClientInfo,
    DpopVerifier,
    JwtVerifier,
    OAuth,
    ProtectedResource,
)
from trio_mcp.http import open_http_client, serve
from trio_mcp.websocket import open_websocket_client, serve_websocket

pytestmark = pytest.mark.slow

SCOPES = ("mcp:tools", "mcp:read", "mcp:admin")
REDIRECT_URI = "http://127.0.0.1:8765/callback"
#: Seconds the refresh test's access tokens live.
SHORT_TTL = 3


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    """oidc-provider with ``mcp:admin`` among its scopes (for the step-up)."""
    with start_oidc_provider(scopes=SCOPES) as running:
        yield running


def make_server() -> Server:
    server = Server("e2e")

    @server.tool(scopes=["mcp:tools"])
    async def echo(text: str) -> str:
        return text

    @server.tool(scopes=["mcp:tools"])
    async def whoami(ctx: Context) -> str:
        return f"{ctx.principal}"

    @server.tool(scopes=["mcp:admin"])
    async def shutdown_plan(ctx: Context) -> str:
        return f"planned by {ctx.principal}"

    return server


@asynccontextmanager
async def protected_server(issuer: str) -> AsyncIterator[str]:
    """Our server, protected for tokens of ``issuer`` (DPoP-bound ones too); yields its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    auth = ProtectedResource(
        url,
        # No clock-skew leeway: provider and server share this machine's clock, and the
        # refresh test's expired token is refused at once.
        verifier=JwtVerifier(issuer, leeway=0),
        authorization_servers=[issuer],
        scopes_supported=["mcp:tools"],
        dpop=DpopVerifier(),
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve, make_server(), "127.0.0.1", port, auth=auth))
        yield url
        nursery.cancel_scope.cancel()


class User:
    """The redirect handler: the user at the browser, logging in and consenting at the
    provider (``act_as_user``) each time the client asks."""

    def __init__(self, issuer: str, login: str) -> None:
        self.issuer = issuer
        self.login = login
        #: The authorization URLs the client opened, in order.
        self.authorizations: list[str] = []

    async def __call__(self, authorization_url: str) -> str:
        self.authorizations.append(authorization_url)
        return await act_as_user(self.issuer, authorization_url, login=self.login)

    def query(self, index: int) -> dict[str, list[str]]:
        return parse_qs(httpx.URL(self.authorizations[index]).query.decode())


class Recorder:
    """An ``httpx.AsyncClient`` (with ``auth``) whose requests, as sent after the auth
    flow, and answers are recorded."""

    def __init__(self, auth: httpx.Auth | None = None) -> None:
        self.sent: list[httpx.Request] = []
        self.answers: list[httpx.Response] = []
        self.client = httpx.AsyncClient(
            auth=auth,
            event_hooks={"request": [self._request], "response": [self._response]},
            follow_redirects=False,
            timeout=30,
        )

    async def _request(self, request: httpx.Request) -> None:
        self.sent.append(request)

    async def _response(self, response: httpx.Response) -> None:
        self.answers.append(response)

    def grant_types(self, token_endpoint: str) -> list[str]:
        """The ``grant_type`` of each request to ``token_endpoint``, in order."""
        return [
            parse_qs(r.content.decode())["grant_type"][0]
            for r in self.sent
            if str(r.url) == token_endpoint and r.method == "POST"
        ]


def claims(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def text(result: Any) -> str:
    return str(result.content[0].text)


async def post_call(url: str, headers: dict[str, str], tool: str = "echo") -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(
            url,
            json=modern_body(1, "tools/call", {"name": tool, "arguments": {"text": "hi"}}),
            headers={**modern_headers("tools/call", tool), **headers},
        )


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_user_logs_in_with_our_client_and_calls_our_server(
    provider: OidcProvider, version: str
) -> None:
    user = User(provider.issuer, "ada")
    registrations = Recorder()
    oauth = OAuth(
        AuthorizationCode(user, REDIRECT_URI), dpop=False, http_client=registrations.client
    )
    with trio.fail_after(60):
        async with (
            registrations.client,
            protected_server(provider.issuer) as url,
            open_http_client(url, auth=oauth, protocol_version=version) as mcp,
        ):
            assert text(await mcp.call_tool("echo", {"text": "hi"})) == "hi"
            assert text(await mcp.call_tool("whoami")) == "ada"
    # One login: dynamic registration, then the authorization code flow with PKCE and
    # the resource indicator, for the scope the server's challenge named.
    assert len(user.authorizations) == 1
    query = user.query(0)
    assert query["resource"] == [url]
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0]
    assert query["scope"][0].split() == ["mcp:tools", "offline_access"]
    registered = [a for a in registrations.answers if str(a.url) == f"{provider.issuer}/reg"]
    assert [a.status_code for a in registered] == [201]
    document = json.loads(registered[0].request.content)
    assert document["redirect_uris"] == [REDIRECT_URI]
    assert document["token_endpoint_auth_method"] == "none"  # a public client
    assert registrations.grant_types(provider.token_endpoint) == ["authorization_code"]
    # The provider issued a JWT access token for our server: its URL is the audience.
    assert oauth.tokens is not None and oauth.tokens.token_type == "Bearer"
    issued = claims(oauth.tokens.access_token)
    assert issued["aud"] == url
    assert issued["iss"] == provider.issuer
    assert issued["sub"] == "ada"
    assert "mcp:tools" in issued["scope"].split()


async def test_an_expired_access_token_is_refreshed_without_a_second_login() -> None:
    """Access tokens living SHORT_TTL seconds: used until they expire (no refresh before
    every request), then refreshed with the refresh token, without the user."""
    with start_oidc_provider(scopes=SCOPES, access_token_ttl=SHORT_TTL) as short:
        user = User(short.issuer, "ada")
        requests = Recorder()
        oauth = OAuth(
            AuthorizationCode(user, REDIRECT_URI), dpop=False, http_client=requests.client
        )
        with trio.fail_after(60):
            async with (
                requests.client,
                protected_server(short.issuer) as url,
                open_http_client(url, auth=oauth) as mcp,
            ):
                assert text(await mcp.call_tool("echo", {"text": "one"})) == "one"
                first = oauth.tokens
                assert first is not None and first.refresh_token is not None
                assert first.expires_at is not None
                # The provider's token expires (the server would refuse it now).
                await trio.sleep(max(0.0, first.expires_at - time.time()) + 0.1)
                stale = await post_call(url, {"authorization": f"Bearer {first.access_token}"})
                assert stale.status_code == 401
                assert text(await mcp.call_tool("echo", {"text": "two"})) == "two"
                second = oauth.tokens
    assert len(user.authorizations) == 1
    assert requests.grant_types(short.token_endpoint) == ["authorization_code", "refresh_token"]
    assert second is not None and second.access_token != first.access_token
    assert claims(second.access_token)["aud"] == url


async def test_a_tool_needing_more_scope_makes_our_client_step_up(provider: OidcProvider) -> None:
    user = User(provider.issuer, "ada")
    oauth = OAuth(AuthorizationCode(user, REDIRECT_URI), dpop=False)
    traffic = Recorder(oauth)
    with trio.fail_after(60):
        async with (
            traffic.client,
            protected_server(provider.issuer) as url,
            open_http_client(url, http_client=traffic.client) as mcp,
        ):
            assert text(await mcp.call_tool("echo", {"text": "hi"})) == "hi"
            assert oauth.tokens is not None
            assert "mcp:admin" not in claims(oauth.tokens.access_token)["scope"].split()
            assert text(await mcp.call_tool("shutdown_plan")) == "planned by ada"
    # The server refused the first token for the admin tool, naming the scope it needs...
    refusals = [a for a in traffic.answers if a.status_code == 403]
    assert len(refusals) == 1
    challenge = refusals[0].headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp:admin"' in challenge
    # ...and the client asked the user again, for the union of the scopes.
    assert len(user.authorizations) == 2
    assert user.query(0)["scope"][0].split() == ["mcp:tools", "offline_access"]
    assert set(user.query(1)["scope"][0].split()) == {"mcp:tools", "mcp:admin", "offline_access"}
    assert oauth.tokens is not None
    assert {"mcp:tools", "mcp:admin"} <= set(claims(oauth.tokens.access_token)["scope"].split())


async def test_dpop_bound_tokens_from_our_client(provider: OidcProvider) -> None:
    user = User(provider.issuer, "ada")
    oauth = OAuth(AuthorizationCode(user, REDIRECT_URI), dpop=True)
    traffic = Recorder(oauth)
    with trio.fail_after(60):
        async with (
            traffic.client,
            protected_server(provider.issuer) as url,
            open_http_client(url, http_client=traffic.client) as mcp,
        ):
            assert text(await mcp.call_tool("echo", {"text": "bound"})) == "bound"
            assert text(await mcp.call_tool("whoami")) == "ada"
            tokens = oauth.tokens
            assert tokens is not None and tokens.token_type == "DPoP"
            # The provider bound the token to the client's key (RFC 9449 section 6).
            bound = claims(tokens.access_token)
            assert bound["aud"] == url and bound["cnf"]["jkt"]
            calls = [
                r
                for r in traffic.sent
                if r.headers.get("mcp-method") == "tools/call" and "dpop" in r.headers
            ]
            assert calls, "the client sent no DPoP proof"
            sent = calls[-1]
            assert sent.headers["authorization"] == f"DPoP {tokens.access_token}"
            async with httpx.AsyncClient() as thief:
                # The same request again, proof and all: a replayed proof is refused.
                replay = await thief.post(url, content=sent.content, headers=sent.headers)
                assert replay.status_code == 401
                refused = replay.headers["www-authenticate"]
                assert 'error="invalid_dpop_proof"' in refused and "replayed jti" in refused
            # The token as a plain bearer token: refused.
            plain = await post_call(url, {"authorization": f"Bearer {tokens.access_token}"})
            assert plain.status_code == 401
            assert 'error="invalid_token"' in plain.headers["www-authenticate"]
    assert len(user.authorizations) == 1


async def test_a_program_gets_a_token_with_client_credentials(provider: OidcProvider) -> None:
    grant = ClientCredentials(ClientInfo(provider.client_id, client_secret=provider.client_secret))
    requests = Recorder()
    oauth = OAuth(grant, dpop=False, http_client=requests.client)
    with trio.fail_after(60):
        async with (
            requests.client,
            protected_server(provider.issuer) as url,
            open_http_client(url, auth=oauth) as mcp,
        ):
            assert text(await mcp.call_tool("echo", {"text": "m2m"})) == "m2m"
            assert text(await mcp.call_tool("whoami")) == provider.client_id
    assert requests.grant_types(provider.token_endpoint) == ["client_credentials"]
    token_request = next(r for r in requests.sent if str(r.url) == provider.token_endpoint)
    form = parse_qs(token_request.content.decode())
    assert form["resource"] == [url] and form["scope"] == ["mcp:tools"]
    assert token_request.headers["authorization"].startswith("Basic ")  # client_secret_basic
    assert oauth.tokens is not None
    issued = claims(oauth.tokens.access_token)
    assert issued["aud"] == url and issued["client_id"] == provider.client_id


@asynccontextmanager
async def protected_websocket_server(issuer: str) -> AsyncIterator[str]:
    """Our server over WebSocket, protected for tokens of ``issuer`` (DPoP-bound ones too);
    yields its ws URL. Its metadata document is served over HTTP on another port (a
    WebSocket server answers handshakes only), named by ``metadata_url``."""
    ws_port, http_port = free_port(), free_port()
    auth = ProtectedResource(
        f"http://127.0.0.1:{ws_port}/mcp",  # the ws URL's http equivalent
        verifier=JwtVerifier(issuer, leeway=0),
        authorization_servers=[issuer],
        scopes_supported=["mcp:tools"],
        dpop=DpopVerifier(),
        metadata_url=f"http://127.0.0.1:{http_port}/.well-known/oauth-protected-resource/mcp",
    )
    server = make_server()
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve, server, "127.0.0.1", http_port, auth=auth))
        await nursery.start(partial(serve_websocket, server, "127.0.0.1", ws_port, auth=auth))
        yield f"ws://127.0.0.1:{ws_port}/mcp"
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("dpop", [False, True])
async def test_client_credentials_over_websocket(provider: OidcProvider, dpop: bool) -> None:
    """The OAuth flow over a WebSocket handshake: the refused handshake's challenge leads
    to the metadata and the provider, the token (DPoP-bound with ``dpop``) opens the
    connection, its subject is the principal, and a tool needing a scope it lacks fails."""
    grant = ClientCredentials(ClientInfo(provider.client_id, client_secret=provider.client_secret))
    requests = Recorder()
    oauth = OAuth(grant, dpop=dpop, http_client=requests.client)
    with trio.fail_after(60):
        async with (
            requests.client,
            protected_websocket_server(provider.issuer) as url,
            open_websocket_client(url, auth=oauth) as mcp,
        ):
            assert text(await mcp.call_tool("echo", {"text": "ws"})) == "ws"
            assert text(await mcp.call_tool("whoami")) == provider.client_id
            with pytest.raises(McpError) as refused:
                await mcp.call_tool("shutdown_plan")
    assert refused.value.error.code == -32600
    challenge = refused.value.error.data["wwwAuthenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp:admin"' in challenge
    assert requests.grant_types(provider.token_endpoint) == ["client_credentials"]
    token_request = next(r for r in requests.sent if str(r.url) == provider.token_endpoint)
    resource = url.replace("ws://", "http://")
    assert parse_qs(token_request.content.decode())["resource"] == [resource]
    assert oauth.tokens is not None
    issued = claims(oauth.tokens.access_token)
    assert issued["aud"] == resource
    if dpop:
        assert oauth.tokens.token_type == "DPoP" and issued["cnf"]["jkt"]
    else:
        assert oauth.tokens.token_type == "Bearer" and "cnf" not in issued
