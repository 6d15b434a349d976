"""MCP Apps (the extension io.modelcontextprotocol/ui) on both sides: a server offers a view
(an HTML page its tools' results are rendered in) and links tools to it; a host that
renders views declares the extension, hands the model only the tools it may call, reads a
tool's view from that tool's own server, builds the iframe's policies from it, and carries
the view's own tool calls back to that server.

Run it: ``python examples/apps.py``
"""

from __future__ import annotations

import trio

from trio_mcp import Context, McpError, Server
from trio_mcp.apps import AppCsp, ToolUi, client_extension, supports_apps
from trio_mcp.client import ClientOptions
from trio_mcp.host import InProcessServerConfig, ServerPolicy, open_host

server = Server("weather", version="1.0.0")

DASHBOARD = """<!DOCTYPE html>
<html><body><div id="forecast"></div>
<script>/* talks to the host over postMessage: ui/initialize, tools/call ... */</script>
</body></html>"""


# The view: a ui:// resource of type text/html;profile=mcp-app. It may load data from
# one origin; hosts allow nothing else.
@server.app(
    "ui://weather/dashboard",
    csp=AppCsp(connect_domains=["https://api.weather.example"]),
    prefers_border=True,
)
def dashboard() -> str:
    """Interactive weather dashboard."""
    return DASHBOARD


# A tool the model calls; hosts that render views show its result in the dashboard.
@server.tool(ui="ui://weather/dashboard")
def forecast(city: str, ctx: Context) -> str:
    """The weather forecast for a city."""
    # Every result keeps a text form, for clients that do not render views.
    rendered = "rendered in the dashboard" if supports_apps(ctx.client_capabilities) else "text"
    return f"{city}: sunny, 21 degrees ({rendered})"


# A tool only the view calls (its refresh button): never listed to the model.
@server.tool(ui=ToolUi("ui://weather/dashboard", visibility=["app"]))
def refresh(city: str) -> str:
    """Fresh data for the dashboard."""
    return f"{city}: 22 degrees at 12:05"


async def main() -> None:
    servers = {
        "weather": InProcessServerConfig(
            server=server, policy=ServerPolicy(trusted_tools=["forecast", "refresh"])
        )
    }
    options = ClientOptions(extensions=client_extension())
    async with open_host(servers, client_options=options) as host:
        await host.wait_settled()
        print("tools for the model:", [spec["name"] for spec in host.tool_definitions()])

        result = await host.call_tool("weather__forecast", {"city": "Oslo"})
        print("model calls forecast ->", result.content[0].text)  # type: ignore[union-attr]

        view = await host.view("weather__forecast")
        assert view is not None
        print("view", view.uri, "from", view.server, f"({len(view.html)} characters)")
        print("iframe CSP:", view.content_security_policy)

        # The view's refresh button: its call goes to the view's server only.
        fresh = await host.call_tool_from_view(view, "refresh", {"city": "Oslo"})
        print("view calls refresh ->", fresh.content[0].text)  # type: ignore[union-attr]

        try:
            await host.call_tool("weather__refresh", {"city": "Oslo"})
        except McpError as error:
            print("model calls refresh -> refused:", error)


if __name__ == "__main__":
    trio.run(main)
