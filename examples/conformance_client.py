"""The client the official MCP conformance suite drives:
``python examples/conformance_client.py URL``.

The harness starts one mock server per scenario and runs this script with the
mock's URL; the environment says what to do:

* ``MCP_CONFORMANCE_SCENARIO``: which scenario (each has a function below);
* ``MCP_CONFORMANCE_PROTOCOL_VERSION``: the revision the run is about. For
  ``2026-07-28`` the client detects the era itself (a ``server/discover`` probe,
  retried when the server answers -32022 with the versions it speaks); for
  older revisions it opens with ``initialize`` at that revision;
* ``MCP_CONFORMANCE_CONTEXT``: JSON with scenario data (the tool calls of
  ``http-custom-headers``).

Everything goes through trio_mcp's public API: :func:`trio_mcp.http.open_http_client`
and the :class:`~trio_mcp.Client` it yields. The script exits 0 when the
scenario ran, 1 otherwise.

The ``sep-2640-client-*`` scenarios play a host of the Skills extension
(SEP-2640, ``io.modelcontextprotocol/skills``) with :mod:`trio_mcp.skills`: a
listing that reads no file, and a loading path that verifies each file against
its entry's size and digest, and SKILL.md's frontmatter against the entry's.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from trio_mcp import Client, skills, types
from trio_mcp.auth import (
    AuthorizationCode,
    ClientCredentials,
    ClientInfo,
    EnterpriseManaged,
    JwtBearer,
    OAuth,
    fetch_redirect,
)
from trio_mcp.http import open_http_client

Scenario = Callable[[Client, dict[str, Any]], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}
MODERN = "2026-07-28"


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


# -- what the client answers when the server asks ------------------------------------------


def plausible(schema: dict[str, Any]) -> Any:
    """A value for a form field: its default if it has one, else something of its type."""
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    if "oneOf" in schema:
        return schema["oneOf"][0].get("const")
    kind = schema.get("type")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return 1
    if kind == "array":
        return []
    return "test"


async def elicitation(
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
) -> types.ElicitResult:
    """Accept every form, filling each field with its default (or a plausible value)."""
    if isinstance(params, types.ElicitRequestURLParams):
        return types.ElicitResult(action="decline")
    properties = params.requested_schema.get("properties", {})
    content = {name: plausible(field) for name, field in properties.items()}
    return types.ElicitResult(action="accept", content=content)


async def sampling(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(text="A sampled answer from the conformance client."),
        model="trio-mcp-conformance",
        stop_reason="endTurn",
    )


async def roots() -> list[types.Root]:
    return [types.Root(uri="file:///tmp/conformance", name="conformance")]


def arguments_for(tool: types.Tool) -> dict[str, Any]:
    """Arguments for every required parameter of a tool, from its input schema."""
    properties = tool.input_schema.get("properties", {})
    required = tool.input_schema.get("required", [])
    return {name: plausible(properties.get(name, {})) for name in required}


# -- the scenarios -------------------------------------------------------------------------


@scenario("initialize", "request-metadata", "json-schema-ref-no-deref")
async def list_tools(client: Client, context: dict[str, Any]) -> None:
    """Open (initialize, or discover), list the tools if the server has any, leave."""
    if client.server_capabilities.tools is not None:
        await client.list_tools()


@scenario("tools_call")
async def tools_call(client: Client, context: dict[str, Any]) -> None:
    await client.list_tools()
    result = await client.call_tool("add_numbers", {"a": 2, "b": 3})
    print(result.content)


@scenario("sse-retry", "elicitation-sep1034-client-defaults", "http-invalid-tool-headers")
async def call_every_tool(client: Client, context: dict[str, Any]) -> None:
    """Call every tool the server lists (tools with invalid ``x-mcp-header`` annotations
    are already left out of the list)."""
    for tool in await client.list_tools():
        result = await client.call_tool(tool.name, arguments_for(tool))
        print(tool.name, "->", result.content)


@scenario("json-schema-2020-12-preservation")
async def echo_schema(client: Client, context: dict[str, Any]) -> None:
    """Send the focal tool's input schema back exactly as it came."""
    tools = {tool.name: tool for tool in await client.list_tools()}
    schema = tools["json_schema_2020_12_tool"].input_schema
    await client.call_tool("json_schema_echo", {"schema": schema})


@scenario("sep-2322-client-request-state")
async def multi_round_trips(client: Client, context: dict[str, Any]) -> None:
    """Tools that answer ``input_required``; the client fulfils and retries by itself."""
    await client.list_tools()
    for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state"):
        await client.call_tool(name, {})
    await client.call_tool("test_mrtr_no_result_type", {})


@scenario("http-standard-headers")
async def every_method(client: Client, context: dict[str, Any]) -> None:
    """Each method that carries ``Mcp-Name``: every tool, resource and prompt."""
    for tool in await client.list_tools():
        await client.call_tool(tool.name, arguments_for(tool))
    for resource in await client.list_resources():
        await client.read_resource(resource.uri)
    for prompt in await client.list_prompts():
        await client.get_prompt(prompt.name)


@scenario("http-custom-headers")
async def custom_headers(client: Client, context: dict[str, Any]) -> None:
    """Call the tools the context names with its arguments, verbatim: the client mirrors
    the ``x-mcp-header`` parameters into ``Mcp-Param-*`` headers."""
    await client.list_tools()
    for call in context.get("toolCalls", []):
        await client.call_tool(call["name"], call.get("arguments", {}))


# -- skills (SEP-2640) ---------------------------------------------------------------------


@scenario("sep-2640-client-no-prefetch")
async def skill_catalogue(client: Client, context: dict[str, Any]) -> None:
    """Connect and list the skills; the model asks for no skill, so no file is fetched."""
    if skills.SKILLS_EXTENSION not in (client.server_capabilities.extensions or {}):
        print("the server offers no skills")
        return
    for entry in await skills.list_skills(client):
        print("skill", entry.name, entry.uri)


@scenario(
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
async def use_skills(client: Client, context: dict[str, Any]) -> None:
    """The model asks for every listed skill: load each through the verifying path, then
    read its supporting files (each verified too). A skill that fails verification is
    refused, and none of its other files is read."""
    if skills.SKILLS_EXTENSION not in (client.server_capabilities.extensions or {}):
        print("the server offers no skills")
        return
    for entry in await skills.list_skills(client):
        try:
            await skills.load_skill(client, entry)
            for item in entry.resources if entry.resources != "dynamic" else ():
                if item.uri != entry.uri:
                    await skills.read_skill_file(client, entry, item.uri)
        except skills.SkillVerificationError as exc:
            print(f"refused skill {entry.uri}: {exc}")
        else:
            print(f"loaded skill {entry.uri}")


# -- authorization (auth/*) ----------------------------------------------------------------

#: The Client ID Metadata Document URL the harness accepts as a client ID.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"


def authorization(name: str, context: dict[str, Any]) -> OAuth | None:
    """The OAuth flow for an ``auth/*`` scenario: a machine-to-machine grant when the
    context carries credentials for one, else the authorization code flow (its redirect
    taken without a browser: the harness's server approves at once)."""
    if not name.startswith("auth/"):
        return None
    if name == "auth/client-credentials-jwt":
        key = ClientInfo(
            context["client_id"],
            private_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm") or "ES256",
        )
        return OAuth(ClientCredentials(key))
    if name == "auth/client-credentials-basic":
        return OAuth(ClientCredentials(ClientInfo(context["client_id"], context["client_secret"])))
    if name == "auth/wif-jwt-bearer":
        return OAuth(JwtBearer(context["valid_jwt"], client_id=context["client_id"]))
    if name == "auth/enterprise-managed-authorization":
        grant = EnterpriseManaged(
            id_token=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_client=ClientInfo(context["idp_client_id"]),
            client=ClientInfo(context["client_id"], context["client_secret"]),
        )
        return OAuth(grant)
    preregistered = None
    if "client_id" in context:
        preregistered = ClientInfo(context["client_id"], context.get("client_secret"))
    code = AuthorizationCode(
        fetch_redirect(),
        REDIRECT_URI,
        client_name="trio-mcp-conformance-client",
        client_metadata_url=CLIENT_METADATA_URL,
    )
    return OAuth(code, client=preregistered)


@scenario(
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
    "auth/basic-cimd", "auth/basic-dcr", "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none", "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
    "auth/iss-supported", "auth/iss-not-advertised", "auth/iss-supported-missing",
    "auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized",
    "auth/metadata-issuer-mismatch", "auth/client-credentials-jwt",
    "auth/client-credentials-basic", "auth/enterprise-managed-authorization", "auth/dpop",
    "auth/dpop-nonce", "auth/wif-jwt-bearer",
)  # fmt: skip
async def authorized_calls(client: Client, context: dict[str, Any]) -> None:
    """With the token the flow got, list the tools and call each (a call may need more
    scopes than the listing: a step-up)."""
    await call_every_tool(client, context)


@scenario("auth/authorization-server-migration")
async def calls_across_a_migration(client: Client, context: dict[str, Any]) -> None:
    """List, then list again: the server moves to another authorization server in
    between, and the flow registers anew there."""
    await client.list_tools()
    await call_every_tool(client, context)


# -- running -------------------------------------------------------------------------------


async def main(url: str) -> int:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", MODERN)
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    run = SCENARIOS.get(name)
    if run is None:
        print(f"unknown scenario {name!r}", file=sys.stderr)
        return 1
    async with open_http_client(
        url,
        name="trio-mcp-conformance-client",
        version="1.0.0",
        protocol_version=None if version == MODERN else version,
        elicitation=elicitation,
        sampling=sampling,
        roots=roots,
        auth=authorization(name, context),
        # Wait for the standalone GET stream to be answered before the scenario's requests
        # go out, as long as a loaded machine may need: with the 5 s default, a harness
        # stalled for longer (48 scenarios start at once) answers the GET after the
        # requests that follow it, and sse-retry takes that GET for the reconnection.
        get_stream_timeout=30.0,
    ) as client:
        print(f"{name}: {client.era} era, protocol {client.protocol_version}")
        with trio.fail_after(60):
            await run(client, context)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), stream=sys.stderr)
    import argparse

    parser = argparse.ArgumentParser(
        description="The fixture client of the official MCP conformance suite: runs the "
        "scenario named by MCP_CONFORMANCE_SCENARIO against the harness's mock server."
    )
    parser.add_argument("url", help="the mock server's MCP endpoint")
    sys.exit(trio.run(main, parser.parse_args().url))
