"""OAuth over a WebSocket: ``serve_websocket(..., auth=ProtectedResource(...))`` checks the
opening handshake's access token; ``open_websocket_client(url, auth=OAuth(...))`` gets one
when the handshake is refused, and sends it with the next handshake.

The authorization server here is a toy (an ASGI app on Hypercorn that gives any client
a random token for what it asks); it also serves the WebSocket server's Protected
Resource Metadata, which a WebSocket server cannot (it answers handshakes only). Run it:
``python examples/websocket_auth.py``
"""

from __future__ import annotations

import secrets
import socket
import time
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

import orjson
import trio
import trio_websocket
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from trio_mcp import Context, McpError, Server
from trio_mcp.auth import (
    AccessToken,
    ClientCredentials,
    ClientInfo,
    InvalidToken,
    OAuth,
    ProtectedResource,
)
from trio_mcp.websocket import open_websocket_client, serve_websocket

server = Server("ws-vault")


@server.tool(scopes=["mcp:tools"])
async def whoami(ctx: Context) -> str:
    """Say who the token speaks for."""
    return f"you are {ctx.principal}"


@server.tool(scopes=["mcp:admin"])
async def shutdown() -> str:
    """Needs a scope the robot does not ask for."""
    return "shutting down"


class ToyAuthorizationServer:
    """Issues tokens (client credentials, any client) and checks them (a TokenVerifier);
    serves its metadata and the resource's."""

    def __init__(self) -> None:
        self.issuer = ""
        self.resource: ProtectedResource | None = None
        self.issued: dict[str, AccessToken] = {}

    async def verify(self, token: str) -> AccessToken:
        try:
            return self.issued[token]
        except KeyError:
            raise InvalidToken("unknown token") from None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            return await send({"type": "lifespan.shutdown.complete"})
        path = scope["path"]
        if self.resource is not None and path in self.resource.metadata_paths:
            return await reply(send, 200, self.resource.metadata.to_json())
        if path == "/.well-known/oauth-authorization-server":
            return await reply(send, 200, {"issuer": self.issuer,
                                           "token_endpoint": self.issuer + "/token"})  # fmt: skip
        if path == "/token":
            form = dict(parse_qsl((await receive())["body"].decode()))
            token = secrets.token_urlsafe(16)
            self.issued[token] = AccessToken(
                subject="robot",
                scopes=frozenset(form.get("scope", "").split()),
                audience=(form["resource"],),
                expires_at=time.time() + 3600,
            )
            return await reply(send, 200, {"access_token": token, "token_type": "Bearer"})
        await reply(send, 404, {})


async def reply(send: Any, status: int, body: Any) -> None:
    head = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": orjson.dumps(body)})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def main() -> None:
    toy = ToyAuthorizationServer()
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    async with trio.open_nursery() as nursery:
        toy.issuer = (await nursery.start(hypercorn_serve, toy, config))[0]
        port = free_port()

        # The server: tokens for its ws URL's http equivalent, checked at the handshake.
        auth = ProtectedResource(
            f"http://127.0.0.1:{port}/mcp",
            verifier=toy,
            authorization_servers=[toy.issuer],
            scopes_supported=["mcp:tools"],
            metadata_url=toy.issuer + "/.well-known/oauth-protected-resource/mcp",
        )
        toy.resource = auth
        await nursery.start(partial(serve_websocket, server, "127.0.0.1", port, auth=auth))
        url = f"ws://127.0.0.1:{port}/mcp"

        try:
            async with open_websocket_client(url):
                pass
        except trio_websocket.ConnectionRejected as rejected:
            print("without a token: refused, HTTP status", rejected.status_code)

        # The client: the OAuth flow runs over the handshake (discovery, token, retry).
        robot = ClientCredentials(ClientInfo("robot", client_secret="s3cret"))
        async with open_websocket_client(url, auth=OAuth(robot)) as client:
            result = await client.call_tool("whoami")
            print("over a WebSocket:", result.content[0].text)  # type: ignore[union-attr]
            try:
                await client.call_tool("shutdown")
            except McpError as refused:
                print(f"shutdown: {refused.error.code} {refused.error.message}")

        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
