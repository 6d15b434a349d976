"""Server Cards (SEP-2127): a card built from a Server, served beside the MCP endpoint
(and listed by the catalog), read strictly by the client, turned into a host config.

The refusals are tested on ``httpx.MockTransport`` bodies; what the app serves, over
``httpx.ASGITransport`` and once over real HTTP (hypercorn on 127.0.0.1, bounded waits)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import orjson
import pytest
import trio
import trio.testing

from trio_mcp import Server
from trio_mcp.auth import AccessToken, InvalidToken, ProtectedResource
from trio_mcp.cards import (
    CARD_META_KEY,
    CARD_MIME_TYPE,
    CARD_RESOURCE_URI,
    CARD_SCHEMA,
    MAX_CARD_BYTES,
    CardError,
    CardHeader,
    CardInput,
    Remote,
    Repository,
    ServerCard,
    add_card_resource,
    card_mismatches,
    card_url,
    catalog_url,
    config_from_card,
    fetch_catalog,
    fetch_server_card,
    parse_card,
    parse_catalog,
    server_card,
)
from trio_mcp.host import HttpServerConfig, allow_all, open_host
from trio_mcp.http import OriginPolicy, asgi_app, open_asgi_app
from trio_mcp.skills import Skill
from trio_mcp.testing import connect
from trio_mcp.types import Icon

BASE = "http://127.0.0.1:8000"
ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def make_server() -> Server:
    server = Server(
        "weather",
        version="2.1.0",
        title="Weather",
        description="Forecasts for any city.",
        website_url="https://example.com/weather",
        icons=[Icon(src="https://example.com/w.png", mime_type="image/png", sizes=["48x48"])],
    )

    @server.tool()
    def forecast(city: str) -> str:
        """The forecast for a city."""
        return f"sun in {city}"

    server.add_skills(
        Skill.from_files(
            "greeting", {"SKILL.md": "---\nname: greeting\ndescription: Greet.\n---\nHi.\n"}
        )
    )
    return server


def minimal(**members: Any) -> dict[str, Any]:
    card = {"$schema": CARD_SCHEMA, "name": "com.example/weather", "version": "1.0.0"}
    card["description"] = "Forecasts."
    card.update(members)
    return card


# --- The card of a Server ---------------------------------------------------------------------


def test_card_from_a_server_has_its_identity_and_capabilities() -> None:
    server = make_server()
    repository = Repository(url="https://github.com/example/weather", source="github")
    card = server_card(server, name="com.example/weather", repository=repository)
    assert card.schema == CARD_SCHEMA
    assert (card.name, card.version, card.title) == ("com.example/weather", "2.1.0", "Weather")
    assert card.description == "Forecasts for any city."
    assert card.website_url == "https://example.com/weather"
    assert card.icons == server.info.icons
    assert card.repository == repository
    assert card.remotes is None  # filled in by the app that serves it
    ours = (card.meta or {})[CARD_META_KEY]
    assert ours["capabilities"]["tools"] == {"listChanged": True}
    assert "io.modelcontextprotocol/skills" in ours["capabilities"]["extensions"]
    assert "authorization" not in ours
    # What it writes, it reads back.
    wire = orjson.dumps(orjson.loads(orjson.dumps(card.meta)))
    assert parse_card(orjson.dumps({**minimal(), "_meta": orjson.loads(wire)})).meta == card.meta


def test_card_of_a_protected_server_says_what_it_needs() -> None:
    card = server_card(make_server(), name="com.example/weather", auth=protected())
    authorization = (card.meta or {})[CARD_META_KEY]["authorization"]
    assert authorization == {
        "required": True,
        "resourceMetadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "authorizationServers": ["https://issuer.example.com"],
        "scopesSupported": ["mcp:tools"],
    }


@pytest.mark.parametrize(
    ("server", "options", "named"),
    [
        (Server("weather", description="d"), {}, "$.name"),  # not namespace/name
        (Server("com.example/weather"), {}, "$.description"),  # none to take
        (Server("w", description="d"), {"name": "com.example/a/b"}, "$.name"),
        (Server("w"), {"name": "com.example/w", "description": "x" * 101}, "$.description"),
        (Server("w", version="^1.2"), {"name": "com.example/w", "description": "d"}, "$.version"),
    ],
)
def test_a_card_the_schema_refuses_is_not_built(
    server: Server, options: dict[str, Any], named: str
) -> None:
    with pytest.raises(CardError, match=f"^{named.replace('$', '[$]')}"):
        server_card(server, **options)


async def test_the_card_is_also_a_resource_for_clients_of_any_transport() -> None:
    server = make_server()
    remote = Remote(type="streamable-http", url="https://mcp.example.com/mcp")
    card = server_card(server, name="com.example/weather", remotes=[remote])
    add_card_resource(server, card)
    async with connect(server, protocol_version="2025-11-25") as client:
        listed = {r.uri: r for r in await client.list_resources()}
        assert listed[CARD_RESOURCE_URI].mime_type == "application/json"
        (contents,) = (await client.read_resource(CARD_RESOURCE_URI)).contents
    assert parse_card(contents.text) == card  # type: ignore[union-attr]
    with pytest.raises(CardError, match=r"^[$].name"):
        add_card_resource(server, ServerCard(name="x", version="1", description="d"))


# --- Served by the app ------------------------------------------------------------------------


async def get(app: Any, path: str, **options: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        return await client.request(options.pop("method", "GET"), path, **options)


async def test_the_app_serves_the_card_beside_the_mcp_endpoint() -> None:
    server = make_server()
    card = server_card(server, name="com.example/weather")
    async with open_asgi_app(server, card=card) as app:
        response = await get(app, "/mcp/server-card", headers={"accept": CARD_MIME_TYPE})
        assert response.status_code == 200
        assert response.headers["content-type"] == CARD_MIME_TYPE
        assert response.headers["access-control-allow-origin"] == "*"
        assert response.headers["access-control-allow-methods"] == "GET"
        assert response.headers["cache-control"] == "public, max-age=3600"
        served = parse_card(response.content)
        assert served.remotes == [
            Remote(
                type="streamable-http",
                url=f"{BASE}/mcp",
                supported_protocol_versions=list(server.versions),
            ),
            Remote(type="sse", url=f"{BASE}/sse"),
        ]
        assert served.meta == card.meta
        head = await get(app, "/mcp/server-card", method="HEAD")
        assert (head.status_code, head.content) == (200, b"")
        assert head.headers["content-type"] == CARD_MIME_TYPE
        options = await get(app, "/mcp/server-card", method="OPTIONS")
        assert options.status_code == 204
        assert options.headers["access-control-allow-origin"] == "*"
        post = await get(app, "/mcp/server-card", method="POST", content=b"{}")
        assert post.status_code == 405
        assert post.headers["allow"] == "GET, HEAD, OPTIONS"
        # No catalog (nor well-known card) unless the app owns the origin.
        assert (await get(app, "/.well-known/mcp/catalog.json")).status_code == 404
        assert (await get(app, "/.well-known/mcp/server-card")).status_code == 404


async def test_a_card_with_remotes_is_served_as_given_and_mounted_apps_name_their_prefix() -> None:
    server = make_server()
    remote = Remote(type="streamable-http", url="https://mcp.example.com/weather")
    given = server_card(server, name="com.example/weather", remotes=[remote])
    async with open_asgi_app(server, card=given) as app:
        assert parse_card((await get(app, "/mcp/server-card")).content) == given
    derived = server_card(server, name="com.example/weather")
    async with open_asgi_app(server, card=derived, sse_path=None) as app:
        transport = httpx.ASGITransport(app=app, root_path="/tools")
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
            response = await client.get("/tools/mcp/server-card")
        served = parse_card(response.content)
        assert [r.url for r in served.remotes or ()] == [f"{BASE}/tools/mcp"]


async def test_a_host_header_that_is_no_host_does_not_reach_the_card() -> None:
    server = make_server()
    card = server_card(server, name="com.example/weather")
    async with open_asgi_app(server, card=card, origin_policy=OriginPolicy.off()) as app:
        for host, expected in [
            ("mcp.example.com:8443", "http://mcp.example.com:8443/mcp"),
            ("[::1]:9000", "http://[::1]:9000/mcp"),
            ("evil.example/steal?", f"{BASE}/mcp"),  # the address the connection reached
            ("a b", f"{BASE}/mcp"),
        ]:
            response = await get(app, "/mcp/server-card", headers={"host": host})
            remotes = parse_card(response.content).remotes or []
            assert remotes[0].url == expected, host


async def test_the_catalog_lists_the_card_when_the_app_owns_the_origin() -> None:
    server = make_server()
    card = server_card(server, name="com.example/weather")
    async with open_asgi_app(server, card=card, card_catalog=True) as app:
        response = await get(app, "/.well-known/mcp/catalog.json")
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "*"
        assert response.headers["cache-control"] == "public, max-age=3600"
        raw = response.json()
        assert raw["specVersion"] == "draft"
        (entry,) = parse_catalog(response.content).entries
        assert entry.identifier == "urn:air:127.0.0.1:weather"
        assert entry.display_name == "Weather"
        assert entry.type == CARD_MIME_TYPE
        assert entry.url == f"{BASE}/mcp/server-card"
        # The card again where the SEP's first text put it, and where scanners look.
        reserved = (await get(app, "/mcp/server-card")).content
        for path in ("/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json"):
            response = await get(app, path)
            assert response.headers["content-type"] == CARD_MIME_TYPE
            assert response.content == reserved
    with pytest.raises(ValueError, match="card_catalog=True lists the server's card"):
        asgi_app(server, card_catalog=True)


def test_the_app_refuses_a_card_its_schema_would_refuse() -> None:
    server = make_server()
    with pytest.raises(CardError, match=r"^[$].name: expected a reverse-DNS name"):
        asgi_app(server, card=ServerCard(name="weather", version="1", description="d"))
    with pytest.raises(TypeError, match=r"card must be a ServerCard .* not dict"):
        asgi_app(server, card=minimal())  # type: ignore[typeddict-item]


class Verifier:
    async def verify(self, token: str) -> AccessToken:
        if token != "good":
            raise InvalidToken("bad token")
        return AccessToken(subject="ann", scopes=frozenset({"mcp:tools"}))


def protected() -> ProtectedResource:
    return ProtectedResource(
        "https://mcp.example.com/mcp",
        verifier=Verifier(),
        authorization_servers=["https://issuer.example.com"],
        scopes_supported=["mcp:tools"],
    )


async def test_a_protected_servers_card_is_public_and_says_what_auth_it_needs() -> None:
    server = make_server()
    auth = protected()
    card = server_card(server, name="com.example/weather")
    async with open_asgi_app(server, card=card, card_catalog=True, auth=auth) as app:
        # The MCP endpoint wants a token; the card and catalog do not.
        refused = await get(app, "/mcp", method="POST", json={})
        assert refused.status_code == 401
        response = await get(app, "/mcp/server-card")
        assert response.status_code == 200
        served = parse_card(response.content)
        assert [r.url for r in served.remotes or ()] == [
            "https://mcp.example.com/mcp",
            "https://mcp.example.com/sse",
        ]
        authorization = (served.meta or {})[CARD_META_KEY]["authorization"]
        assert authorization["required"] is True
        assert authorization["resourceMetadata"] == auth.metadata_url
        assert authorization["scopesSupported"] == ["mcp:tools"]
        catalog = await get(app, "/.well-known/mcp/catalog.json")
        assert catalog.status_code == 200
        (entry,) = parse_catalog(catalog.content).entries
        assert entry.url == "https://mcp.example.com/mcp/server-card"


async def test_over_real_http_the_client_finds_the_card_through_the_catalog() -> None:
    from http_support import running

    server = make_server()
    card = server_card(server, name="com.example/weather")
    app = asgi_app(server, card=card, card_catalog=True)
    with trio.fail_after(20):
        async with running(app) as base:
            catalog = await fetch_catalog(base + "/anything/at/all")
            (entry,) = catalog.entries
            assert entry.url == base + "/mcp/server-card" == card_url(base + "/mcp/")
            fetched = await fetch_server_card(entry.url)
    assert fetched.name == "com.example/weather"
    assert [r.url for r in fetched.remotes or ()] == [base + "/mcp", base + "/sse"]


# --- The client's refusals --------------------------------------------------------------------


def mock(
    body: bytes,
    *,
    status: int = 200,
    content_type: str | None = CARD_MIME_TYPE,
    streamed: bool = False,
    **headers: str,
) -> Callable[[], httpx.AsyncClient]:
    """A client whose every GET gets ``body``; ``streamed``: in 1 KiB chunks, with no
    ``Content-Length``."""
    seen: list[httpx.Request] = []

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 1024):
            yield body[start : start + 1024]

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        sent = dict(headers)
        if content_type is not None:
            sent["content-type"] = content_type
        if streamed:
            return httpx.Response(status, content=chunks(), headers=sent)
        return httpx.Response(status, content=body, headers=sent)

    def client() -> httpx.AsyncClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
        http.seen = seen  # type: ignore[attr-defined]
        return http

    return client


async def read_card(body: bytes, **options: Any) -> ServerCard:
    async with mock(body, **options)() as http:
        return await fetch_server_card(f"{BASE}/mcp/server-card", http_client=http)


async def test_the_client_asks_for_the_card_media_type() -> None:
    async with mock(orjson.dumps(minimal()))() as http:
        card = await fetch_server_card(f"{BASE}/mcp/server-card", http_client=http)
        (request,) = http.seen  # type: ignore[attr-defined]
    assert request.headers["accept"] == CARD_MIME_TYPE
    assert card.name == "com.example/weather"


@pytest.mark.parametrize(
    ("card", "message"),
    [
        (minimal(packages=[]), "'packages' at [$] "),
        (
            minimal(remotes=[{"type": "sse", "url": "https://x", "authentication": {}}]),
            "'authentication' at [$].remotes\\[0\\]",
        ),
        (
            minimal(
                remotes=[{"type": "sse", "url": "https://x", "headers": [{"name": "A", "x": 1}]}]
            ),
            "'x' at [$].remotes\\[0\\].headers\\[0\\]",
        ),
        (
            minimal(repository={"url": "https://x", "source": "github", "stars": 3}),
            "'stars' at [$].repository",
        ),
        (minimal(icons=[{"src": "https://x/i.png", "alt": "i"}]), "'alt' at [$].icons\\[0\\]"),
        (
            {k: v for k, v in minimal().items() if k != "version"},
            "required field missing @ [$].version",
        ),
        (
            {k: v for k, v in minimal().items() if k != "$schema"},
            "required field missing @ [$].[$]schema",
        ),
        (minimal(name=5), "expected a string, got int 5 @ [$].name"),
        (minimal(remotes=[{"type": "websocket", "url": "ws://x"}]), "[$].remotes.type"),
        (minimal(remotes={"type": "sse"}), "[$].remotes"),
        (
            minimal(remotes=[{"type": "sse", "url": "ftp://x"}]),
            "^.*[$].remotes\\[0\\].url: expected",
        ),
        (minimal(name="weather"), "[$].name: expected a reverse-DNS name"),
        (minimal(version="1.x"), "[$].version: expected one version"),
        (minimal(description=""), "[$].description: expected 1 to 100 characters"),
        (
            minimal(
                **{
                    "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
                }
            ),
            "[$].[$]schema: expected",
        ),
    ],
)
async def test_a_card_off_its_schema_is_refused_naming_the_member(
    card: dict[str, Any], message: str
) -> None:
    with pytest.raises(CardError, match=message):
        await read_card(orjson.dumps(card))


async def test_meta_is_the_cards_open_extension_point() -> None:
    meta = {"com.example/anything": {"nested": [1, {"x": None}]}}
    card = await read_card(orjson.dumps(minimal(_meta=meta)))
    assert card.meta == meta


@pytest.mark.parametrize(
    ("body", "options", "message"),
    [
        (b"{not json", {}, "is not JSON"),
        (b"[1, 2]", {}, "must be a JSON object, got list"),
        (
            b"<html>",
            {"content_type": "text/html"},
            "expected a JSON server card, got Content-Type 'text/html'",
        ),
        (b"{}", {"content_type": None}, "expected a JSON server card, got Content-Type ''"),
        (
            b"gone",
            {"status": 404, "content_type": "text/plain"},
            "404 Not Found \\(no server card there\\)",
        ),
        (
            b"{}",
            {"content-length": str(MAX_CARD_BYTES + 1)},
            f"is {MAX_CARD_BYTES + 1} bytes, over the limit",
        ),
        (
            b" " * (MAX_CARD_BYTES + 1),
            {"streamed": True},
            f"over the limit of {MAX_CARD_BYTES} bytes",
        ),
    ],
)
async def test_a_body_that_is_no_card_is_refused(
    body: bytes, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(CardError, match=message):
        await read_card(body, **options)


async def test_the_size_limit_is_the_callers_and_the_request_is_cancelled_with_its_scope(
    autojump_clock: trio.testing.MockClock,
) -> None:
    body = orjson.dumps(minimal(description="d" * 100))
    async with mock(body)() as http:
        with pytest.raises(CardError, match="over the limit of 50 bytes"):
            await fetch_server_card(f"{BASE}/c", http_client=http, max_bytes=50)

    async def never(request: httpx.Request) -> httpx.Response:
        await trio.sleep_forever()
        raise AssertionError

    async with httpx.AsyncClient(transport=httpx.MockTransport(never)) as http:
        with trio.move_on_after(5) as scope:
            await fetch_server_card(f"{BASE}/c", http_client=http)
    assert scope.cancelled_caught


async def test_a_card_url_must_be_http_and_the_refusal_checkpoints() -> None:
    with (
        trio.testing.assert_checkpoints(),
        pytest.raises(CardError, match=r"over http\(s\), not from 'file:///etc/passwd'"),
    ):
        await fetch_server_card("file:///etc/passwd")


async def test_the_catalog_keeps_only_server_cards_and_names_bad_members() -> None:
    entry = {"identifier": "urn:air:example.com:w", "displayName": "W", "url": "https://x/c"}
    body = {
        "specVersion": "draft",
        "entries": [
            {**entry, "type": CARD_MIME_TYPE, "publisher": {"name": "ok"}},  # unknown: ignored
            {**entry, "mediaType": CARD_MIME_TYPE},  # the first drafts' name of "type"
            {**entry, "type": "application/a2a-agent-card+json"},  # not ours: skipped
        ],
    }
    async with mock(orjson.dumps(body), content_type="application/json")() as http:
        catalog = await fetch_catalog("https://example.com/some/page?q=1", http_client=http)
        (request,) = http.seen  # type: ignore[attr-defined]
    assert str(request.url) == "https://example.com/.well-known/mcp/catalog.json"
    assert [e.type for e in catalog.entries] == [CARD_MIME_TYPE, CARD_MIME_TYPE]
    for bad, message in [
        ({"entries": []}, "required field missing @ [$].specVersion"),
        ({"specVersion": "draft"}, "required field missing @ [$].entries"),
        (
            {"specVersion": "draft", "entries": [{**entry, "type": CARD_MIME_TYPE, "url": 3}]},
            "expected a string, got int 3 @ [$].entries.url",
        ),
    ]:
        with pytest.raises(CardError, match=message):
            parse_catalog(orjson.dumps(bad))


def test_card_and_catalog_urls() -> None:
    assert card_url("https://h/mcp") == "https://h/mcp/server-card"
    assert card_url("https://h/mcp/?tenant=a#x") == "https://h/mcp/server-card"
    assert card_url("https://h/mcp/server-card") == "https://h/mcp/server-card"
    assert catalog_url("https://h:8443/a/b?c") == "https://h:8443/.well-known/mcp/catalog.json"


# --- A host from a card -----------------------------------------------------------------------


def templated_card() -> ServerCard:
    remote = Remote(
        type="streamable-http",
        url="https://{tenant}.example.com/mcp",
        variables={"tenant": CardInput(description="your tenant", is_required=True)},
        headers=[
            CardHeader(
                name="Authorization",
                is_required=True,
                is_secret=True,
                value="Bearer {token}",
                variables={"token": CardInput(description="an API token", is_required=True)},
            ),
            CardHeader(name="X-Region", default="eu", choices=["eu", "us"]),
            CardHeader(name="X-Debug"),
        ],
    )
    sse = Remote(type="sse", url="https://example.com/sse")
    return ServerCard(name="com.example/t", version="1", description="d", remotes=[sse, remote])


def test_a_card_becomes_the_config_of_its_streamable_http_remote() -> None:
    config = config_from_card(
        templated_card(), variables={"tenant": "acme", "token": "t0k"}, headers={"x-trace": "1"}
    )
    assert config == HttpServerConfig(
        url="https://acme.example.com/mcp",
        headers={"Authorization": "Bearer t0k", "X-Region": "eu", "x-trace": "1"},
    )
    chosen = config_from_card(
        templated_card(),
        variables={"tenant": "acme"},
        headers={"authorization": "Bearer other", "X-REGION": "us"},
    )
    assert chosen.headers == {"Authorization": "Bearer other", "X-Region": "us"}


@pytest.mark.parametrize(
    ("variables", "headers", "message"),
    [
        ({}, {}, "no value for \\{tenant\\} \\(your tenant\\)"),
        (
            {"tenant": "a"},
            {},
            "no value for \\{token\\} \\(an API token\\), a variable of header 'Authorization'",
        ),
        ({"tenant": "a", "token": "t"}, {"X-Region": "mars"}, "header 'X-Region': expected one of"),
    ],
)
def test_what_a_card_requires_and_nobody_gave_is_named(
    variables: dict[str, str], headers: dict[str, str], message: str
) -> None:
    with pytest.raises(CardError, match=message):
        config_from_card(templated_card(), variables=variables, headers=headers)


def test_a_card_without_http_remotes_gives_no_config() -> None:
    with pytest.raises(CardError, match="names no HTTP remote"):
        config_from_card(ServerCard(name="com.example/t", version="1", description="d"))


async def test_a_host_starts_from_a_served_card() -> None:
    from http_support import running

    server = make_server()
    card = server_card(server, name="com.example/weather")
    with trio.fail_after(20):
        async with running(asgi_app(server, card=card)) as base:
            config = config_from_card(await fetch_server_card(card_url(base + "/mcp")))
            assert config.url == base + "/mcp"
            async with open_host({"weather": config}, consent=allow_all()) as host:
                await host.wait_settled()
                result = await host.call_tool("weather__forecast", {"city": "Oslo"})
    assert result.content[0].text == "sun in Oslo"  # type: ignore[union-attr]


async def test_a_card_is_checked_against_what_the_server_says_once_connected() -> None:
    server = make_server()
    card = server_card(server, name="com.example/weather")
    async with connect(server) as client:
        info = client.server_info
    assert info is not None
    assert card_mismatches(card, info) == []
    stale = attrs.evolve(card, version="1.0.0", title="Old weather", name="com.example/other")
    assert card_mismatches(stale, info) == [
        "name: the card says 'com.example/other', the server 'weather'",
        "version: the card says '1.0.0', the server '2.1.0'",
        "title: the card says 'Old weather', the server 'Weather'",
    ]


# --- trio-mcp card, against the everything server -------------------------------------------


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    """``examples/everything_server.py --http 0``: its MCP URL."""
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "everything_server.py"), "--http", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 30
        line = ""
        while "everything server on " not in line:
            left = deadline - time.monotonic()
            assert left > 0 and select.select([process.stderr], [], [], left)[0], "no URL"
            line = process.stderr.readline()
            assert line, "the everything server exited"
        yield line.split("everything server on ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
        cwd=ROOT,
    )


@pytest.mark.slow
def test_cli_prints_the_everything_servers_card(everything_url: str) -> None:
    run = cli("card", everything_url)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "dev.trio-mcp/everything 1.0.0  Everything"
    assert f"  streamable-http: {everything_url}  (2026-07-28, " in run.stdout
    assert "  extensions: io.modelcontextprotocol/skills, io.modelcontextprotocol/ui" in lines
    assert any(line.startswith("  capabilities: ") and "tools" in line for line in lines)

    as_json = cli("card", everything_url + "/server-card", "--json")
    assert as_json.returncode == 0, as_json.stderr
    card = parse_card(as_json.stdout)
    assert card.name == "dev.trio-mcp/everything"
    assert card.remotes is not None and card.remotes[0].url == everything_url

    site = everything_url.removesuffix("/mcp")
    catalog = cli("card", site, "--catalog")
    assert catalog.returncode == 0, catalog.stderr
    assert catalog.stdout == (
        f"Everything  {everything_url}/server-card  (urn:air:127.0.0.1:everything)\n"
    )
    entries = orjson.loads(cli("card", site, "--catalog", "--json").stdout)["entries"]
    assert [e["url"] for e in entries] == [everything_url + "/server-card"]


@pytest.mark.slow
def test_cli_says_in_one_line_why_a_card_is_not_there(everything_url: str) -> None:
    site = everything_url.removesuffix("/mcp")
    run = cli("card", site + "/elsewhere")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == (
        f"trio-mcp: GET {site}/elsewhere/server-card: 404 Not Found (no server card there)\n"
    )
