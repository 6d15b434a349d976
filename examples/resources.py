"""Resources: data a client can read by URI. Static ones, families named by URI
templates (their variables arrive typed), binary data, and a directory of files
that never serves anything outside it.

Run it: ``python examples/resources.py``
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import trio

from trio_mcp import McpError, Server
from trio_mcp.testing import connect
from trio_mcp.types import BlobResourceContents, TextResourceContents

server = Server("files")


@server.resource("config://app", mime_type="application/toml")
def config() -> str:
    """The application's configuration."""
    return "debug = true\n"


@server.resource("users://{user_id}/orders/{page}")
def orders(user_id: str, page: int) -> dict[str, object]:
    """One page of a user's orders (as JSON)."""
    return {"user": user_id, "page": page, "orders": [f"order-{page}-1", f"order-{page}-2"]}


@server.resource("image://logo", mime_type="image/png")
async def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n..."


def show(contents: TextResourceContents | BlobResourceContents) -> str:
    if isinstance(contents, TextResourceContents):
        return f"{contents.uri} ({contents.mime_type}): {contents.text!r}"
    return f"{contents.uri} ({contents.mime_type}): {len(contents.decode())} bytes"


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        (root / "README.md").write_text("# Project\n")
        (Path(tmp) / "secret.txt").write_text("outside the root")
        server.add_directory(root, uri_prefix="project://")

        async with connect(server) as client:
            for resource in await client.list_resources():
                print("resource", resource.uri, resource.mime_type)
            for template in await client.list_resource_templates():
                print("template", template.uri_template)
            for uri in [
                "config://app",
                "users://ann/orders/2",
                "image://logo",
                "project://README.md",
            ]:
                result = await client.read_resource(uri)
                print("read", show(result.contents[0]))
            for uri in ["config://missing", "project://../secret.txt"]:
                try:
                    await client.read_resource(uri)
                except McpError as exc:
                    print(f"read {uri} -> error {exc.code}: {exc.message}")


if __name__ == "__main__":
    trio.run(main)
