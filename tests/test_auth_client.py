"""The OAuth client flow (trio_mcp.auth.OAuth) against a fake MCP server and
authorization server (tests/auth_world.py): discovery, the code flow and each refusal,
credentials per issuer, step-up, refresh, the single-flight lock, token storage."""

from __future__ import annotations

import os
import stat

import httpx
import pytest
import trio
import trio.testing
from auth_world import MCP, World, callback_handler, form_of, query_of

from trio_mcp.auth import (
    AuthorizationCode,
    AuthorizationError,
    CallbackError,
    ClientInfo,
    DiscoveryError,
    FileTokenStore,
    JwtBearer,
    OAuth,
    TokenKey,
    TokenRequestError,
    Tokens,
)


def flow(world: World, **options: object) -> OAuth:
    grant = AuthorizationCode(callback_handler(world), "http://127.0.0.1:9/callback")
    return OAuth(grant, http_client=httpx.AsyncClient(transport=world.transport()), **options)  # type: ignore[arg-type]


def mcp_client(world: World, auth: OAuth, **options: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=world.transport(), auth=auth, **options)  # type: ignore[arg-type]


async def test_code_flow_discovers_registers_and_retries_with_the_token() -> None:
    world = World(scopes_supported=["mcp:read"])
    auth = flow(world)
    async with mcp_client(world, auth) as http:
        response = await http.post(MCP, content=b"{}")
    assert response.status_code == 200
    registration = world.requests_to("/register")[0]
    assert b'"application_type":"native"' in registration.content.replace(b" ", b"")
    authorize = query_of(world.requests_to("/authorize")[0])
    assert authorize["code_challenge_method"] == "S256"
    assert authorize["resource"] == MCP and authorize["scope"] == "mcp:read"
    token_form = form_of(world.requests_to("/token")[0])
    assert token_form["resource"] == MCP and "code_verifier" in token_form
    assert world.seen[-1].headers["Authorization"] == f"Bearer {auth.tokens.access_token}"  # type: ignore[union-attr]
    assert auth.tokens.access_token not in repr(auth.tokens)  # type: ignore[union-attr]


async def test_metadata_with_another_issuer_is_refused() -> None:
    world = World(metadata_issuer={"http://as.test": "http://attacker.test"})
    async with mcp_client(world, flow(world)) as http:
        with pytest.raises(DiscoveryError, match="refusing"):
            await http.post(MCP, content=b"{}")
    assert not world.requests_to("/register") and not world.requests_to("/authorize")


@pytest.mark.parametrize("methods", [None, ["plain"]])
async def test_a_server_without_pkce_s256_is_refused(methods: list[str] | None) -> None:
    world = World(pkce_methods=methods)
    async with mcp_client(world, flow(world)) as http:
        with pytest.raises(CallbackError, match="S256"):
            await http.post(MCP, content=b"{}")
    assert not world.requests_to("/authorize")


@pytest.mark.parametrize(
    ("iss", "supported"),
    [("wrong", True), ("slash", True), (None, True), ("wrong", False)],
)
async def test_a_callback_with_a_bad_iss_is_refused(iss: str | None, supported: bool) -> None:
    world = World(iss_in_callback=iss, iss_supported=supported)
    async with mcp_client(world, flow(world)) as http:
        with pytest.raises(CallbackError):
            await http.post(MCP, content=b"{}")
    assert world.requests_to("/authorize") and not world.requests_to("/token")


async def test_no_iss_is_fine_when_the_server_does_not_advertise_it() -> None:
    world = World(iss_in_callback=None, iss_supported=False)
    async with mcp_client(world, flow(world)) as http:
        assert (await http.post(MCP, content=b"{}")).status_code == 200


async def test_a_callback_with_another_state_is_refused() -> None:
    world = World(tamper_state=True)
    async with mcp_client(world, flow(world)) as http:
        with pytest.raises(CallbackError, match="state"):
            await http.post(MCP, content=b"{}")
    assert not world.requests_to("/token")


async def test_resource_metadata_for_another_resource_is_refused() -> None:
    world = World(prm_document={"resource": "http://evil.test/mcp",
                                "authorization_servers": ["http://as.test"]})  # fmt: skip
    async with mcp_client(world, flow(world)) as http:
        with pytest.raises(DiscoveryError, match="not this server"):
            await http.post(MCP, content=b"{}")
    assert not world.requests_to("/authorize")


async def test_the_token_never_goes_to_another_origin_nor_through_a_redirect() -> None:
    world = World()
    auth = flow(world)
    async with mcp_client(world, auth, follow_redirects=True) as http:
        await http.post(MCP, content=b"{}")
        assert auth.tokens is not None
        await http.get("http://other.test/x")
        await http.get("http://mcp.test/redirect")  # 302 to http://other.test/elsewhere
    others = [r for r in world.seen if r.url.host == "other.test"]
    assert len(others) == 2
    assert all("Authorization" not in r.headers for r in others)


async def test_credentials_are_never_reused_across_issuers() -> None:
    world = World()
    auth = flow(world)
    async with mcp_client(world, auth) as http:
        await http.post(MCP, content=b"{}")
        world.issuers = ["http://as2.test"]  # the resource moves to another server
        assert (await http.post(MCP, content=b"{}")).status_code == 200
    first = world.registrations["http://as.test"][0]
    assert world.registrations["http://as2.test"]  # registered anew there
    at_as2 = [r for r in world.seen if r.url.host == "as2.test"]
    assert all(first not in str(r.url) and first.encode() not in r.content for r in at_as2)
    assert auth.issuer == "http://as2.test"


async def test_preregistered_credentials_stay_with_their_first_issuer() -> None:
    world = World()
    auth = flow(world, client=ClientInfo("pre-client", "pre-secret"))
    async with mcp_client(world, auth) as http:
        await http.post(MCP, content=b"{}")
        world.issuers = ["http://as2.test"]
        await http.post(MCP, content=b"{}")
    assert "http://as.test" not in world.registrations  # used the pre-registered ID
    assert world.registrations["http://as2.test"]
    assert not any(b"pre-client" in r.content or "pre-client" in str(r.url)
                   for r in world.seen if r.url.host == "as2.test")  # fmt: skip


async def test_step_up_asks_for_the_union_and_stops_after_three_authorizations() -> None:
    world = World(always_forbid=True, challenge_scope="mcp:admin")
    auth = flow(world, scopes=["mcp:basic"])
    async with mcp_client(world, auth) as http:
        response = await http.post(MCP, content=b"{}")
    assert response.status_code == 403  # the caller gets the last refusal
    authorizations = [query_of(r) for r in world.requests_to("/authorize")]
    assert len(authorizations) == 3
    assert all("mcp:admin" in a["scope"].split() for a in authorizations)


async def test_expired_tokens_are_refreshed_and_rotated() -> None:
    world = World(refresh_tokens=True, expires_in=0)
    auth = flow(world)
    async with mcp_client(world, auth) as http:
        await http.post(MCP, content=b"{}")
        first = auth.tokens
        assert first is not None and first.refresh_token is not None
        await http.post(MCP, content=b"{}")  # expired: refreshed before it goes out
    assert world.refreshes == 1
    assert auth.tokens is not None and auth.tokens.refresh_token != first.refresh_token
    assert len(world.requests_to("/authorize")) == 1


def test_a_short_lived_token_is_used_for_most_of_its_life(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A token living less than the 30 s margin is not refreshed before every request:
    the margin is a quarter of its lifetime (a 20 s token is used for 15 s)."""
    now = 1_000_000.0
    monkeypatch.setattr("time.time", lambda: now)
    short = Tokens("t", expires_at=now + 20, issued_at=now)
    assert not short.expired()
    now += 14.9
    assert not short.expired()
    now += 0.2
    assert short.expired()
    # Long-lived ones keep the 30 s margin; without issued_at (stored by an older
    # version) too.
    now = 1_000_000.0
    assert Tokens("t", expires_at=now + 29, issued_at=now - 3600).expired()
    assert Tokens("t", expires_at=now + 29).expired()
    assert not Tokens("t", expires_at=now + 31, issued_at=now).expired()
    restored = Tokens.from_json(short.to_json())
    assert restored.issued_at == short.issued_at == now


async def test_workload_identity_does_not_retry_or_fall_back() -> None:
    world = World(token_error="invalid_grant")
    grant = JwtBearer("workload.jwt", client_id="workload")
    auth = OAuth(grant, http_client=httpx.AsyncClient(transport=world.transport()))
    async with mcp_client(world, auth) as http:
        for _ in range(2):
            with pytest.raises(TokenRequestError) as refused:
                await http.post(MCP, content=b"{}")
            assert refused.value.error == "invalid_grant"
    assert world.token_requests == 1  # the second request did not try again
    form = form_of(world.requests_to("/token")[0])
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert not world.requests_to("/authorize") and not world.requests_to("/register")


async def test_concurrent_401s_share_one_token_request() -> None:
    world = World()
    world.token_gate = trio.Event()
    auth = flow(world)
    statuses: list[int] = []
    async with mcp_client(world, auth) as http:

        async def post() -> None:
            statuses.append((await http.post(MCP, content=b"{}")).status_code)

        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(post)
            await trio.testing.wait_all_tasks_blocked()
            world.token_gate.set()
    assert statuses == [200] * 5
    assert world.token_requests == 1


async def test_a_long_get_stream_does_not_block_a_post_nor_a_refresh() -> None:
    world = World()
    auth = flow(world)
    async with mcp_client(world, auth) as http:
        await http.post(MCP, content=b"{}")  # authorized
        with trio.fail_after(5):
            async with http.stream("GET", MCP) as stream:
                chunks = stream.aiter_bytes()
                assert await chunks.__anext__() == b"data: open\n\n"
                # the stream is open and idle; the token is revoked: a POST gets a 401,
                # a new token, and its answer, while the GET stream stays open
                world.revoked.add(auth.tokens.access_token)  # type: ignore[union-attr]
                assert (await http.post(MCP, content=b"{}")).status_code == 200
                assert (await http.post(MCP, content=b"{}")).status_code == 200
                world.stream_gate.set()
                async for _ in chunks:
                    pass
    assert world.token_requests == 2


async def test_a_get_waiting_for_its_answer_does_not_block_a_refresh() -> None:
    world = World()
    auth = flow(world)
    async with mcp_client(world, auth) as http:
        await http.post(MCP, content=b"{}")  # authorized
        world.hold_get_headers = True

        async def get() -> None:
            async with http.stream("GET", MCP) as stream:
                async for _ in stream.aiter_bytes():
                    pass

        async with trio.open_nursery() as nursery:
            nursery.start_soon(get)  # sent; its answer is long in coming
            await trio.testing.wait_all_tasks_blocked()
            world.revoked.add(auth.tokens.access_token)  # type: ignore[union-attr]
            with trio.fail_after(5):  # the POST's 401 leads to a new token meanwhile
                assert (await http.post(MCP, content=b"{}")).status_code == 200
            world.stream_gate.set()
    assert world.token_requests == 2


async def test_file_token_store_is_private_and_one_file_per_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = FileTokenStore(tmp_path / "tokens")
    a, b = TokenKey("http://as.test", MCP), TokenKey("http://as2.test", MCP)
    await store.save(a, Tokens("secret-a", refresh_token="r"))
    await store.save(b, Tokens("secret-b"))
    assert await store.load(a) == Tokens("secret-a", refresh_token="r")
    assert (await store.load(b)).access_token == "secret-b"  # type: ignore[union-attr]
    files = sorted((tmp_path / "tokens").iterdir())
    assert len(files) == 2
    assert all(stat.S_IMODE(os.stat(f).st_mode) == 0o600 for f in files)
    assert stat.S_IMODE(os.stat(tmp_path / "tokens").st_mode) == 0o700
    assert not any("as.test" in f.name for f in files)
    await store.delete(a)
    assert await store.load(a) is None
    assert "secret" not in repr(await store.load(b))


async def test_stored_tokens_are_used_after_discovery_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    world = World()
    store = FileTokenStore(tmp_path)
    async with mcp_client(world, auth := flow(world, token_store=store)) as http:
        await http.post(MCP, content=b"{}")
    assert auth.tokens is not None
    # a new run: the first request goes without a token; after the 401 the stored one
    world.seen.clear()
    async with mcp_client(world, flow(world, token_store=store)) as http:
        assert (await http.post(MCP, content=b"{}")).status_code == 200
    assert "Authorization" not in world.seen[0].headers
    assert not world.requests_to("/authorize")


async def test_errors_are_authorization_errors() -> None:
    assert issubclass(DiscoveryError, AuthorizationError)
    assert issubclass(TokenRequestError, AuthorizationError)


async def test_an_mcp_client_reports_a_refusal_as_an_error_not_a_crash() -> None:
    from trio_mcp import McpError
    from trio_mcp.http import open_http_client

    world = World(metadata_issuer={"http://as.test": "http://attacker.test"})
    http = httpx.AsyncClient(transport=world.transport(), auth=flow(world))
    with trio.fail_after(10), pytest.raises(McpError, match=r"authorization failed.*refusing"):
        async with open_http_client(MCP, http_client=http, protocol_version="2025-11-25"):
            pass
    await http.aclose()


async def test_a_later_run_refreshes_stored_tokens_as_the_same_public_client(tmp_path) -> None:  # type: ignore[no-untyped-def]
    world = World(refresh_tokens=True, expires_in=0)
    store = FileTokenStore(tmp_path)
    async with mcp_client(world, flow(world, token_store=store)) as http:
        await http.post(MCP, content=b"{}")
    [client_id] = world.registrations["http://as.test"]
    async with mcp_client(world, flow(world, token_store=store)) as http:
        assert (await http.post(MCP, content=b"{}")).status_code == 200
    refresh = [form_of(r) for r in world.requests_to("/token")][-1]
    assert refresh["grant_type"] == "refresh_token" and refresh["client_id"] == client_id
    assert len(world.registrations["http://as.test"]) == 1  # no second registration
    assert len(world.requests_to("/authorize")) == 1  # nor a second login


async def test_dpop_binds_the_token_and_retries_with_the_servers_nonce() -> None:
    from auth_world import claims_of

    from trio_mcp._auth._client._dpop_proof import content_digest
    from trio_mcp._auth._jose import token_hash

    world = World(dpop=True, rs_nonce="rs-nonce-1")
    auth = flow(world)
    async with mcp_client(world, auth) as http:
        assert (await http.post(MCP, content=b'{"id":1}')).status_code == 200
        assert (await http.post(MCP + "?q=1", content=b'{"id":2}')).status_code == 200
    assert auth.tokens is not None and auth.tokens.token_type == "DPoP"
    token_proof = claims_of(world.requests_to("/token")[0].headers["DPoP"])
    assert token_proof["htm"] == "POST" and token_proof["htu"] == "http://as.test/token"
    assert "ath" not in token_proof and "content_digest" not in token_proof
    first, retried, second = world.proofs  # the first was refused for want of the nonce
    assert "nonce" not in first and retried["nonce"] == second["nonce"] == "rs-nonce-1"
    assert len({first["jti"], retried["jti"], second["jti"]}) == 3
    assert second["htu"] == MCP and second["ath"] == token_hash(auth.tokens.access_token)
    assert second["content_digest"] == content_digest(b'{"id":2}')
    assert world.seen[-1].headers["Authorization"].startswith("DPoP ")


async def test_concurrent_401s_of_a_revoked_token_share_one_refresh() -> None:
    world = World(refresh_tokens=True)
    auth = flow(world)
    statuses: list[int] = []
    async with mcp_client(world, auth) as http:
        await http.post(MCP, content=b"{}")
        world.revoked.add(auth.tokens.access_token)  # type: ignore[union-attr]
        world.token_gate = trio.Event()

        async def post() -> None:
            statuses.append((await http.post(MCP, content=b"{}")).status_code)

        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(post)
            await trio.testing.wait_all_tasks_blocked()
            world.token_gate.set()
    assert statuses == [200] * 5
    assert world.refreshes == 1 and len(world.requests_to("/authorize")) == 1
