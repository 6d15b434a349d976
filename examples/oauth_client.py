"""OAuth on the client side: ``trio_mcp.auth.OAuth`` finds the authorization server,
registers, gets a token and retries, all inside httpx's auth hook.

The server here is a toy: one ASGI app that is both an MCP server (behind a small token
check) and an authorization server that approves every request at once and issues
random tokens. It verifies no DPoP proof; it exists so that the client side can run
end to end on one machine. Run it: ``python examples/oauth_client.py``
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import parse_qsl, urlencode

import orjson
import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from trio_mcp import Context, Server
from trio_mcp.auth import AuthorizationCode, ClientCredentials, ClientInfo, OAuth, fetch_redirect
from trio_mcp.http import asgi_app, open_http_client

server = Server("vault")
TOKENS: dict[str, str] = {}  # access token -> who holds it


@server.tool()
async def whoami(ctx: Context) -> str:
    """Say who is asking."""
    return f"you are {ctx.principal}"


def protected(app: Any, base: list[str]) -> Any:
    """The MCP app behind a token check, plus the toy authorization server's routes."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        path, origin = scope["path"], base[0]
        if path == "/.well-known/oauth-protected-resource/mcp":
            return await reply(send, 200, {"resource": origin + "/mcp",
                                           "authorization_servers": [origin]})  # fmt: skip
        if path == "/.well-known/oauth-authorization-server":
            return await reply(send, 200, {
                "issuer": origin, "authorization_endpoint": origin + "/authorize",
                "token_endpoint": origin + "/token", "registration_endpoint": origin + "/register",
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": True,
            })  # fmt: skip
        if path == "/register":
            return await reply(send, 201, {"client_id": "client-" + secrets.token_hex(4)})
        if path == "/authorize":  # the user approves at once
            query = dict(parse_qsl(scope["query_string"].decode()))
            back = {"code": "approved", "state": query["state"], "iss": origin}
            location = query["redirect_uri"] + "?" + urlencode(back)
            return await reply(send, 302, {}, [(b"location", location.encode())])
        if path == "/token":
            form = dict(parse_qsl((await receive())["body"].decode()))
            token = secrets.token_urlsafe(16)
            TOKENS[token] = form.get("client_id", "a confidential client")
            kind = "DPoP" if b"dpop" in dict(scope["headers"]) else "Bearer"  # (proof unchecked)
            return await reply(send, 200, {"access_token": token, "token_type": kind})
        authorization = dict(scope["headers"]).get(b"authorization", b"").decode()
        scheme, _, token = authorization.partition(" ")
        if token not in TOKENS:
            challenge = (
                f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
            )
            return await reply(send, 401, {}, [(b"www-authenticate", challenge.encode())])
        await app({**scope, "user": f"{TOKENS[token]} ({scheme})"}, receive, send)

    return guarded


async def reply(send: Any, status: int, body: Any, headers: list[Any] | None = None) -> None:
    head = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": orjson.dumps(body)})


async def main() -> None:
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    base: list[str] = []
    app = protected(asgi_app(server, principal=lambda scope: scope.get("user")), base)
    async with trio.open_nursery() as nursery:
        base.extend(await nursery.start(hypercorn_serve, app, config))
        url = base[0] + "/mcp"

        # A user's client: the authorization code flow. fetch_redirect() stands in for
        # the browser; a real program uses open_loopback_redirect().
        login = AuthorizationCode(fetch_redirect(), "http://127.0.0.1:8123/callback")
        async with open_http_client(url, auth=OAuth(login)) as client:
            result = await client.call_tool("whoami")
            print("code flow:", result.content[0].text)  # type: ignore[union-attr]

        # A program acting on its own behalf: client credentials.
        robot = ClientCredentials(ClientInfo("robot", client_secret="s3cret"))
        async with open_http_client(url, auth=OAuth(robot)) as client:
            result = await client.call_tool("whoami")
            print("client credentials:", result.content[0].text)  # type: ignore[union-attr]

        # Sender-constrained tokens: a DPoP proof with the token request and every request.
        async with open_http_client(url, auth=OAuth(login, dpop=True)) as client:
            result = await client.call_tool("whoami")
            print("dpop:", result.content[0].text)  # type: ignore[union-attr]

        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
