"""Authorization over WebSocket: ``serve_websocket(server, auth=ProtectedResource(...))``
checks the opening handshake's token as the HTTP transport checks a request, binds the
connection to the token's subject, refuses calls needing scopes the token lacks and
closes the connection when the token expires; ``open_websocket_client(url, auth=OAuth(...))``
runs the OAuth flow over the handshake.

The authorization server is the fake one of auth_support.issuer (in memory, behind an
``httpx.MockTransport``); the WebSocket connections are real, on 127.0.0.1, with bounded
waits, except the expiry test, which runs over in-memory streams on the autojump clock.
tests/test_auth_e2e.py::test_client_credentials_over_websocket runs against a real
authorization server.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import attrs
import httpx
import pytest
import trio
import trio.testing
import trio_websocket
from auth_support.issuer import ISSUER, DpopKey, FakeIssuer
from auth_support.oidc import free_port
from joserfc import jwk

from trio_mcp import Context, McpError, Server, connect_client
from trio_mcp._websocket import _ConnectionHandler
from trio_mcp.auth import (
    ClientCredentials,
    ClientInfo,
    DpopVerifier,
    JwtVerifier,
    OAuth,
    ProtectedResource,
)
from trio_mcp.http import OriginPolicy, open_asgi_app
from trio_mcp.websocket import SUBPROTOCOL, open_websocket_client, serve_websocket, websocket_stream

pytestmark = pytest.mark.timeout(30)


def make_server(ran: list[str]) -> Server:
    server = Server("vault")

    @server.tool(scopes=["mcp:tools"])
    async def echo(text: str) -> str:
        ran.append("echo")
        return text

    @server.tool()
    async def whoami(ctx: Context) -> str:
        ran.append("whoami")
        return f"{ctx.principal}"

    @server.tool(scopes=["mcp:admin"])
    async def shutdown_plan() -> str:
        ran.append("shutdown_plan")
        return "planned"

    @server.resource("vault://secret", scopes=["vault:read"])
    async def secret() -> str:
        ran.append("secret")
        return "s3cret"

    @server.tool(task="optional")
    async def slow(seconds: float) -> str:
        ran.append("slow")
        await trio.sleep(seconds)
        return "done"

    @server.prompt(scopes=["prompts:use"])
    async def greet(name: str) -> str:
        ran.append("greet")
        return f"Hello {name}"

    return server


@attrs.define
class Served:
    """A protected WebSocket server on 127.0.0.1."""

    port: int
    auth: ProtectedResource
    ran: list[str]

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/mcp"

    @property
    def resource(self) -> str:
        """The resource: the ws URL's http equivalent (what tokens and proofs name)."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def metadata_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/.well-known/oauth-protected-resource/mcp"


@asynccontextmanager
async def protected(issuer: FakeIssuer, **options: Any) -> AsyncIterator[Served]:
    port = free_port()
    ran: list[str] = []
    async with issuer.http_client() as keys, trio.open_nursery() as nursery:
        auth = ProtectedResource(
            f"http://127.0.0.1:{port}/mcp",
            verifier=JwtVerifier(ISSUER, http_client=keys),
            authorization_servers=[ISSUER],
            scopes_supported=["mcp:tools"],
            **options,
        )
        await nursery.start(partial(serve_websocket, make_server(ran), port=port, auth=auth))
        yield Served(port, auth, ran)
        nursery.cancel_scope.cancel()


async def handshake(served: Served, headers: dict[str, str], target: str = "/mcp") -> None:
    """Open a bare connection with ``headers`` (raises ConnectionRejected when refused)."""
    async with trio_websocket.open_websocket(
        "127.0.0.1",
        served.port,
        target,
        use_ssl=False,
        subprotocols=[SUBPROTOCOL],
        extra_headers=[(k.encode(), v.encode()) for k, v in headers.items()],
    ):
        pass


async def refusal(served: Served, headers: dict[str, str], target: str = "/mcp") -> Any:
    with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
        await handshake(served, headers, target)
    return rejected.value


def challenge(rejected: Any) -> str:
    return ", ".join(
        v.decode() for k, v in rejected.headers or () if k.lower() == b"www-authenticate"
    )


def text(result: Any) -> str:
    return str(result.content[0].text)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


# -- the handshake ----------------------------------------------------------------------


async def test_a_handshake_without_a_token_gets_401_naming_the_metadata_and_scopes() -> None:
    with trio.fail_after(10):
        async with protected(FakeIssuer()) as served:
            rejected = await refusal(served, {})
    assert rejected.status_code == 401
    assert challenge(rejected) == (
        f'Bearer scope="mcp:tools", resource_metadata="{served.metadata_url}"'
    )
    body = json.loads(rejected.body)
    assert body["error"]["code"] == -32600
    assert body["error"]["message"] == "Unauthorized: an access token is required"
    assert served.ran == []


BAD_TOKENS: dict[str, Callable[[FakeIssuer, str], str]] = {
    "expired": lambda i, r: i.token(aud=r, exp=int(time.time()) - 120),
    "wrong audience": lambda i, r: i.token(aud="http://127.0.0.1:1/mcp"),
    "wrong issuer": lambda i, r: i.token(aud=r, iss="https://evil.example"),
    "signed by an unknown key": lambda i, r: FakeIssuer().token(aud=r),
    "not a JWT": lambda i, r: "opaque-token-123",
}


@pytest.mark.parametrize("kind", BAD_TOKENS)
async def test_bad_tokens_are_refused_at_the_handshake_with_401(kind: str) -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer) as served:
            token = BAD_TOKENS[kind](issuer, served.resource)
            rejected = await refusal(served, bearer(token))
    assert rejected.status_code == 401
    assert challenge(rejected).startswith('Bearer error="invalid_token", error_description="')
    assert f'resource_metadata="{served.metadata_url}"' in challenge(rejected)
    assert served.ran == []


async def test_a_token_in_the_query_string_is_refused_even_with_a_good_header() -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer) as served:
            token = issuer.token(aud=served.resource)
            rejected = await refusal(served, bearer(token), f"/mcp?access_token={token}")
            only_query = await refusal(served, {}, f"/mcp?access_token={token}")
    assert rejected.status_code == only_query.status_code == 400
    assert 'error="invalid_request"' in challenge(rejected)
    assert token not in challenge(rejected) and token.encode() not in rejected.body


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_good_token_opens_a_connection_whose_principal_is_its_subject(
    version: str,
) -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer) as served:
            token = issuer.token(aud=served.resource, sub="alice")
            async with open_websocket_client(
                served.url, headers=bearer(token), protocol_version=version
            ) as client:
                assert text(await client.call_tool("whoami")) == "alice"
                assert text(await client.call_tool("echo", {"text": "hi"})) == "hi"
    assert served.ran == ["whoami", "echo"]


async def test_tasks_belong_to_the_principal_of_the_connection_that_made_them() -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer) as served:
            alice = bearer(issuer.token(aud=served.resource, sub="alice"))
            bob = bearer(issuer.token(aud=served.resource, sub="bob"))
            async with (
                open_websocket_client(served.url, headers=alice) as client,
                client.open_tool_task("slow", {"seconds": 600}) as task,
            ):
                task_id = task.detach()
            # The task outlives its connection; another principal cannot see it...
            async with open_websocket_client(served.url, headers=bob) as client:
                with pytest.raises(McpError) as unknown:
                    async with client.open_task(task_id):
                        pass
            # ...and its own principal takes it up again on a new connection.
            async with (
                open_websocket_client(served.url, headers=alice) as client,
                client.open_task(task_id) as task,
            ):
                assert task.status == "working"
    assert unknown.value.code == -32602


async def test_the_metadata_document_can_be_served_elsewhere() -> None:
    """``serve_websocket`` answers handshakes only: ``metadata_url`` names where an HTTP
    app serving the same ``ProtectedResource`` puts the document (at that URL's path)."""
    elsewhere = "http://127.0.0.1:9/documents/ws-metadata.json"
    with trio.fail_after(10):
        async with protected(FakeIssuer(), metadata_url=elsewhere) as served:
            rejected = await refusal(served, {})
            async with open_asgi_app(make_server([]), auth=served.auth) as app:
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(
                    transport=transport, base_url="http://127.0.0.1:9"
                ) as http:
                    document = await http.get("/documents/ws-metadata.json")
    assert challenge(rejected) == f'Bearer scope="mcp:tools", resource_metadata="{elsewhere}"'
    assert document.status_code == 200
    assert document.json()["resource"] == served.resource


# -- scopes per call ---------------------------------------------------------------------


async def test_a_call_needing_a_scope_the_token_lacks_is_refused_before_it_runs() -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer) as served:
            token = issuer.token(aud=served.resource, scope="mcp:tools")
            async with open_websocket_client(served.url, headers=bearer(token)) as client:
                with pytest.raises(McpError) as refused:
                    await client.call_tool("shutdown_plan")
                with pytest.raises(McpError) as read:
                    await client.read_resource("vault://secret")
                with pytest.raises(McpError) as got:
                    await client.get_prompt("greet", {"name": "x"})
                # The connection goes on: what the token allows still works.
                assert text(await client.call_tool("echo", {"text": "still"})) == "still"
    error = refused.value.error
    assert error.code == -32600
    assert error.message == "Forbidden: the token lacks a scope this request needs"
    assert error.data["httpStatus"] == 403
    assert error.data["wwwAuthenticate"] == (
        'Bearer error="insufficient_scope", '
        'error_description="the token lacks a scope this request needs", '
        f'scope="mcp:admin", resource_metadata="{served.metadata_url}"'
    )
    assert 'scope="vault:read"' in read.value.error.data["wwwAuthenticate"]
    assert 'scope="prompts:use"' in got.value.error.data["wwwAuthenticate"]
    assert served.ran == ["echo"]


def tool_call(id: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


async def test_in_a_batch_only_the_requests_lacking_scopes_are_refused() -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer) as served:
            token = issuer.token(aud=served.resource, scope="mcp:tools")
            async with trio_websocket.open_websocket(
                "127.0.0.1",
                served.port,
                "/mcp",
                use_ssl=False,
                subprotocols=[SUBPROTOCOL],
                extra_headers=[(b"authorization", f"Bearer {token}".encode())],
            ) as ws:
                hello = {"protocolVersion": "2025-03-26", "capabilities": {}}
                hello["clientInfo"] = {"name": "raw", "version": "1"}
                initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
                await ws.send_message(json.dumps(initialize))
                assert "result" in json.loads(await ws.get_message())
                initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await ws.send_message(json.dumps(initialized))
                batch = [tool_call(1, "shutdown_plan"), tool_call(2, "echo", {"text": "ok"})]
                await ws.send_message(json.dumps(batch))
                answers: dict[int, Any] = {}
                while len(answers) < 2:
                    message = json.loads(await ws.get_message())
                    for item in message if isinstance(message, list) else [message]:
                        answers[item["id"]] = item
    assert answers[1]["error"]["code"] == -32600
    assert 'scope="mcp:admin"' in answers[1]["error"]["data"]["wwwAuthenticate"]
    assert answers[2]["result"]["content"][0]["text"] == "ok"
    assert served.ran == ["echo"]


async def test_required_scopes_apply_at_the_handshake() -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer, required_scopes=["mcp:connect"]) as served:
            token = issuer.token(aud=served.resource, scope="mcp:tools")
            rejected = await refusal(served, bearer(token))
    assert rejected.status_code == 403
    assert 'error="insufficient_scope"' in challenge(rejected)
    assert 'scope="mcp:connect"' in challenge(rejected)


# -- DPoP --------------------------------------------------------------------------------


async def test_dpop_bound_tokens_need_a_proof_for_the_get_of_the_http_url() -> None:
    issuer = FakeIssuer()
    key = DpopKey()
    with trio.fail_after(10):
        async with protected(issuer, dpop=DpopVerifier()) as served:
            token = issuer.token(aud=served.resource, cnf={"jkt": key.jkt})
            dpop = {"authorization": f"DPoP {token}"}
            as_bearer = await refusal(served, bearer(token))
            without_proof = await refusal(served, dpop)
            for_post = await refusal(
                served, {**dpop, "dpop": key.proof("POST", served.resource, token)}
            )
            for_ws_url = await refusal(
                served, {**dpop, "dpop": key.proof("GET", served.url, token)}
            )
            other_key = await refusal(
                served,
                {**dpop, "dpop": key.proof("GET", served.resource, token, key=DpopKey().key)},
            )
            good = {**dpop, "dpop": key.proof("GET", served.resource, token)}
            async with open_websocket_client(served.url, headers=good) as client:
                assert text(await client.call_tool("whoami")) == "alice"
            replayed = await refusal(served, good)
    assert as_bearer.status_code == 401
    assert 'error="invalid_token"' in challenge(as_bearer)
    for rejected in (without_proof, for_post, for_ws_url, other_key, replayed):
        assert rejected.status_code == 401
        assert 'DPoP error="invalid_dpop_proof"' in challenge(rejected), challenge(rejected)
    assert "another HTTP method" in challenge(for_post)
    assert "replayed" in challenge(replayed)


# -- expiry ------------------------------------------------------------------------------


async def test_the_connection_closes_with_1008_when_the_token_expires(
    autojump_clock: trio.abc.Clock,
) -> None:
    issuer = FakeIssuer()
    ran: list[str] = []
    resource = "http://127.0.0.1/mcp"
    async with issuer.http_client() as keys:
        auth = ProtectedResource(
            resource, verifier=JwtVerifier(ISSUER, http_client=keys), authorization_servers=[ISSUER]
        )
        handler = _ConnectionHandler(
            make_server(ran),
            origin_policy=OriginPolicy.off(),
            max_connections=10,
            idle_timeout=3600.0,
            session_options={},
            auth=auth,
        )
        token = issuer.token(aud=resource, exp=int(time.time()) + 120)
        client_end, server_end = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:

            async def accept() -> None:
                await handler(await trio_websocket.wrap_server_stream(nursery, server_end))

            nursery.start_soon(accept)
            connection = await trio_websocket.wrap_client_stream(
                nursery,
                client_end,  # type: ignore[arg-type]
                "127.0.0.1",
                "/mcp",
                subprotocols=[SUBPROTOCOL],
                extra_headers=[(b"authorization", f"Bearer {token}".encode())],
            )
            async with websocket_stream(connection) as stream:
                client = await connect_client(nursery, stream)
                start = trio.current_time()
                await trio.sleep(100)
                assert text(await client.call_tool("whoami")) == "alice"
                assert connection.closed is None
                with trio.fail_after(60):
                    while connection.closed is None:
                        await trio.sleep(0.5)
                waited = trio.current_time() - start
                await client.aclose()
            nursery.cancel_scope.cancel()
    assert 115 < waited <= 121
    assert connection.closed.code == 1008
    assert connection.closed.reason == "the access token expired"
    assert handler.active == 0


# -- the client --------------------------------------------------------------------------


def thumbprint(proof: str) -> str:
    head = proof.split(".")[0]
    header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return str(jwk.ECKey.import_key(header["jwk"]).thumbprint())


class AuthorizationServer:
    """The fake issuer with a token endpoint (client credentials), and the protected
    resource's metadata document (which ``serve_websocket`` does not serve): what the
    OAuth flow fetches, through an ``httpx.MockTransport``."""

    def __init__(self, issuer: FakeIssuer, served: Served) -> None:
        self.issuer = issuer
        self.served = served
        #: (method, URL) of each request, in order.
        self.requests: list[tuple[str, str]] = []
        self.token_forms: list[dict[str, str]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, str(request.url)))
        if str(request.url) == self.served.metadata_url:
            return httpx.Response(200, json=self.served.auth.metadata.to_json())
        if str(request.url) == f"{ISSUER}/token":
            form = dict(httpx.QueryParams(request.content.decode()))
            self.token_forms.append(form)
            claims: dict[str, Any] = {"aud": form["resource"], "sub": "robot"}
            claims["scope"] = form.get("scope", "")
            token_type = "Bearer"
            if "dpop" in request.headers:
                claims["cnf"] = {"jkt": thumbprint(request.headers["dpop"])}
                token_type = "DPoP"
            token = self.issuer.token(**claims)
            return httpx.Response(
                200, json={"access_token": token, "token_type": token_type, "expires_in": 300}
            )
        return self.issuer.handle(request)


@pytest.mark.parametrize("mode", ["bearer", "dpop", "dpop with server nonces"])
async def test_the_oauth_flow_discovers_and_authorizes_the_handshake(mode: str) -> None:
    issuer = FakeIssuer()
    dpop = mode != "bearer"
    options = {"dpop": DpopVerifier(require_nonce=mode.endswith("nonces"))} if dpop else {}
    with trio.fail_after(10):
        async with protected(issuer, **options) as served:
            server = AuthorizationServer(issuer, served)
            async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
                robot = ClientCredentials(ClientInfo("robot", client_secret="s3cret"))
                oauth = OAuth(robot, dpop=dpop, http_client=http)
                async with open_websocket_client(served.url, auth=oauth) as client:
                    assert text(await client.call_tool("whoami")) == "robot"
                # A second connection reuses the token: no new discovery, no token request.
                before = len(server.requests)
                async with open_websocket_client(served.url, auth=oauth) as client:
                    assert text(await client.call_tool("echo", {"text": "again"})) == "again"
                assert server.requests[before:] == []
    # The refused handshake's challenge led to the metadata, then the authorization
    # server, then one token request for the ws URL's http equivalent.
    assert server.requests[0] == ("GET", served.metadata_url)
    assert ("POST", f"{ISSUER}/token") in server.requests
    assert [f["resource"] for f in server.token_forms] == [served.resource]
    assert server.token_forms[0]["scope"] == "mcp:tools"
    assert oauth.tokens is not None
    assert oauth.tokens.token_type == ("DPoP" if dpop else "Bearer")


async def test_a_flow_that_gives_up_leaves_the_refusal_to_the_caller() -> None:
    issuer = FakeIssuer()
    with trio.fail_after(10):
        async with protected(issuer) as served:
            stale = httpx.BasicAuth("user", "pass")  # not a scheme the server accepts
            with pytest.raises(trio_websocket.ConnectionRejected) as rejected:
                async with open_websocket_client(served.url, auth=stale):
                    pass
    assert rejected.value.status_code == 401
