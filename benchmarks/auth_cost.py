"""What authorization costs a request: microseconds per ``ProtectedResource.authenticate()``
for an RS256 and an ES256 bearer token and a DPoP-bound (ES256) token with a fresh proof, in
this process, with no HTTP around it.

Each kind is measured twice: the same token on every call (what a client does between two
refreshes: the verified-token cache answers) and a token not seen before on every call (the
full check: parsing, claims, key lookup, signature). DPoP proofs are fresh on every call
either way (RFC 9449: a proof is never reused). Tokens and proofs are made before the clock
starts; the figure is the median of ``--rounds`` rounds of ``--calls`` calls.

    python benchmarks/auth_cost.py [--calls 2000] [--rounds 5]
    python benchmarks/auth_cost.py --through-app [--calls 3000] [--rounds 3]

``--through-app`` measures instead what authorization adds to a whole call through the
ASGI app: a stateless ``tools/call`` of a plain-function tool with ``scopes=``, called in
memory (no socket, no HTTP parsing), without ``auth=`` and with each kind of token (the
same token on every call, a fresh DPoP proof on each), in interleaved rounds; the median
CPU µs per call of each, and what each kind adds.

To compare checkouts, run it with ``PYTHONPATH=<checkout>``. Server CPU per call over HTTP
is measured with ``../shared/bench/load_http.py`` against ``examples/protected_server.py``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import secrets
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx
import trio
from joserfc import jwk, jws

from trio_mcp.auth import DpopVerifier, JwtVerifier, ProtectedResource

ISSUER = "https://as.example"
RESOURCE = "http://127.0.0.1:8000/mcp"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Issuer:
    """An RSA and an EC signing key, their key set behind an ``httpx.MockTransport``."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {
            "RS256": jwk.RSAKey.generate_key(2048, auto_kid=True),
            "ES256": jwk.ECKey.generate_key("P-256", auto_kid=True),
        }

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/jwks":
            keys = [k.as_dict(private=False) | {"kid": k.kid} for k in self.keys.values()]
            return httpx.Response(200, json={"keys": keys})
        return httpx.Response(404)

    def token(self, alg: str, **claims: Any) -> str:
        key = self.keys[alg]
        now = int(time.time())
        body = {
            "iss": ISSUER,
            "sub": "alice",
            "aud": RESOURCE,
            "scope": "mcp:tools",
            "iat": now,
            "exp": now + 3600,
            "client_id": "bench",
            "jti": secrets.token_urlsafe(8),
            **claims,
        }
        header = {"alg": alg, "typ": "at+jwt", "kid": key.kid}
        return jws.serialize_compact(header, json.dumps(body).encode(), key)


class Client:
    """A DPoP client key making proofs."""

    def __init__(self) -> None:
        self.key = jwk.ECKey.generate_key("P-256")
        self.public = self.key.as_dict(private=False)

    def proof(self, token: str) -> str:
        claims = {
            "jti": secrets.token_urlsafe(12),
            "htm": "POST",
            "htu": RESOURCE,
            "iat": int(time.time()),
            "ath": _b64(hashlib.sha256(token.encode()).digest()),
        }
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.public}
        return jws.serialize_compact(header, json.dumps(claims).encode(), self.key)


Headers = list[tuple[bytes, bytes]]


async def per_call_us(resource: ProtectedResource, requests: list[Headers], rounds: int) -> float:
    """The median over ``rounds`` of the mean CPU µs (this process's CPU time, so that other
    processes on a busy machine weigh less) per ``authenticate()`` of ``requests``."""
    figures = []
    per_round = len(requests) // rounds
    for r in range(rounds):
        batch = requests[r * per_round : (r + 1) * per_round]
        start = time.process_time()
        for headers in batch:
            await resource.authenticate(method="POST", url=RESOURCE, headers=headers)
        figures.append((time.process_time() - start) / len(batch) * 1e6)
    return statistics.median(figures)


async def main(calls: int, rounds: int) -> None:
    issuer = Issuer()
    client = Client()
    total = calls * rounds
    async with httpx.AsyncClient(transport=httpx.MockTransport(issuer.handle)) as http:
        resource = ProtectedResource(
            RESOURCE,
            verifier=JwtVerifier(ISSUER, jwks_uri=f"{ISSUER}/jwks", http_client=http),
            authorization_servers=[ISSUER],
            dpop=DpopVerifier(replay_cache_size=2 * total + 10),
        )

        def bearer(token: str) -> Headers:
            return [(b"authorization", f"Bearer {token}".encode())]

        def dpop(token: str) -> Headers:
            return [
                (b"authorization", f"DPoP {token}".encode()),
                (b"dpop", client.proof(token).encode()),
            ]

        jkt = client.key.thumbprint()
        kinds: dict[str, tuple[Callable[[], str], Callable[[str], Headers]]] = {
            "RS256 bearer": (lambda: issuer.token("RS256"), bearer),
            "ES256 bearer": (lambda: issuer.token("ES256"), bearer),
            "ES256 DPoP": (lambda: issuer.token("ES256", cnf={"jkt": jkt}), dpop),
        }
        print(f"CPU µs per authenticate(), median of {rounds} rounds of {calls} calls")
        print(f"  {'token':14}{'same token':>12}{'new token':>12}")
        for name, (mint, headers_for) in kinds.items():
            same = mint()
            await resource.authenticate(method="POST", url=RESOURCE, headers=headers_for(same))
            repeated = await per_call_us(
                resource, [headers_for(same) for _ in range(total)], rounds
            )
            fresh = await per_call_us(resource, [headers_for(mint()) for _ in range(total)], rounds)
            print(f"  {name:14}{repeated:12.1f}{fresh:12.1f}")


# -- through the app ------------------------------------------------------------------------

_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
_HEADERS: Headers = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"echo"),
]


async def _call(app: Any, headers: Headers, id: int) -> None:
    """One ``tools/call`` through ``app``, in memory; fails unless it is answered 200."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hello"}, "_meta": _META},
        }
    ).encode()
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "headers": [*_HEADERS, *headers],
    }
    await app(scope, receive, send)
    if sent[0]["status"] != 200:
        raise RuntimeError(f"the call was refused: {sent}")


async def app_per_call_us(kind: str, calls: int) -> float:
    """CPU µs per call through a fresh app: ``kind`` is ``none`` (no ``auth=``), ``RS256``,
    ``ES256`` (bearer) or ``DPoP`` (ES256-bound, a fresh proof per call)."""
    from trio_mcp import Server
    from trio_mcp.http import open_asgi_app

    server = Server("auth-cost")

    @server.tool(scopes=["mcp:tools"])
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    issuer = Issuer()
    client = Client()
    warmup = 50
    async with httpx.AsyncClient(transport=httpx.MockTransport(issuer.handle)) as http:
        auth = None
        if kind != "none":
            auth = ProtectedResource(
                RESOURCE,
                verifier=JwtVerifier(ISSUER, jwks_uri=f"{ISSUER}/jwks", http_client=http),
                authorization_servers=[ISSUER],
                dpop=DpopVerifier(replay_cache_size=2 * (calls + warmup)),
            )
        if kind == "none":
            requests: list[Headers] = [[]] * (calls + warmup)
        elif kind == "DPoP":
            token = issuer.token("ES256", cnf={"jkt": client.key.thumbprint()})
            requests = [
                [
                    (b"authorization", f"DPoP {token}".encode()),
                    (b"dpop", client.proof(token).encode()),
                ]
                for _ in range(calls + warmup)
            ]
        else:
            token = issuer.token(kind)
            requests = [[(b"authorization", f"Bearer {token}".encode())]] * (calls + warmup)
        async with open_asgi_app(server, auth=auth) as app:
            for i in range(warmup):
                await _call(app, requests[i], i)
            start = time.process_time()
            for i in range(warmup, warmup + calls):
                await _call(app, requests[i], i)
            return (time.process_time() - start) / calls * 1e6


async def through_app(calls: int, rounds: int) -> None:
    kinds = ("none", "RS256", "ES256", "DPoP")
    figures: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(rounds):
        for kind in kinds:
            figures[kind].append(await app_per_call_us(kind, calls))
    base = statistics.median(figures["none"])
    print(f"CPU µs per call through the ASGI app, median of {rounds} rounds of {calls} calls")
    print(f"  {'auth':10}{'per call':>10}{'added':>10}")
    for kind in kinds:
        median = statistics.median(figures[kind])
        print(f"  {kind:10}{median:10.1f}{median - base:10.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--through-app", action="store_true", help="what auth adds to a call through the app"
    )
    args = parser.parse_args()
    if args.through_app:
        trio.run(through_app, args.calls, args.rounds)
    else:
        trio.run(main, args.calls, args.rounds)
