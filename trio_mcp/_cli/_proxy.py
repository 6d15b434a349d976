"""A :class:`~trio_mcp.Server` that forwards to another MCP server through a
:class:`~trio_mcp.Client`: what ``trio-mcp bridge`` serves, over Streamable HTTP or stdio,
in front of a server that speaks the other transport.

What it forwards: the tools (each call, with its arguments as given, its progress back to
the caller, and its cancellation: a caller that gives up cancels the call, so the client
sends ``notifications/cancelled`` on), the resources with fixed URIs (each read) and the
prompts (each get, its arguments as given). The lists are read once, when the proxy is
built. Not forwarded: resource templates, completions, subscriptions and list changes, and
the requests a server makes of its client (sampling, elicitation, roots): the proxy's
client declares none of them, so the server behind it knows not to ask.
"""

from __future__ import annotations

from typing import Any

from .._client._client import Client
from .._server._context import Context
from .._server._prompts import PromptSpec
from .._server._server import Server
from .._server._signature import Signature
from .._types._notifications import ProgressNotificationParams
from .._types._prompts import GetPromptResult, Prompt
from .._types._resources import Resource
from .._types._tools import CallToolResult, Tool

__all__ = ["proxy_server"]


async def proxy_server(client: Client) -> Server:
    """A server that offers what ``client``'s server offers, forwarding each call and read
    to it. Blocks while it lists the tools and resources (each page)."""
    info = client.server_info
    capabilities = client.server_capabilities
    server = Server(
        info.name if info is not None else "bridge",
        version=info.version if info is not None else "0.0.0",
        instructions=client.instructions,
        tools=capabilities.tools is not None,
        resources=capabilities.resources is not None,
        prompts=capabilities.prompts is not None,
    )
    if capabilities.tools is not None:
        for tool in await client.list_tools():
            _forward_tool(server, client, tool)
    if capabilities.resources is not None:
        for resource in await client.list_resources():
            _forward_resource(server, client, resource)
    if capabilities.prompts is not None:
        for prompt in await client.list_prompts():
            _forward_prompt(server, client, prompt)
    return server


def _forward_tool(server: Server, client: Client, tool: Tool) -> None:
    name = tool.name

    # The context's parameter has a name tools do not use (`ctx` and `context` are common
    # argument names): an argument called `_proxy_context_` is the one that cannot cross.
    async def call(_proxy_context_: Context, **arguments: Any) -> CallToolResult:
        async def progress(update: ProgressNotificationParams) -> None:
            await _proxy_context_.report_progress(update.progress, update.total, update.message)

        # Cancelling this handler (the caller gave up) cancels the forwarded call.
        return await client.call_tool(name, arguments, on_progress=progress)

    server.add_tool(
        call,
        name=name,
        title=tool.title,
        description=tool.description or "",
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=tool.annotations,
        meta=tool.meta,
    )


def _forward_resource(server: Server, client: Client, resource: Resource) -> None:
    uri = resource.uri

    async def read() -> list[Any]:
        return list((await client.read_resource(uri)).contents)

    server.resource(
        uri,
        name=resource.name,
        title=resource.title,
        description=resource.description or "",
        mime_type=resource.mime_type,
    )(read)


def _forward_prompt(server: Server, client: Client, prompt: Prompt) -> None:
    name = prompt.name

    async def get(**arguments: str) -> GetPromptResult:
        return await client.get_prompt(name, arguments)

    # The prompt as the server behind lists it (its arguments, which are its to check).
    server.add_prompt(PromptSpec(prompt, get, Signature.of(get, context_type=Context, typed=False)))
