"""Server cards (SEP-2127): a server serves its card beside its MCP endpoint and lists it
in its origin's catalog; a client finds the card through the catalog, reads it, and a
host connects to the server it describes.

Run it: ``python examples/server_cards.py`` (it serves on a free port of 127.0.0.1, and
stops when done).
"""

from __future__ import annotations

from functools import partial

import orjson
import trio

from trio_mcp import Server
from trio_mcp.cards import (
    CardError,
    Repository,
    config_from_card,
    fetch_catalog,
    fetch_server_card,
    parse_card,
    server_card,
)
from trio_mcp.host import allow_all, open_host
from trio_mcp.http import serve

server = Server(
    "weather",
    version="2.1.0",
    title="Weather",
    description="Forecasts for any city.",
)


@server.tool()
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    return f"{city}: sunny"


# The card: who the server is; its capabilities go in _meta. Build it once the tools are
# registered. Without remotes, the app fills in its own endpoints.
card = server_card(
    server,
    name="com.example/weather",
    repository=Repository(url="https://github.com/example/weather", source="github"),
)


async def main() -> None:
    async with trio.open_nursery() as nursery:
        # card_catalog=True: this app owns the origin, so it also serves
        # /.well-known/mcp/catalog.json, listing the card.
        port = await nursery.start(partial(serve, server, port=0, card=card, card_catalog=True))
        site = f"http://127.0.0.1:{port}"

        with trio.fail_after(10):
            catalog = await fetch_catalog(site)
            for entry in catalog.entries:
                print(f"catalog entry {entry.display_name}: {entry.url}")
            found = await fetch_server_card(catalog.entries[0].url)
        print(f"card {found.name} {found.version}: {found.description}")
        for remote in found.remotes or ():
            print(f"  {remote.type} at {remote.url.removeprefix(site)}")

        # A host starts from the card: its Streamable HTTP remote is the server to reach.
        config = config_from_card(found)
        async with open_host({"weather": config}, consent=allow_all()) as host:
            with trio.fail_after(10):
                await host.wait_settled()
                result = await host.call_tool("weather__forecast", {"city": "Oslo"})
            print(f"through the card -> {result.content[0].text}")  # type: ignore[union-attr]
        nursery.cancel_scope.cancel()

    # A card is a closed document: a member its schema lacks is refused, and named.
    wire = orjson.loads(
        b'{"$schema": "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json",'
        b' "name": "com.example/weather", "version": "1.0", "description": "d", "packages": []}'
    )
    try:
        parse_card(wire)
    except CardError as error:
        print(f"refused: {error}")


if __name__ == "__main__":
    trio.run(main)
