"""A fake world for the OAuth client's tests: an MCP server at ``http://mcp.test/mcp``
protected by an authorization server at ``http://as.test`` (a second one at
``http://as2.test``), served through ``httpx.MockTransport`` — no sockets, no clock.

Each knob is an attribute the test changes; every request is recorded in ``seen``.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import attrs
import httpx
import trio

MCP = "http://mcp.test/mcp"


@attrs.define
class World:
    issuers: list[str] = attrs.field(factory=lambda: ["http://as.test"])
    metadata_issuer: dict[str, str] = attrs.field(factory=dict)  # served issuer override
    pkce_methods: list[str] | None = attrs.field(factory=lambda: ["S256"])
    iss_supported: bool = True
    iss_in_callback: str | None = "correct"  # "correct", "wrong", "slash", None
    scopes_supported: list[str] | None = None
    challenge_scope: str | None = None
    always_forbid: bool = False  # 403 insufficient_scope to every token
    refresh_tokens: bool = False
    expires_in: int = 3600
    tamper_state: bool = False
    token_error: str | None = None
    prm_document: Any = None  # overrides the PRM JSON
    as_document: Any = None  # overrides the AS metadata JSON
    seen: list[httpx.Request] = attrs.field(factory=list)
    issued: dict[str, str] = attrs.field(factory=dict)  # access token -> issuer
    revoked: set[str] = attrs.field(factory=set)
    registrations: dict[str, list[str]] = attrs.field(factory=dict)  # issuer -> client ids
    challenges: dict[str, str] = attrs.field(factory=dict)  # state -> code_challenge
    stream_gate: trio.Event = attrs.field(factory=trio.Event)
    token_requests: int = 0
    refreshes: int = 0
    token_gate: trio.Event | None = None  # when set, the token endpoint waits for it
    counter: int = 0
    hold_get_headers: bool = False
    dpop: bool = False  # advertise ES256 proofs and bind tokens to them
    rs_nonce: str | None = None  # the MCP server requires this DPoP nonce
    proofs: list[dict[str, Any]] = attrs.field(factory=list)  # DPoP claims the MCP server saw

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def requests_to(self, path: str) -> list[httpx.Request]:
        return [r for r in self.seen if r.url.path == path]

    async def handle(self, request: httpx.Request) -> httpx.Response:
        # a copy: the flow sends the same request object again, changed
        self.seen.append(
            httpx.Request(request.method, request.url, headers=request.headers.copy(),
                          content=await request.aread())
        )  # fmt: skip
        url = request.url
        origin = f"{url.scheme}://{url.host}"
        if url.host == "mcp.test":
            return await self.mcp(request)
        if origin in self.issuers or origin == "http://as2.test":
            return await self.authorization_server(request, origin)
        return httpx.Response(404)

    # -- the MCP server -----------------------------------------------------------

    async def mcp(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/.well-known/oauth-protected-resource/mcp":
            document = self.prm_document or {
                "resource": MCP,
                "authorization_servers": self.issuers,
                **({"scopes_supported": self.scopes_supported} if self.scopes_supported else {}),
            }
            return httpx.Response(200, json=document)
        if path == "/redirect":
            return httpx.Response(302, headers={"Location": "http://other.test/elsewhere"})
        if path != "/mcp":
            return httpx.Response(404)
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        meta = 'resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"'
        if self.challenge_scope:
            meta += f', scope="{self.challenge_scope}"'
        if (
            token not in self.issued
            or token in self.revoked
            or self.issued[token] != self.issuers[0]
        ):
            return httpx.Response(401, headers={"WWW-Authenticate": f"Bearer {meta}"})
        if self.dpop:
            if scheme != "DPoP" or "DPoP" not in request.headers:
                return httpx.Response(401, headers={"WWW-Authenticate": f"DPoP {meta}"})
            claims = claims_of(request.headers["DPoP"])
            self.proofs.append(claims)
            if self.rs_nonce is not None and claims.get("nonce") != self.rs_nonce:
                return httpx.Response(
                    401,
                    headers={"WWW-Authenticate": 'DPoP error="use_dpop_nonce"',
                             "DPoP-Nonce": self.rs_nonce},
                )  # fmt: skip
        if self.always_forbid:
            return httpx.Response(
                403, headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", {meta}'}
            )
        if request.method == "GET":
            if self.hold_get_headers:  # a GET whose answer is long in coming
                await self.stream_gate.wait()
            return httpx.Response(200, stream=Gated(self.stream_gate))
        return httpx.Response(200, json={"ok": True})

    # -- the authorization server -------------------------------------------------

    async def authorization_server(self, request: httpx.Request, origin: str) -> httpx.Response:
        path = request.url.path
        if path == "/.well-known/oauth-authorization-server":
            document = self.as_document or {
                "issuer": self.metadata_issuer.get(origin, origin),
                "authorization_endpoint": origin + "/authorize",
                "token_endpoint": origin + "/token",
                "registration_endpoint": origin + "/register",
                "response_types_supported": ["code"],
                "authorization_response_iss_parameter_supported": self.iss_supported,
                **({"code_challenge_methods_supported": self.pkce_methods}
                   if self.pkce_methods is not None else {}),
                **({"scopes_supported": self.scopes_supported} if self.scopes_supported else {}),
                **({"dpop_signing_alg_values_supported": ["ES256"]} if self.dpop else {}),
            }  # fmt: skip
            return httpx.Response(200, json=document)
        if path == "/register":
            self.counter += 1
            client_id = f"{origin}-client-{self.counter}"
            self.registrations.setdefault(origin, []).append(client_id)
            return httpx.Response(201, json={"client_id": client_id})
        if path == "/authorize":
            query = dict(request.url.params)
            self.challenges[query["state"]] = query["code_challenge"]
            back = {"code": f"code-{query['state']}", "state": query["state"]}
            if self.tamper_state:
                back["state"] = "forged"
            iss = {"correct": origin, "wrong": "http://evil.test", "slash": origin + "/"}
            if self.iss_in_callback is not None:
                back["iss"] = iss[self.iss_in_callback]
            return httpx.Response(
                302, headers={"Location": query["redirect_uri"] + "?" + urlencode(back)}
            )
        if path == "/token":
            return await self.token(request, origin)
        return httpx.Response(404)

    async def token(self, request: httpx.Request, origin: str) -> httpx.Response:
        self.token_requests += 1
        if self.token_gate is not None:
            await self.token_gate.wait()
        form = dict(parse_qsl(request.content.decode()))
        if self.token_error is not None:
            return httpx.Response(400, json={"error": self.token_error})
        if form["grant_type"] == "authorization_code":
            state = form["code"].removeprefix("code-")
            verifier = form["code_verifier"].encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
            if digest.decode() != self.challenges.get(state):
                return httpx.Response(400, json={"error": "invalid_grant"})
        elif form["grant_type"] == "refresh_token":
            self.refreshes += 1
            if not form["refresh_token"].startswith("refresh-"):
                return httpx.Response(400, json={"error": "invalid_grant"})
        self.counter += 1
        token = f"token-{self.counter}"
        self.issued[token] = origin
        kind = "DPoP" if self.dpop and "DPoP" in request.headers else "Bearer"
        answer: dict[str, Any] = {"access_token": token, "token_type": kind,
                                  "expires_in": self.expires_in}  # fmt: skip
        if self.refresh_tokens:
            answer["refresh_token"] = f"refresh-{self.counter}"
        return httpx.Response(200, json=answer)


class Gated(httpx.AsyncByteStream):
    """A response body that sends one chunk, then waits for ``gate`` before ending."""

    def __init__(self, gate: trio.Event) -> None:
        self.gate = gate

    async def __aiter__(self):  # type: ignore[override]
        yield b"data: open\n\n"
        await self.gate.wait()


def callback_handler(world: World) -> Any:
    """A redirect handler that asks the fake authorization endpoint and returns its
    redirect (as :func:`trio_mcp.auth.fetch_redirect` does over the network)."""

    async def handle(authorization_url: str) -> str:
        response = await world.handle(httpx.Request("GET", authorization_url))
        return response.headers["Location"]

    return handle


def claims_of(jwt: str) -> dict[str, Any]:
    """The claims of a JWT, unverified (the tests look at what the client put in)."""
    import orjson

    payload = jwt.split(".")[1]
    return orjson.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def query_of(request: httpx.Request) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(str(request.url)).query))


def form_of(request: httpx.Request) -> dict[str, str]:
    return dict(parse_qsl(request.content.decode()))
