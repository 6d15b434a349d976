"""The MCP Apps extension (SEP-1865): views served, linked, read, checked and rendered by
a host under the visibility rules, in both eras."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from trio_mcp import Context, McpError, Server
from trio_mcp.apps import (
    APP_MIME_TYPE,
    APPS_EXTENSION,
    MAX_APP_BYTES,
    AppCsp,
    AppFormatError,
    AppMeta,
    ToolUi,
    client_extension,
    read_view,
    supports_apps,
    tool_ui,
    view_from_result,
)
from trio_mcp.host import InProcessServerConfig, ServerPolicy, open_host
from trio_mcp.testing import connect
from trio_mcp.types import BlobResourceContents, ReadResourceResult, TextResourceContents

ERAS = ["2026-07-28", "2025-11-25", "2024-11-05"]
PAGE = "<!DOCTYPE html><html><body>weather</body></html>"


def weather_server(name: str = "weather") -> Server:
    server = Server(name)

    @server.app(
        "ui://weather/dashboard",
        csp=AppCsp(connect_domains=["https://api.weather.example"]),
        permissions=["geolocation"],
        prefers_border=True,
    )
    def dashboard() -> str:
        """The weather dashboard."""
        return PAGE

    @server.tool(ui="ui://weather/dashboard")
    def forecast(city: str) -> str:
        """Forecast for a city."""
        return f"sunny in {city}"

    @server.tool(ui=ToolUi("ui://weather/dashboard", visibility=["app"]))
    def refresh(city: str) -> str:
        """Refresh the dashboard's data."""
        return f"refreshed {city}"

    @server.tool(ui=ToolUi(visibility=["model"]))
    def advise(city: str) -> str:
        """Advice for the model only."""
        return f"take an umbrella in {city}"

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_tools_list_their_view_and_the_view_reads_with_its_type_and_meta(
    version: str,
) -> None:
    async with connect(weather_server(), protocol_version=version) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["forecast"].meta == {
            "ui": {"resourceUri": "ui://weather/dashboard", "visibility": ["model", "app"]}
        }
        assert tool_ui(tools["refresh"]) == ToolUi("ui://weather/dashboard", ("app",))
        assert tool_ui(tools["advise"]) == ToolUi(None, ("model",))
        listed = {r.uri: r for r in await client.list_resources()}
        assert listed["ui://weather/dashboard"].mime_type == APP_MIME_TYPE
        assert listed["ui://weather/dashboard"].meta is not None
        view = await read_view(client, "ui://weather/dashboard")
        assert view.html == PAGE
        assert view.meta == AppMeta(
            csp=AppCsp(connect_domains=("https://api.weather.example",)),
            permissions=frozenset({"geolocation"}),
            prefers_border=True,
        )
        assert view.permission_policy == "geolocation"
        assert "connect-src 'self' https://api.weather.example" in view.content_security_policy
        extensions = client.server_capabilities.extensions
        if version >= "2026-07-28":
            assert extensions is not None and APPS_EXTENSION in extensions


@pytest.mark.parametrize("version", ERAS)
async def test_a_server_learns_whether_its_client_renders_views_in_both_eras(
    version: str,
) -> None:
    server = Server("probe")
    seen: list[bool] = []

    @server.tool
    def probe(ctx: Context) -> str:
        seen.append(supports_apps(ctx.client_capabilities))
        return "ok"

    async with connect(server, protocol_version=version) as plain:
        await plain.call_tool("probe", {})
    async with connect(server, protocol_version=version, extensions=client_extension()) as apps:
        await apps.call_tool("probe", {})
        assert apps.capabilities().extensions == client_extension()
    assert seen == [False, True]


def test_the_server_refuses_views_and_links_that_break_the_rules() -> None:
    server = Server("bad")
    with pytest.raises(AppFormatError, match="ui:// URI"):
        server.app("https://example.com/page")
    with pytest.raises(AppFormatError, match="not an origin"):
        server.app("ui://x", csp=AppCsp(connect_domains=["https://a.example; script-src *"]))
    with pytest.raises(AppFormatError, match="not an origin"):
        AppCsp(resource_domains=["'unsafe-eval'"])
    with pytest.raises(AppFormatError, match="list of strings"):
        AppCsp(frame_domains="https://a.example")  # type: ignore[arg-type]
    with pytest.raises(AppFormatError, match="unknown permission 'usb'"):
        server.app("ui://x", permissions=["usb"])  # type: ignore[list-item]
    with pytest.raises(AppFormatError, match="mime_type"):
        server.app("ui://x", mime_type="text/html")(lambda: PAGE)
    with pytest.raises(ValueError, match="does not offer"):
        server.add_tool(lambda: "x", name="orphan", ui="ui://missing")
    with pytest.raises(AppFormatError, match="ui:// URI"):
        server.add_tool(lambda: "x", name="wrong", ui="https://example.com")
    with pytest.raises(AppFormatError, match="visibility"):
        ToolUi("ui://x", visibility=["user"])  # type: ignore[list-item]
    with pytest.raises(AppFormatError, match="visibility"):
        ToolUi("ui://x", visibility=[])
    assert "orphan" not in server.tools


def result_of(*contents: TextResourceContents | BlobResourceContents) -> ReadResourceResult:
    return ReadResourceResult(contents=list(contents))


def test_a_client_refuses_a_view_that_is_not_what_the_extension_says() -> None:
    uri = "ui://v"
    good = TextResourceContents(uri=uri, mime_type=APP_MIME_TYPE, text=PAGE)
    assert view_from_result(uri, result_of(good)).html == PAGE
    blob = BlobResourceContents.from_bytes(uri, PAGE.encode(), APP_MIME_TYPE)
    assert view_from_result(uri, result_of(blob)).html == PAGE
    cases: list[tuple[ReadResourceResult, str]] = [
        (result_of(TextResourceContents(uri=uri, mime_type="text/html", text=PAGE)), "its type"),
        (result_of(TextResourceContents(uri=uri, text=PAGE)), "its type is None"),
        (result_of(good, good), "2 contents"),
        (
            result_of(TextResourceContents(uri="ui://other", mime_type=APP_MIME_TYPE, text=PAGE)),
            "0",
        ),
        (
            result_of(BlobResourceContents(uri=uri, mime_type=APP_MIME_TYPE, blob="!!notbase64")),
            "not base64",
        ),
        (
            result_of(
                BlobResourceContents(
                    uri=uri, mime_type=APP_MIME_TYPE, blob=base64.b64encode(b"\xff\xfe").decode()
                )
            ),
            "UTF-8",
        ),
        (
            result_of(
                TextResourceContents(
                    uri=uri, mime_type=APP_MIME_TYPE, text="x" * (MAX_APP_BYTES + 1)
                )
            ),
            "larger than",
        ),
        (
            result_of(
                TextResourceContents(
                    uri=uri,
                    mime_type=APP_MIME_TYPE,
                    text=PAGE,
                    meta={"ui": {"csp": {"connectDomains": "*"}}},
                )
            ),
            "connectDomains must be a list",
        ),
        (
            result_of(
                TextResourceContents(
                    uri=uri,
                    mime_type=APP_MIME_TYPE,
                    text=PAGE,
                    meta={"ui": {"csp": {"connectDomains": ["https://a.example 'unsafe-eval'"]}}},
                )
            ),
            "not an origin",
        ),
        (
            result_of(
                TextResourceContents(
                    uri=uri,
                    mime_type=APP_MIME_TYPE,
                    text=PAGE,
                    meta={"ui": {"prefersBorder": "yes"}},
                )
            ),
            "prefersBorder",
        ),
    ]
    for result, message in cases:
        with pytest.raises(AppFormatError, match=message):
            view_from_result(uri, result)
    with pytest.raises(AppFormatError, match="ui:// URI"):
        view_from_result("https://x", result_of(good))


def test_the_policies_a_host_enforces_follow_the_sep() -> None:
    default = AppMeta().content_security_policy()
    assert "default-src 'none'" in default
    assert "connect-src 'none'" in default
    declared = AppMeta(
        csp=AppCsp(
            resource_domains=["https://cdn.example"],
            frame_domains=["https://www.youtube.com"],
        )
    ).content_security_policy()
    assert "script-src 'self' 'unsafe-inline' https://cdn.example;" in declared
    assert "frame-src https://www.youtube.com;" in declared
    assert "connect-src 'self';" in declared
    assert declared.endswith("base-uri 'self'")
    assert AppMeta(permissions=["camera", "clipboardWrite"]).permission_policy() == (
        "camera; clipboard-write"
    )
    # The deprecated flat key is still read.
    meta: dict[str, Any] = {"ui/resourceUri": "ui://old"}
    assert ToolUi.from_meta(meta, "tool 't'") == ToolUi("ui://old")


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_host_hides_app_only_tools_from_the_model_and_routes_views_calls(
    version: str,
) -> None:
    other = Server("other")

    @other.tool(ui=ToolUi(visibility=["app"]))
    def secret() -> str:
        return "other's app-only tool"

    servers = {
        "weather": InProcessServerConfig(
            server=weather_server(),
            policy=ServerPolicy(trusted_tools=["refresh", "forecast", "advise"]),
        ),
        "other": InProcessServerConfig(server=other),
    }
    options = {"protocol_version": version, "extensions": client_extension()}
    async with open_host(servers, client_options=options) as host:  # type: ignore[arg-type]
        await host.wait_settled()
        assert sorted(host.tools()) == ["weather__advise", "weather__forecast"]
        names = [spec["name"] for spec in host.tool_definitions()]
        assert sorted(names) == ["weather__advise", "weather__forecast"]
        # The model cannot call a tool only views may call.
        with pytest.raises(McpError, match="Unknown tool"):
            await host.call_tool("weather__refresh", {"city": "Oslo"})
        model_call = await host.call_tool("weather__advise", {"city": "Oslo"})
        assert model_call.content[0].text == "take an umbrella in Oslo"  # type: ignore[union-attr]
        view = await host.view("weather__forecast")
        assert view is not None and view.server == "weather" and view.html == PAGE
        assert await host.view("weather__advise") is None
        result = await host.call_tool_from_view(view, "refresh", {"city": "Oslo"})
        assert result.content[0].text == "refreshed Oslo"  # type: ignore[union-attr]
        assert not (await host.call_tool_from_view(view, "forecast", {"city": "Rome"})).is_error
        # A view cannot call a model-only tool, nor another server's tool.
        with pytest.raises(McpError, match="Unknown tool"):
            await host.call_tool_from_view(view, "advise", {"city": "Oslo"})
        with pytest.raises(McpError, match="Unknown tool"):
            await host.call_tool_from_view(view, "secret", {})
        events = [(e.kind, e.server, e.subject) for e in host.audit.pending()]
        assert ("call", "weather", "refresh") in events
