"""A host: several MCP servers behind one namespaced view. One runs as a child process over
stdio, one is reached over HTTP, one cannot start at all; the stdio one is killed and
comes back, and a subscription to one of its resources comes back with it.

Run it: ``python examples/host.py``
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import trio
from echo_server import server as echo_server

from trio_mcp.host import Host, allow_all, open_host, parse_config
from trio_mcp.http import serve
from trio_mcp.transports import ProcessMessageStream

GLOSSARY = Path(__file__).with_name("first_server.py")


def config(echo_url: str) -> dict[str, object]:
    """The usual JSON shape of MCP client configurations."""
    return {
        "mcpServers": {
            "glossary": {"command": sys.executable, "args": [str(GLOSSARY)]},
            "echo": {"url": echo_url},
            "broken": {"command": "no-such-mcp-server"},
        }
    }


def show(host: Host) -> None:
    for name, state in host.servers.items():
        error = f" ({type(state.error).__name__})" if state.error else ""
        print(f"  {name}: {state.status}{error}")


async def main() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve, echo_server, "127.0.0.1", 0))
        servers = parse_config(config(f"http://127.0.0.1:{port}/mcp"))

        async with open_host(
            servers, consent=allow_all(), backoff_initial=0.1, backoff_max=2.0
        ) as host:
            await host.wait_settled()
            show(host)
            print("tools:", sorted(host.tools()))
            result = await host.call_tool("glossary__define", {"term": "nursery"})
            print("glossary__define ->", result.content[0].text)  # type: ignore[union-attr]
            result = await host.call_tool("echo__echo", {"text": "hi"})
            print("echo__echo ->", result.content[0].text)  # type: ignore[union-attr]
            print("resources:", sorted(host.resources()))

            async with host.listen(resource_uris=["glossary://terms"]) as updates:
                stream = host.client("glossary").session.stream
                assert isinstance(stream, ProcessMessageStream)
                stream.process.kill()
                glossary = host.servers["glossary"]
                while glossary.restarts == 0 or glossary.status != "connected":
                    await host.wait_changed()
                print(f"glossary killed, then restarted {glossary.restarts} time(s):")
                show(host)
                async for change in updates:
                    print(f"{change.uri} updated: subscribed again after the restart")
                    break
        print("host closed: every server shut down")
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
