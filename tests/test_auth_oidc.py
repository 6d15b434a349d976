"""End to end against a real authorization server nobody here wrote: oidc-provider (npm),
run with node on 127.0.0.1 (tests/auth_support/oidc.py). Tokens come from its token
endpoint (client credentials with a resource indicator, plain and DPoP-bound); the
protected server is examples/protected_server.py, run as its users run it, or an
``asgi_app`` with ``auth=`` served by Hypercorn, both over real HTTP."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from auth_support.issuer import b64
from auth_support.oidc import OidcProvider, free_port, private_jwks, start_oidc_provider
from http_support import modern_body, modern_headers
from joserfc import jwk, jws

from trio_mcp import McpError, Server
from trio_mcp.auth import IntrospectionVerifier, JwtVerifier, ProtectedResource
from trio_mcp.http import open_http_client, serve

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


class BearerAuth(httpx.Auth):
    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


class DpopKey:
    """A client's DPoP key (RFC 9449): proofs for the token endpoint and for the server."""

    def __init__(self) -> None:
        self.key = jwk.ECKey.generate_key("P-256")

    def proof(self, method: str, url: str, token: str | None = None) -> str:
        claims = {
            "jti": secrets.token_urlsafe(12),
            "htm": method,
            "htu": url,
            "iat": int(time.time()),
        }
        if token is not None:
            claims["ath"] = b64(hashlib.sha256(token.encode()).digest())
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.key.as_dict(private=False)}
        return jws.serialize_compact(header, json.dumps(claims).encode(), self.key)


class DpopAuth(httpx.Auth):
    """Sends a DPoP-bound token with a fresh proof on every request."""

    def __init__(self, token: str, key: DpopKey) -> None:
        self.token = token
        self.key = key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"DPoP {self.token}"
        request.headers["DPoP"] = self.key.proof(request.method, str(request.url), self.token)
        yield request


async def get_token(
    provider: OidcProvider, resource: str, scope: str = "mcp:tools", dpop: DpopKey | None = None
) -> dict[str, Any]:
    """A client-credentials token from the provider for ``resource`` (RFC 8707)."""
    headers = {}
    if dpop is not None:
        headers["DPoP"] = dpop.proof("POST", provider.token_endpoint)
    async with httpx.AsyncClient() as client:
        r = await client.post(
            provider.token_endpoint,
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(provider.client_id, provider.client_secret),
            headers=headers,
        )
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


@asynccontextmanager
async def protected_example(issuer: str) -> AsyncIterator[str]:
    """examples/protected_server.py as a child process; yields its MCP URL."""
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "protected_server.py"),
        "--port",
        str(port),
        "--issuer",
        issuer,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = await trio.lowlevel.open_process(command, stdout=subprocess.PIPE, env=env)
    try:
        assert process.stdout is not None
        with trio.fail_after(30):
            line = b""
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive_some(1)
                assert chunk, "the example exited"
                line += chunk
        assert line.decode().strip() == f"protected server on http://127.0.0.1:{port}/mcp"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        with trio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


async def post_call(url: str, headers: dict[str, str], tool: str = "echo") -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(
            url,
            json=modern_body(1, "tools/call", {"name": tool, "arguments": {"text": "hi"}}),
            headers={**modern_headers("tools/call", tool), **headers},
        )


async def test_the_example_accepts_oidc_provider_tokens_for_it_and_refuses_the_rest(
    oidc_provider: OidcProvider,
) -> None:
    with trio.fail_after(60):
        async with protected_example(oidc_provider.issuer) as url:
            metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            # Discovery: the 401 names the metadata, which names the issuer.
            r = await post_call(url, {})
            assert r.status_code == 401
            assert r.headers["www-authenticate"].startswith(
                f'Bearer scope="mcp:tools", resource_metadata="{metadata_url}"'
            )
            async with httpx.AsyncClient() as client:
                metadata = (await client.get(metadata_url)).json()
            assert metadata["resource"] == url
            assert metadata["authorization_servers"] == [oidc_provider.issuer]

            # The right token: accepted by trio_mcp's own client, in both eras.
            token = (await get_token(oidc_provider, url))["access_token"]
            for version in ("2026-07-28", "2025-11-25"):
                async with open_http_client(
                    url, auth=BearerAuth(token), protocol_version=version
                ) as mcp:
                    result = await mcp.call_tool("echo", {"text": "hi"})
                    assert result.content[0].text == "hi"  # type: ignore[union-attr]
                    who = await mcp.call_tool("whoami")
                    assert who.content[0].text == oidc_provider.client_id  # type: ignore[union-attr]

            # A token for another resource (audience): 401 invalid_token.
            elsewhere = (await get_token(oidc_provider, "http://127.0.0.1:1/mcp"))["access_token"]
            r = await post_call(url, {"authorization": f"Bearer {elsewhere}"})
            assert r.status_code == 401
            assert 'error="invalid_token"' in r.headers["www-authenticate"]
            with pytest.raises(McpError):
                async with open_http_client(url, auth=BearerAuth(elsewhere)) as mcp:
                    await mcp.call_tool("echo", {"text": "hi"})

            # A token without mcp:tools: 403 insufficient_scope naming it.
            weak = (await get_token(oidc_provider, url, scope="mcp:read"))["access_token"]
            r = await post_call(url, {"authorization": f"Bearer {weak}"})
            assert r.status_code == 403
            assert r.headers["www-authenticate"].startswith('Bearer error="insufficient_scope"')
            assert 'scope="mcp:tools"' in r.headers["www-authenticate"]


async def test_dpop_bound_tokens_from_oidc_provider(oidc_provider: OidcProvider) -> None:
    key = DpopKey()
    with trio.fail_after(60):
        async with protected_example(oidc_provider.issuer) as url:
            issued = await get_token(oidc_provider, url, dpop=key)
            assert issued["token_type"] == "DPoP"
            token = issued["access_token"]
            async with open_http_client(url, auth=DpopAuth(token, key)) as mcp:
                result = await mcp.call_tool("echo", {"text": "bound"})
                assert result.content[0].text == "bound"  # type: ignore[union-attr]
            # Without a proof, or as a plain bearer token, or with another key's proof: 401.
            r = await post_call(url, {"authorization": f"DPoP {token}"})
            assert (
                r.status_code == 401
                and 'DPoP error="invalid_dpop_proof"' in r.headers["www-authenticate"]
            )
            r = await post_call(url, {"authorization": f"Bearer {token}"})
            assert r.status_code == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]
            thief = DpopKey()
            r = await post_call(
                url, {"authorization": f"DPoP {token}", "dpop": thief.proof("POST", url, token)}
            )
            assert r.status_code == 401


async def test_a_rotated_signing_key_is_picked_up_from_the_jwks() -> None:
    """The provider restarts with a new signing key (the old one still published): the
    server fetches the key set again when a token names the new key."""
    old = private_jwks()
    port = free_port()
    server_port = free_port()
    resource = f"http://127.0.0.1:{server_port}/mcp"
    server = Server("rotating")

    @server.tool(scopes=["mcp:tools"])
    async def echo(text: str) -> str:
        return text

    with start_oidc_provider(port=port, jwks=old) as provider:
        verifier = JwtVerifier(provider.issuer, jwks_refresh_interval=0)
        auth = ProtectedResource(
            resource, verifier=verifier, authorization_servers=[provider.issuer]
        )
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                await nursery.start(partial(serve, server, "127.0.0.1", server_port, auth=auth))
                first = (await get_token(provider, resource))["access_token"]
                r = await post_call(resource, {"authorization": f"Bearer {first}"})
                assert r.status_code == 200, r.text
                nursery.cancel_scope.cancel()
    new = private_jwks()
    rotated = {"keys": new["keys"] + old["keys"]}
    with start_oidc_provider(port=port, jwks=rotated) as provider:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                await nursery.start(partial(serve, server, "127.0.0.1", server_port, auth=auth))
                second = (await get_token(provider, resource))["access_token"]
                new_kid = json.loads(_segment(second.split(".")[0]))["kid"]
                assert new_kid == new["keys"][1]["kid"]
                assert verifier.keys.statistics()["fetches"] == 1
                r = await post_call(resource, {"authorization": f"Bearer {second}"})
                assert r.status_code == 200, r.text
                assert verifier.keys.statistics()["fetches"] == 2
                r = await post_call(resource, {"authorization": f"Bearer {first}"})
                assert r.status_code == 200, r.text
                nursery.cancel_scope.cancel()


def _segment(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_opaque_tokens_checked_by_introspection_and_revocation_takes_effect_at_once(
    oidc_provider: OidcProvider,
) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/opaque/mcp"
    server = Server("introspecting")

    @server.tool(scopes=["mcp:tools"])
    async def echo(text: str) -> str:
        return text

    verifier = IntrospectionVerifier(
        oidc_provider.introspection_endpoint,
        client_id=oidc_provider.resource_server_id,
        client_secret=oidc_provider.resource_server_secret,
        issuer=oidc_provider.issuer,
    )
    auth = ProtectedResource(
        resource, verifier=verifier, authorization_servers=[oidc_provider.issuer]
    )
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(
                partial(serve, server, "127.0.0.1", port, auth=auth, path="/opaque/mcp")
            )
            token = (await get_token(oidc_provider, resource))["access_token"]
            assert token.count(".") == 0  # opaque
            r = await post_call(resource, {"authorization": f"Bearer {token}"})
            assert r.status_code == 200, r.text
            assert r.json()["result"]["content"][0]["text"] == "hi"
            elsewhere = (await get_token(oidc_provider, f"http://127.0.0.1:{port}/opaque/other"))[
                "access_token"
            ]
            r = await post_call(resource, {"authorization": f"Bearer {elsewhere}"})
            assert r.status_code == 401
            async with httpx.AsyncClient() as client:
                revoked = await client.post(
                    oidc_provider.revocation_endpoint,
                    data={"token": token},
                    auth=(oidc_provider.client_id, oidc_provider.client_secret),
                )
                assert revoked.status_code == 200
            r = await post_call(resource, {"authorization": f"Bearer {token}"})
            assert r.status_code == 401
            assert 'error="invalid_token"' in r.headers["www-authenticate"]
            nursery.cancel_scope.cancel()


async def test_a_user_token_from_the_authorization_code_flow_with_pkce(
    oidc_provider: OidcProvider,
) -> None:
    """What an interactive MCP client does (dynamic registration, PKCE, a resource
    indicator, a user logging in): the token it gets works at the server, whose principal
    is the user."""
    import base64
    from urllib.parse import parse_qs, urlencode, urlsplit

    from auth_support.oidc import act_as_user

    redirect_uri = "http://127.0.0.1:8765/callback"
    with trio.fail_after(60):
        async with protected_example(oidc_provider.issuer) as url, httpx.AsyncClient() as http:
            registration = await http.post(
                f"{oidc_provider.issuer}/reg",
                json={
                    "redirect_uris": [redirect_uri],
                    "application_type": "native",
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code"],
                    "response_types": ["code"],
                    "scope": "mcp:tools",
                },
            )
            assert registration.status_code == 201, registration.text
            client_id = registration.json()["client_id"]
            verifier = secrets.token_urlsafe(32)
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
            query = {
                "client_id": client_id,
                "response_type": "code",
                "redirect_uri": redirect_uri,
                "scope": "mcp:tools",
                "resource": url,
                "state": "s1",
                "code_challenge": challenge.rstrip(b"=").decode(),
                "code_challenge_method": "S256",
            }
            back = await act_as_user(
                oidc_provider.issuer, f"{oidc_provider.issuer}/auth?{urlencode(query)}", login="ada"
            )
            params = parse_qs(urlsplit(back).query)
            assert back.startswith(redirect_uri) and params["state"] == ["s1"]
            assert params["iss"] == [oidc_provider.issuer]
            token = await http.post(
                f"{oidc_provider.issuer}/token",
                data={
                    "grant_type": "authorization_code",
                    "code": params["code"][0],
                    "redirect_uri": redirect_uri,
                    "client_id": client_id,
                    "code_verifier": verifier,
                    "resource": url,
                },
            )
            assert token.status_code == 200, token.text
            access_token = token.json()["access_token"]
            async with open_http_client(url, auth=BearerAuth(access_token)) as mcp:
                who = await mcp.call_tool("whoami")
                assert who.content[0].text == "ada"  # type: ignore[union-attr]
