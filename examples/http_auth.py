"""Bearer tokens on Streamable HTTP: the client sends them through an ``httpx.Auth`` hook;
the server checks them in a small ASGI middleware around ``asgi_app``, served with
Hypercorn's Trio worker directly (``trio_mcp.http.serve`` takes no middleware). The
middleware puts the caller's name in the ASGI scope; ``asgi_app(principal=...)`` reads it
from there, and handlers see it as ``ctx.principal``.

Run it: ``python examples/http_auth.py``
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx
import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from trio_mcp import Context, McpError, Server
from trio_mcp.http import asgi_app, open_http_client

server = Server("vault")
TOKEN = "s3cret"
USERS = {TOKEN: "ann"}  # token -> who holds it


@server.tool()
async def whoami(ctx: Context) -> str:
    """Say who is asking (anyone who got past the middleware holds a token)."""
    return f"you are {ctx.principal}"


def require_bearer(app: Any, users: dict[str, str]) -> Any:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` of a known
    token get 401; the others go on with the token's user in ``scope["user"]``."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            authorization = dict(scope["headers"]).get(b"authorization", b"").decode()
            scheme, _, token = authorization.partition(" ")
            user = users.get(token) if scheme.lower() == "bearer" else None
            if user is None:
                headers = [(b"www-authenticate", b"Bearer"), (b"content-type", b"text/plain")]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": b"a bearer token is required"})
                return
            scope = {**scope, "user": user}
        await app(scope, receive, send)  # the lifespan, and authorized requests

    return guarded


class BearerAuth(httpx.Auth):
    """The client side: add the token to every HTTP request the client makes."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


async def main() -> None:
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    app = require_bearer(asgi_app(server, principal=lambda scope: scope.get("user")), USERS)
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(hypercorn_serve, app, config)
        url = binds[0] + "/mcp"

        async with open_http_client(url, auth=BearerAuth(TOKEN)) as client:
            result = await client.call_tool("whoami")
            print("with the token:", result.content[0].text)  # type: ignore[union-attr]

        try:
            async with open_http_client(url):
                pass
        except McpError as exc:
            print("without it: refused, HTTP status", exc.data["httpStatus"])

        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
