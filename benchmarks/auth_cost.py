"""What authorization costs a request: microseconds per ``ProtectedResource.authenticate()``
for an RS256 and an ES256 bearer token and a DPoP-bound (ES256) token with a fresh proof, in
this process, with no HTTP around it.

Each kind is measured twice: the same token on every call (what a client does between two
refreshes: the verified-token cache answers) and a token not seen before on every call (the
full check: parsing, claims, key lookup, signature). DPoP proofs are fresh on every call
either way (RFC 9449: a proof is never reused). Tokens and proofs are made before the clock
starts; the figure is the median of ``--rounds`` rounds of ``--calls`` calls.

    python benchmarks/auth_cost.py [--calls 2000] [--rounds 5]

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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trio.run(main, args.calls, args.rounds)
