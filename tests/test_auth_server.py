"""The server as an OAuth 2.1 protected resource (``asgi_app(server, auth=...)``): tokens
checked at the HTTP edge, the metadata document, scopes per tool, resource and prompt,
DPoP proofs. The authorization server is a fake one in memory (auth_support.issuer);
tests/test_auth_oidc.py runs against a real one."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from auth_support.issuer import ISSUER, RESOURCE, DpopKey, FakeIssuer, b64
from http_support import ACCEPT, LEGACY, modern_body, modern_headers, open_sse, running
from hypothesis import given, strategies as st

from trio_mcp import Context, Server
from trio_mcp.auth import (
    DpopRefused,
    DpopVerifier,
    IntrospectionVerifier,
    JwtVerifier,
    ProtectedResource,
)
from trio_mcp.http import asgi_app, open_asgi_app

METADATA_URL = "http://localhost/.well-known/oauth-protected-resource/mcp"


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

    @server.resource("vault://secret", scopes=["vault:read"])
    async def secret() -> str:
        ran.append("secret")
        return "s3cret"

    @server.resource("vault://files/{name}", scopes=["files:read"])
    async def file(name: str) -> str:
        ran.append("file")
        return name

    @server.prompt(scopes=["prompts:use"])
    async def greet(name: str) -> str:
        ran.append("greet")
        return f"Hello {name}"

    return server


@asynccontextmanager
async def protected(
    issuer: FakeIssuer,
    *,
    principal: Callable[[Any], str | None] | None = None,
    **options: Any,
) -> AsyncIterator[tuple[httpx.AsyncClient, list[str]]]:
    """A client of the protected server (run in memory), and the handlers that ran."""
    ran: list[str] = []
    async with issuer.http_client() as fetch_client:
        verifier = options.pop("verifier", None) or JwtVerifier(ISSUER, http_client=fetch_client)
        auth = ProtectedResource(
            RESOURCE,
            verifier=verifier,
            authorization_servers=[ISSUER],
            scopes_supported=["mcp:tools"],
            **options,
        )
        async with open_asgi_app(make_server(ran), auth=auth, principal=principal) as app:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                yield c, ran


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def call(
    client: httpx.AsyncClient,
    tool: str,
    arguments: dict[str, Any] | None = None,
    *,
    headers: dict[str, str] | None = None,
    url: str = "/mcp",
) -> httpx.Response:
    return await client.post(
        url,
        json=modern_body(1, "tools/call", {"name": tool, "arguments": arguments or {}}),
        headers={**modern_headers("tools/call", tool), **(headers or {})},
    )


def challenge(response: httpx.Response) -> str:
    return response.headers.get("www-authenticate", "")


# -- the metadata document and the 401 challenge ------------------------------------------


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
async def test_the_metadata_document_is_served_without_a_token(path: str) -> None:
    async with protected(FakeIssuer()) as (client, _):
        r = await client.get(path)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["mcp:tools"],
        "bearer_methods_supported": ["header"],
    }


async def test_a_request_without_a_token_gets_401_naming_the_metadata_and_scopes() -> None:
    async with protected(FakeIssuer()) as (client, ran):
        r = await call(client, "echo", {"text": "x"})
        legacy = await client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            headers={"accept": ACCEPT},
        )
        sse = await client.get("/sse")
    for response in (r, legacy, sse):
        assert response.status_code == 401
        assert challenge(response) == (
            f'Bearer scope="mcp:tools", resource_metadata="{METADATA_URL}"'
        )
    assert ran == []


async def test_a_valid_token_is_accepted_and_its_subject_is_the_principal() -> None:
    issuer = FakeIssuer()
    seen: list[Any] = []

    def principal(scope: Any) -> str:
        seen.append(scope)
        return str(scope["trio_mcp.access_token"].subject)

    async with protected(issuer, principal=principal) as (client, _):
        token = issuer.token(sub="alice")
        r = await call(client, "whoami", headers=bearer(token))
        assert r.status_code == 200, r.text
        assert r.json()["result"]["content"][0]["text"] == "alice"
        r = await call(client, "echo", {"text": "hi"}, headers=bearer(token))
        assert r.json()["result"]["content"][0]["text"] == "hi"
    # No token passthrough: what reaches the MCP endpoint has no credential left.
    headers = {name for name, _ in seen[0]["headers"]}
    assert b"authorization" not in headers
    assert not any(token in repr(value) for value in seen[0].values())


async def test_without_a_principal_hook_the_subject_is_the_principal() -> None:
    issuer = FakeIssuer()
    async with protected(issuer) as (client, _):
        r = await call(client, "whoami", headers=bearer(issuer.token(sub="bob")))
    assert r.json()["result"]["content"][0]["text"] == "bob"


# -- refused tokens ----------------------------------------------------------------------

BAD_TOKENS: dict[str, Callable[[FakeIssuer], str]] = {
    "alg none": lambda i: i.token_alg_none(),
    "HS256 keyed with the public key": lambda i: i.token_hs256_with_public_key(),
    "expired": lambda i: i.token(exp=int(time.time()) - 120),
    "not valid yet (nbf)": lambda i: i.token(nbf=int(time.time()) + 600),
    "issued in the future": lambda i: i.token(iat=int(time.time()) + 600),
    "no expiry": lambda i: i.token(exp=None),
    "wrong issuer": lambda i: i.token(iss="https://evil.example"),
    "wrong audience": lambda i: i.token(aud="http://localhost/other"),
    "no audience": lambda i: i.token(aud=None),
    "another server's audience": lambda i: i.token(aud=["https://api.example/"]),
    "signed by an unknown key": lambda i: FakeIssuer().token(),
    "tampered claims": lambda i: _tamper(i.token()),
    "not a JWT": lambda i: "opaque-token-123",
    "critical header": lambda i: i.token(header={"crit": ["exp"], "exp": 1}),
}


def _tamper(token: str) -> str:
    head, _, rest = token.partition(".")
    payload, _, signature = rest.partition(".")
    other = FakeIssuer().token(sub="mallory").split(".")[1]
    return f"{head}.{other}.{signature}"


@pytest.mark.parametrize("kind", BAD_TOKENS)
async def test_bad_tokens_are_refused_with_401_invalid_token(kind: str) -> None:
    issuer = FakeIssuer()
    async with protected(issuer) as (client, ran):
        r = await call(client, "whoami", headers=bearer(BAD_TOKENS[kind](issuer)))
    assert r.status_code == 401, r.text
    assert challenge(r).startswith('Bearer error="invalid_token", error_description="')
    assert f'resource_metadata="{METADATA_URL}"' in challenge(r)
    assert ran == []


async def test_audiences_are_compared_as_canonical_uris() -> None:
    issuer = FakeIssuer()
    async with protected(issuer) as (client, _):
        for aud in ("HTTP://LOCALHOST/mcp", "http://localhost:80/mcp", ["x", RESOURCE]):
            r = await call(client, "whoami", headers=bearer(issuer.token(aud=aud)))
            assert r.status_code == 200, aud


async def test_a_token_in_the_query_string_is_refused_even_with_a_good_header() -> None:
    issuer = FakeIssuer()
    token = issuer.token()
    async with protected(issuer) as (client, ran):
        r = await call(client, "whoami", headers=bearer(token), url=f"/mcp?access_token={token}")
    assert r.status_code == 400
    assert 'error="invalid_request"' in challenge(r)
    assert ran == []


@pytest.mark.parametrize(
    "authorization",
    ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b", "Bearer \x7f", "bearer ???"],
)
async def test_malformed_authorization_headers_get_401(authorization: str) -> None:
    async with protected(FakeIssuer()) as (client, ran):
        r = await call(client, "whoami", headers={"authorization": authorization})
    assert r.status_code == 401
    assert challenge(r).startswith("Bearer ")
    assert ran == []


async def test_two_authorization_headers_are_a_bad_request() -> None:
    issuer = FakeIssuer()
    async with protected(issuer) as (client, _):
        r = await client.post(
            "/mcp",
            json=modern_body(1, "tools/call", {"name": "whoami", "arguments": {}}),
            headers=[
                *modern_headers("tools/call", "whoami").items(),
                ("authorization", f"Bearer {issuer.token()}"),
                ("authorization", f"Bearer {issuer.token(sub='mallory')}"),
            ],
        )
    assert r.status_code == 400


@given(st.data())
async def test_no_authorization_header_or_token_crashes_the_server(data: st.DataObject) -> None:
    """Whatever the header (random text, random JWT-looking segments, random JSON in
    them), the answer is a refusal, never a 500."""
    issuer = FakeIssuer()
    segment = st.one_of(
        st.text("ABCDEFabcdef0123456789-_", max_size=40),
        st.binary(max_size=40).map(b64),
        st.dictionaries(
            st.sampled_from(["alg", "kid", "typ", "crit", "jwk"]),
            st.none() | st.integers() | st.text(max_size=5) | st.lists(st.integers(), max_size=2),
            max_size=4,
        ).map(lambda d: b64(json.dumps(d).encode())),
    )
    token = data.draw(
        st.one_of(
            st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80),
            st.lists(segment, min_size=1, max_size=4).map(".".join),
        )
    )
    scheme = data.draw(st.sampled_from(["Bearer", "DPoP", "bearer", "Basic", ""]))
    async with protected(issuer, dpop=DpopVerifier()) as (client, ran):
        r = await call(
            client, "whoami", headers={"authorization": f"{scheme} {token}".strip(), "dpop": token}
        )
    assert r.status_code in (400, 401), (r.status_code, r.text)
    assert ran == []


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
CLAIMS = ["iss", "sub", "aud", "exp", "nbf", "iat", "scope", "scp", "client_id", "cnf"]


@given(st.data())
async def test_well_signed_tokens_with_any_claims_never_crash_the_server(
    data: st.DataObject,
) -> None:
    """Signed by the issuer's key, but with claims of any JSON type: refused or accepted,
    never a 500."""
    issuer = FakeIssuer()
    overrides = data.draw(st.dictionaries(st.sampled_from(CLAIMS), JSON, max_size=4))
    header = data.draw(
        st.dictionaries(st.sampled_from(["typ", "kid", "crit", "jwk"]), JSON, max_size=2)
    )
    token = issuer.token(header=header, **overrides)
    async with protected(issuer, dpop=DpopVerifier()) as (client, _):
        r = await call(client, "whoami", headers=bearer(token))
        assert r.status_code in (200, 401, 403), (r.status_code, r.text)
        r = await call(client, "whoami", headers={"authorization": f"DPoP {token}", "dpop": token})
        assert r.status_code == 401, (r.status_code, r.text)


# -- the principal's claims --------------------------------------------------------------


async def test_by_default_a_token_without_sub_speaks_for_its_client_id_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    issuer = FakeIssuer()
    token = issuer.token(sub=None, client_id="robot-7")
    with caplog.at_level(logging.DEBUG, logger="trio_mcp.auth"):
        async with protected(issuer) as (client, _):
            r = await call(client, "whoami", headers=bearer(token))
            assert r.json()["result"]["content"][0]["text"] == "robot-7"
            r = await call(client, "whoami", headers=bearer(issuer.token(sub="alice")))
            assert r.json()["result"]["content"][0]["text"] == "alice"
    fallbacks = [
        (r.levelno, r.getMessage())
        for r in caplog.records
        if r.name == "trio_mcp.auth" and "its principal is" in r.getMessage()
    ]
    assert fallbacks == [
        (logging.DEBUG, "the token has no 'sub' claim; its principal is its 'client_id' claim")
    ]
    assert token not in caplog.text and token.split(".")[1] not in caplog.text


async def test_principal_claims_sub_alone_refuses_a_token_without_sub() -> None:
    issuer = FakeIssuer()
    async with issuer.http_client() as http:
        verifier = JwtVerifier(ISSUER, http_client=http, principal_claims=("sub",))
        async with protected(issuer, verifier=verifier) as (client, ran):
            r = await call(client, "whoami", headers=bearer(issuer.token(sub=None, client_id="x")))
            assert r.status_code == 401
            assert "the token names no subject (none of ['sub'])" in challenge(r)
            r = await call(client, "whoami", headers=bearer(issuer.token(sub="alice")))
            assert r.json()["result"]["content"][0]["text"] == "alice"
            assert ran == ["whoami"]


async def test_introspection_takes_the_principal_from_the_claims_it_is_told() -> None:
    issuer = FakeIssuer()
    issuer.introspection = {
        "robot": {"active": True, "client_id": "robot-7", "aud": RESOURCE, "iss": ISSUER},
        "user": {"active": True, "sub": "carol", "username": "c", "aud": RESOURCE},
    }
    async with issuer.http_client() as http:
        for claims, robot, user in [
            ((), "robot-7", "carol"),  # the default
            (("sub",), None, "carol"),
            (("username", "sub"), None, "c"),
        ]:
            options = {"principal_claims": claims} if claims else {}
            verifier = IntrospectionVerifier(f"{ISSUER}/introspect", http_client=http, **options)
            async with protected(issuer, verifier=verifier) as (client, _):
                for token, expected in (("robot", robot), ("user", user)):
                    r = await call(client, "whoami", headers=bearer(token))
                    if expected is None:
                        assert r.status_code == 401, (claims, token)
                    else:
                        assert r.json()["result"]["content"][0]["text"] == expected


@pytest.mark.parametrize(
    ("claims", "error"),
    [("sub", TypeError), (["sub", 1], TypeError), ((), ValueError), (("sub", "sub"), ValueError)],
)
def test_principal_claims_are_checked(claims: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"principal_claims must (be a sequence|name at least)"):
        JwtVerifier(ISSUER, principal_claims=claims)
    with pytest.raises(error, match=r"principal_claims must (be a sequence|name at least)"):
        IntrospectionVerifier(f"{ISSUER}/introspect", principal_claims=claims)


# -- scopes ------------------------------------------------------------------------------


async def test_a_tool_needing_a_scope_the_token_lacks_gets_403_before_it_runs() -> None:
    issuer = FakeIssuer()
    async with protected(issuer) as (client, ran):
        r = await call(client, "echo", {"text": "x"}, headers=bearer(issuer.token(scope="other")))
        assert r.status_code == 403
        assert challenge(r) == (
            'Bearer error="insufficient_scope", error_description="the token lacks a scope '
            f'this request needs", scope="mcp:tools", resource_metadata="{METADATA_URL}"'
        )
        assert r.json()["id"] == 1
        assert ran == []
        # Tools without scopes need none.
        r = await call(client, "whoami", headers=bearer(issuer.token(scope="other")))
        assert r.status_code == 200


async def test_resources_and_prompts_need_their_scopes() -> None:
    issuer = FakeIssuer()

    async def request(
        token: str, method: str, params: dict[str, Any], name: str | None
    ) -> httpx.Response:
        return await client.post(
            "/mcp",
            json=modern_body(1, method, params),
            headers={**modern_headers(method, name), **bearer(token)},
        )

    async with protected(issuer) as (client, ran):
        weak = issuer.token(scope="mcp:tools")
        strong = issuer.token(scope="vault:read files:read prompts:use")
        cases = [
            ("resources/read", {"uri": "vault://secret"}, "vault://secret", "vault:read"),
            ("resources/read", {"uri": "vault://files/a"}, "vault://files/a", "files:read"),
            ("prompts/get", {"name": "greet", "arguments": {"name": "x"}}, "greet", "prompts:use"),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "greet"},
                    "argument": {"name": "name", "value": "a"},
                },
                None,
                "prompts:use",
            ),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/resource", "uri": "vault://files/{name}"},
                    "argument": {"name": "name", "value": "a"},
                },
                None,
                "files:read",
            ),
        ]
        for method, params, name, scope in cases:
            r = await request(weak, method, params, name)
            assert r.status_code == 403, method
            assert f'scope="{scope}"' in challenge(r)
        assert ran == []
        for method, params, name, _ in cases:
            r = await request(strong, method, params, name)
            assert r.status_code == 200, r.text
        assert ran == ["secret", "file", "greet"]


async def test_scopes_are_checked_in_the_initialize_era_too() -> None:
    issuer = FakeIssuer()
    async with protected(issuer) as (client, ran):
        token = issuer.token(scope="other")
        headers = {"accept": ACCEPT, **bearer(token)}
        r = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            headers=headers,
        )
        assert r.status_code == 200
        headers["mcp-session-id"] = r.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = LEGACY
        await client.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        r = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x"}},
            },
            headers=headers,
        )
        assert r.status_code == 403
        assert 'scope="mcp:tools"' in challenge(r)
        assert ran == []
        # The token's subject is the session's principal.
        r = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}},
            },
            headers=headers,
        )
        assert r.json()["result"]["content"][0]["text"] == "alice"


def test_scopes_are_a_list_not_a_string() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match="list of scope names"):
        server.tool(scopes="mcp:tools")


async def test_required_scopes_apply_to_every_request() -> None:
    issuer = FakeIssuer()
    async with protected(issuer, required_scopes=["mcp:basic"]) as (client, ran):
        r = await call(client, "whoami", headers=bearer(issuer.token(scope="mcp:tools")))
        assert r.status_code == 403
        assert 'scope="mcp:basic"' in challenge(r)
        r = await call(
            client, "echo", {"text": "x"}, headers=bearer(issuer.token(scope="mcp:basic"))
        )
        assert r.status_code == 403
        assert 'scope="mcp:basic mcp:tools"' in challenge(r)
        r = await call(client, "whoami", headers=bearer(issuer.token(scope="mcp:basic")))
        assert r.status_code == 200


async def test_a_broader_scope_implies_narrower_ones() -> None:
    issuer = FakeIssuer()
    async with protected(issuer, implied_scopes={"admin": ["mcp:tools"]}) as (client, _):
        r = await call(client, "echo", {"text": "x"}, headers=bearer(issuer.token(scope="admin")))
        assert r.status_code == 200


async def test_the_scp_list_claim_counts_as_scopes() -> None:
    issuer = FakeIssuer()
    async with protected(issuer) as (client, _):
        token = issuer.token(scope=None, scp=["mcp:tools"])
        r = await call(client, "echo", {"text": "x"}, headers=bearer(token))
        assert r.status_code == 200


# -- the issuer's keys -------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def test_keys_are_cached_and_fetched_again_for_an_unknown_kid_at_most_once_per_interval() -> (
    None
):
    issuer = FakeIssuer()
    clock = Clock()
    async with issuer.http_client() as http:
        verifier = JwtVerifier(ISSUER, http_client=http, clock=clock, jwks_refresh_interval=30)
        async with protected(issuer, verifier=verifier) as (client, _):
            for _ in range(3):
                r = await call(client, "whoami", headers=bearer(issuer.token()))
                assert r.status_code == 200
            assert issuer.fetched == ["/.well-known/oauth-authorization-server", "/jwks"]
            # Rotation: a token signed with a new key makes the verifier fetch the set again,
            # once the refresh interval has passed since the last fetch.
            issuer.rotate()
            clock.now += 31
            r = await call(client, "whoami", headers=bearer(issuer.token()))
            assert r.status_code == 200
            assert issuer.fetched[-1] == "/jwks" and len(issuer.fetched) == 3
            # Made-up key ids do not make it fetch again within the interval.
            for _ in range(5):
                r = await call(client, "whoami", headers=bearer(FakeIssuer().token()))
                assert r.status_code == 401
            assert len(issuer.fetched) == 3
            assert verifier.keys.statistics() == {"keys": 2, "fetches": 2}


async def test_keys_older_than_their_max_age_are_fetched_again() -> None:
    issuer = FakeIssuer()
    clock = Clock()
    async with issuer.http_client() as http:
        verifier = JwtVerifier(ISSUER, http_client=http, clock=clock, jwks_max_age=100)
        async with protected(issuer, verifier=verifier) as (client, _):
            assert (await call(client, "whoami", headers=bearer(issuer.token()))).status_code == 200
            old = issuer.keys.pop()  # withdrawn
            issuer.rotate()
            clock.now += 101
            r = await call(client, "whoami", headers=bearer(issuer.token(key=old)))
            assert r.status_code == 401


async def test_at_most_max_keys_keys_are_kept() -> None:
    issuer = FakeIssuer()
    for _ in range(5):
        issuer.rotate()
    async with issuer.http_client() as http:
        verifier = JwtVerifier(ISSUER, http_client=http, max_keys=2)
        async with protected(issuer, verifier=verifier) as (client, _):
            assert (await call(client, "whoami", headers=bearer(issuer.token()))).status_code == 200
            assert verifier.keys.statistics()["keys"] == 2


async def test_an_unreachable_issuer_gets_503_not_401() -> None:
    issuer = FakeIssuer()
    issuer.jwks_status = 500
    async with protected(issuer) as (client, _):
        r = await call(client, "whoami", headers=bearer(issuer.token()))
    assert r.status_code == 503
    assert r.headers["retry-after"] == "5"


def test_hmac_and_none_are_refused_as_algorithms() -> None:
    for alg in ("HS256", "none"):
        with pytest.raises(ValueError, match="not accepted"):
            JwtVerifier(ISSUER, algorithms=["ES256", alg])
        with pytest.raises(ValueError, match="not accepted"):
            DpopVerifier(algorithms=[alg])


async def test_token_types_can_be_required() -> None:
    issuer = FakeIssuer()
    async with issuer.http_client() as http:
        verifier = JwtVerifier(ISSUER, http_client=http, token_types=["at+jwt"])
        async with protected(issuer, verifier=verifier) as (client, _):
            ok = await call(client, "whoami", headers=bearer(issuer.token()))
            id_token = await call(
                client, "whoami", headers=bearer(issuer.token(header={"typ": "JWT"}))
            )
    assert (ok.status_code, id_token.status_code) == (200, 401)


async def test_refusals_never_log_the_token(caplog: pytest.LogCaptureFixture) -> None:
    issuer = FakeIssuer()
    caplog.set_level(logging.DEBUG)
    token = issuer.token(exp=int(time.time()) - 600)
    async with protected(issuer) as (client, _):
        await call(client, "whoami", headers=bearer(token))
    assert "expired" in caplog.text
    assert token not in caplog.text and token.split(".")[2] not in caplog.text


# -- introspection -----------------------------------------------------------------------


async def test_introspection_accepts_active_tokens_for_this_resource_only() -> None:
    issuer = FakeIssuer()
    now = int(time.time())
    issuer.introspection = {
        "good": {
            "active": True,
            "sub": "carol",
            "aud": RESOURCE,
            "scope": "mcp:tools",
            "exp": now + 60,
            "iss": ISSUER,
        },
        "elsewhere": {
            "active": True,
            "sub": "carol",
            "aud": "https://other.example/mcp",
            "iss": ISSUER,
        },
        "stale": {"active": True, "sub": "carol", "aud": RESOURCE, "exp": now - 600, "iss": ISSUER},
        "foreign": {"active": True, "sub": "carol", "aud": RESOURCE, "iss": "https://evil.example"},
        "revoked": {"active": False},
    }
    async with issuer.http_client() as http:
        verifier = IntrospectionVerifier(
            f"{ISSUER}/introspect",
            client_id="rs",
            client_secret="s",
            issuer=ISSUER,
            http_client=http,
        )
        async with protected(issuer, verifier=verifier) as (client, _):
            r = await call(client, "whoami", headers=bearer("good"))
            assert r.json()["result"]["content"][0]["text"] == "carol"
            for token in ("elsewhere", "stale", "foreign", "revoked", "unknown"):
                r = await call(client, "whoami", headers=bearer(token))
                assert r.status_code == 401, token
                assert 'error="invalid_token"' in challenge(r)
            issuer.introspection_status = 500
            r = await call(client, "whoami", headers=bearer("good"))
            assert r.status_code == 503


# -- DPoP --------------------------------------------------------------------------------


def dpop_headers(key: DpopKey, token: str, proof: str) -> dict[str, str]:
    return {"authorization": f"DPoP {token}", "dpop": proof}


async def test_a_dpop_bound_token_with_a_good_proof_is_accepted() -> None:
    issuer = FakeIssuer()
    key = DpopKey()
    async with protected(issuer, dpop=DpopVerifier()) as (client, _):
        token = issuer.token(cnf={"jkt": key.jkt})
        proof = key.proof("POST", RESOURCE, token)
        r = await call(client, "whoami", headers=dpop_headers(key, token, proof))
        assert r.status_code == 200, r.text
        meta = (await client.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert meta["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA", "PS256", "RS256"]


DPOP_REFUSALS: dict[str, Callable[[DpopKey, str], dict[str, str]]] = {
    "wrong htm": lambda k, t: dpop_headers(k, t, k.proof("GET", RESOURCE, t)),
    "wrong htu": lambda k, t: dpop_headers(k, t, k.proof("POST", "http://localhost/other", t)),
    "wrong ath": lambda k, t: dpop_headers(k, t, k.proof("POST", RESOURCE, "another token")),
    "no ath": lambda k, t: dpop_headers(k, t, k.proof("POST", RESOURCE, None)),
    "stale iat": lambda k, t: dpop_headers(
        k, t, k.proof("POST", RESOURCE, t, iat=int(time.time()) - 301)
    ),
    "iat in the future": lambda k, t: dpop_headers(
        k, t, k.proof("POST", RESOURCE, t, iat=int(time.time()) + 301)
    ),
    "no jti": lambda k, t: dpop_headers(k, t, k.proof("POST", RESOURCE, t, jti=None)),
    "signed by another key": lambda k, t: dpop_headers(
        k, t, k.proof("POST", RESOURCE, t, key=DpopKey().key)
    ),
    "missing proof": lambda k, t: {"authorization": f"DPoP {t}"},
    "not a JWT": lambda k, t: dpop_headers(k, t, "nonsense"),
}


@pytest.mark.parametrize("kind", DPOP_REFUSALS)
async def test_bad_dpop_proofs_are_refused(kind: str) -> None:
    issuer = FakeIssuer()
    key = DpopKey()
    async with protected(issuer, dpop=DpopVerifier()) as (client, ran):
        token = issuer.token(cnf={"jkt": key.jkt})
        r = await call(client, "whoami", headers=DPOP_REFUSALS[kind](key, token))
    assert r.status_code == 401
    assert challenge(r).startswith('DPoP error="invalid_dpop_proof"'), challenge(r)
    if kind == "missing proof":
        assert "a DPoP proof (one DPoP header) is required" in challenge(r)
    assert ran == []


async def test_a_replayed_proof_is_refused() -> None:
    issuer = FakeIssuer()
    key = DpopKey()
    async with protected(issuer, dpop=DpopVerifier()) as (client, _):
        token = issuer.token(cnf={"jkt": key.jkt})
        headers = dpop_headers(key, token, key.proof("POST", RESOURCE, token))
        assert (await call(client, "whoami", headers=headers)).status_code == 200
        r = await call(client, "whoami", headers=headers)
    assert r.status_code == 401
    assert "replayed" in challenge(r)


async def test_a_dpop_bound_token_sent_as_a_bearer_token_is_refused() -> None:
    issuer = FakeIssuer()
    key = DpopKey()
    async with protected(issuer, dpop=DpopVerifier()) as (client, _):
        token = issuer.token(cnf={"jkt": key.jkt})
        r = await call(client, "whoami", headers=bearer(token))
    assert r.status_code == 401
    assert 'error="invalid_token"' in challenge(r)


async def test_without_a_dpop_verifier_dpop_tokens_are_refused() -> None:
    issuer = FakeIssuer()
    key = DpopKey()
    async with protected(issuer) as (client, _):
        token = issuer.token(cnf={"jkt": key.jkt})
        r = await call(
            client, "whoami", headers=dpop_headers(key, token, key.proof("POST", RESOURCE, token))
        )
        assert r.status_code == 401
        r = await call(client, "whoami", headers=bearer(token))
        assert r.status_code == 401


async def test_require_dpop_refuses_bearer_tokens() -> None:
    issuer = FakeIssuer()
    async with protected(issuer, dpop=DpopVerifier(), require_dpop=True) as (client, _):
        r = await call(client, "whoami", headers=bearer(issuer.token()))
        assert r.status_code == 401
        assert challenge(r).startswith('DPoP error="invalid_token"')
        r = await call(client, "whoami")
        assert challenge(r).startswith("DPoP ") and 'algs="' in challenge(r)


async def test_server_nonces_when_required() -> None:
    issuer = FakeIssuer()
    key = DpopKey()
    async with protected(issuer, dpop=DpopVerifier(require_nonce=True)) as (client, _):
        token = issuer.token(cnf={"jkt": key.jkt})
        r = await call(
            client, "whoami", headers=dpop_headers(key, token, key.proof("POST", RESOURCE, token))
        )
        assert r.status_code == 401
        assert challenge(r).startswith('DPoP error="use_dpop_nonce"')
        nonce = r.headers["dpop-nonce"]
        forged = nonce[:-2] + ("AA" if nonce[-2:] != "AA" else "BB")
        r = await call(
            client,
            "whoami",
            headers=dpop_headers(key, token, key.proof("POST", RESOURCE, token, nonce=forged)),
        )
        assert 'error="use_dpop_nonce"' in challenge(r)
        r = await call(
            client,
            "whoami",
            headers=dpop_headers(key, token, key.proof("POST", RESOURCE, token, nonce=nonce)),
        )
        assert r.status_code == 200, r.text


def test_stale_nonces_are_refused() -> None:
    clock = Clock()
    verifier = DpopVerifier(require_nonce=True, nonce_lifetime=60, clock=clock)
    nonce = verifier.new_nonce()
    assert verifier._nonce_fresh(nonce)
    clock.now += 61
    assert not verifier._nonce_fresh(nonce)


def test_the_replay_cache_is_bounded_and_forgets_proofs_too_old_to_accept() -> None:
    clock = Clock()
    verifier = DpopVerifier(replay_cache_size=3, clock=clock)
    key = DpopKey()
    token = "t"

    def check(**claims: Any) -> None:
        proof = key.proof("POST", RESOURCE, token, iat=int(clock.now), **claims)
        verifier.check(proof, method="POST", url=RESOURCE, access_token=token, jkt=key.jkt)

    for _ in range(5):
        check()
    assert verifier.statistics() == {"remembered_jti": 3}
    clock.now += 400  # every remembered proof is now too old to be accepted anyway
    check()
    assert verifier.statistics() == {"remembered_jti": 1}


async def test_a_failed_key_fetch_is_not_retried_within_the_interval_and_old_keys_stay() -> None:
    issuer = FakeIssuer()
    clock = Clock()
    async with issuer.http_client() as http:
        verifier = JwtVerifier(
            ISSUER, http_client=http, clock=clock, jwks_max_age=100, jwks_refresh_interval=30
        )
        async with protected(issuer, verifier=verifier) as (client, _):
            issuer.jwks_status = 500
            for _ in range(3):
                r = await call(client, "whoami", headers=bearer(issuer.token()))
                assert r.status_code == 503
            assert issuer.fetched.count("/jwks") == 1
            clock.now += 31
            issuer.jwks_status = 200
            assert (await call(client, "whoami", headers=bearer(issuer.token()))).status_code == 200
            # Keys past their age, the issuer down: the cached keys go on serving.
            issuer.jwks_status = 500
            clock.now += 101
            for _ in range(3):
                r = await call(client, "whoami", headers=bearer(issuer.token()))
                assert r.status_code == 200
            assert issuer.fetched.count("/jwks") == 3


async def test_concurrent_requests_share_one_key_fetch() -> None:
    issuer = FakeIssuer()
    release = trio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        await release.wait()
        return issuer.handle(request)

    statuses: list[int] = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(slow)) as http:
        verifier = JwtVerifier(ISSUER, http_client=http)
        async with protected(issuer, verifier=verifier) as (client, _):

            async def one() -> None:
                r = await call(client, "whoami", headers=bearer(issuer.token()))
                statuses.append(r.status_code)

            async with trio.open_nursery() as nursery:
                for _ in range(5):
                    nursery.start_soon(one)
                await trio.testing.wait_all_tasks_blocked()
                release.set()
    assert statuses == [200] * 5
    assert issuer.fetched == ["/.well-known/oauth-authorization-server", "/jwks"]


def test_without_the_auth_extra_http_and_auth_import_and_verifying_says_what_to_install() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['joserfc'] = None  # as if it were not installed\n"
        "import trio_mcp.http, trio_mcp.auth  # both import (a bearer client needs no JOSE)\n"
        "from trio_mcp._auth._jwt import check_signature\n"
        "try:\n"
        "    check_signature('a.b.c', None, 'RS256', {})\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (
        "trio_mcp.auth needs joserfc and cryptography for this: pip install 'trio-mcp[auth]'"
    )


@pytest.mark.usefixtures("front_end")
async def test_the_2024_transport_is_protected_and_its_principal_is_the_subject() -> None:
    """GET /sse needs a token, and each POST to /messages is checked for its scopes."""
    issuer = FakeIssuer()
    ran: list[str] = []
    async with issuer.http_client() as http:
        auth = ProtectedResource(
            RESOURCE,
            verifier=JwtVerifier(ISSUER, http_client=http),
            authorization_servers=[ISSUER],
        )
        app = asgi_app(make_server(ran), auth=auth)
        weak = bearer(issuer.token(scope="other", sub="dora"))
        async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
            assert (await client.get(base + "/sse")).status_code == 401
            async with open_sse(client, "GET", base + "/sse", headers=weak) as reader:
                (endpoint,) = await reader.wait_for(1)
                post_url = base + endpoint.data
                initialize = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2024-11-05",
                        "capabilities": {},
                        "clientInfo": {"name": "old", "version": "1"},
                    },
                }
                assert (await client.post(post_url, json=initialize)).status_code == 401
                r = await client.post(post_url, json=initialize, headers=weak)
                assert r.status_code == 202
                await reader.wait_for(2)
                await client.post(
                    post_url,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=weak,
                )

                def tool_call(id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                    params = {"name": name, "arguments": arguments}
                    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}

                r = await client.post(
                    post_url, json=tool_call(2, "echo", {"text": "x"}), headers=weak
                )
                assert r.status_code == 403
                assert 'scope="mcp:tools"' in challenge(r)
                r = await client.post(post_url, json=tool_call(3, "whoami", {}), headers=weak)
                assert r.status_code == 202
                events = await reader.wait_for(3)
                assert json.loads(events[2].data)["result"]["content"][0]["text"] == "dora"
    assert ran == ["whoami"]


def test_an_issuer_without_tls_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    JwtVerifier("http://127.0.0.1:9000")
    IntrospectionVerifier("https://as.example/introspect")
    assert caplog.text == ""
    JwtVerifier("http://as.example")
    assert "http://as.example is not served over HTTPS" in caplog.text


DPOP_CLAIMS = ["jti", "htm", "htu", "iat", "ath", "nonce"]


@given(st.data())
def test_well_signed_dpop_proofs_with_any_claims_are_accepted_or_refused(
    data: st.DataObject,
) -> None:
    """A proof signed by the bound key, with claims of any JSON type (and URLs of any
    shape): the verifier accepts it or raises DpopRefused, nothing else."""
    key = DpopKey()
    overrides = data.draw(st.dictionaries(st.sampled_from(DPOP_CLAIMS), JSON, max_size=3))
    if data.draw(st.booleans()):
        overrides["htu"] = data.draw(
            st.sampled_from(
                ["http://a:99999/mcp", "http://[::1/mcp", "", "mcp", "http://localhost:80/mcp"]
            )
        )
    proof = key.proof("POST", RESOURCE, "t", **overrides)
    verifier = DpopVerifier(require_nonce=data.draw(st.booleans()))
    try:
        verifier.check(proof, method="POST", url=RESOURCE, access_token="t", jkt=key.jkt)
    except DpopRefused:
        pass
