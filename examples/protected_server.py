"""An MCP server that is an OAuth 2.1 protected resource: it serves ``echo(text)`` at
``http://127.0.0.1:PORT/mcp`` and accepts only access tokens that the authorization server
at ``--issuer`` issued for that URL.

Run it::

    python examples/protected_server.py --port 8000 --issuer https://auth.example.com

What it does:

- discovers the issuer's metadata (``/.well-known/oauth-authorization-server`` or
  ``/.well-known/openid-configuration``) and, from it, its signing keys (cached, fetched
  again when a token names a new key);
- accepts JWT access tokens (RFC 9068) signed with an asymmetric algorithm, whose ``iss``
  is the issuer, whose audience (``aud``) is ``http://127.0.0.1:PORT/mcp``, and that have
  not expired; DPoP-bound tokens too, with their proofs;
- requires the scope ``mcp:tools`` to call a tool (``403`` with
  ``WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp:tools", ...``
  without it);
- answers requests without a usable token with ``401`` and
  ``WWW-Authenticate: Bearer resource_metadata="...", scope="mcp:tools"``, pointing at its
  Protected Resource Metadata (RFC 9728), served at
  ``/.well-known/oauth-protected-resource/mcp`` (and at the root well-known path).

A client gets a token from the issuer for ``resource=http://127.0.0.1:PORT/mcp`` (RFC 8707)
and sends it as ``Authorization: Bearer <token>``. ``echo`` answers with the text, and
``whoami`` with the token's subject (the request's principal).
"""

from __future__ import annotations

import argparse
from functools import partial

import trio

from trio_mcp import Context, Server
from trio_mcp.auth import DpopVerifier, ProtectedResource
from trio_mcp.http import serve

server = Server("protected-echo")


@server.tool(scopes=["mcp:tools"])
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool(scopes=["mcp:tools"])
async def whoami(ctx: Context) -> str:
    """Say who the access token speaks for."""
    return f"{ctx.principal}"


def protect(port: int, issuer: str) -> ProtectedResource:
    """The server's authorization: tokens of ``issuer`` for ``http://127.0.0.1:PORT/mcp``."""
    return ProtectedResource.for_issuer(
        f"http://127.0.0.1:{port}/mcp",
        issuer,
        scopes_supported=["mcp:tools"],
        dpop=DpopVerifier(),
        resource_name="Protected echo",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer", required=True, help="the authorization server's issuer URL")
    args = parser.parse_args()

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            auth = protect(args.port, args.issuer)
            await nursery.start(partial(serve, server, "127.0.0.1", args.port, auth=auth))
            print(f"protected server on http://127.0.0.1:{args.port}/mcp", flush=True)

    trio.run(run)


if __name__ == "__main__":
    main()
