"""The fixture server of the official MCP conformance suite, built with trio_mcp.

One process serves both protocol eras on one endpoint: the 2025-11-25 runs
(``initialize`` and sessions) and the 2026-07-28 runs (stateless requests,
input-required results). Run it and point the harness at it::

    python examples/conformance_server.py --port 3001
    npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3001/mcp ...

What it offers is what the scenarios call, in the order they expect: the
first tool is ``test_simple_text``, the first resource ``test://static-text``,
and ``test_x_mcp_header`` is the first tool that mirrors a parameter into a
header.

Handlers that need something from the client (elicitation, sampling, roots)
are written once for both eras: in 2025-11-25 ``ctx.elicit`` sends a request
on the tool call's stream and waits; in 2026-07-28 it unwinds into an
input-required result, and the client's retry runs the handler again with the
answer (see :class:`trio_mcp.Context`).

It also serves one skill under the Skills extension (SEP-2640,
``io.modelcontextprotocol/skills``) with :meth:`Server.add_skills`.
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from typing import Annotated, Any

import trio

from trio_mcp import Context, ErrorCode, McpError, MissingRequiredClientCapability, Server
from trio_mcp.http import close_sse_stream, serve
from trio_mcp.server import Field
from trio_mcp.skills import Skill
from trio_mcp.types import (
    AudioContent,
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    EmbeddedResource,
    ImageContent,
    ListRootsRequest,
    PromptMessage,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)

#: A 1x1 red PNG and a minimal WAV file.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = Server(
    "trio-mcp-conformance-server",
    version="1.0.0",
    tools=True,
    resources=True,
    prompts=True,
    cache_ttl_ms=0,
    cache_scope="private",
)


def form(**properties: Any) -> dict[str, Any]:
    """An elicitation schema asking for string ``properties`` (all required)."""
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


# -- tools: content ---------------------------------------------------------------------------


@server.tool(description="Tests simple text content response")
async def test_simple_text() -> str:
    return "This is a simple text response for testing."


@server.tool(description="Tests image content response")
async def test_image_content() -> ImageContent:
    return ImageContent(data=PNG, mime_type="image/png")


@server.tool(description="Tests audio content response")
async def test_audio_content() -> AudioContent:
    return AudioContent(data=WAV, mime_type="audio/wav")


@server.tool(description="Tests embedded resource content response")
async def test_embedded_resource() -> EmbeddedResource:
    return EmbeddedResource(
        resource=TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )
    )


@server.tool(description="Tests response with multiple content types (text, image, resource)")
async def test_multiple_content_types() -> list[Any]:
    return [
        TextContent(text="Multiple content types test:"),
        ImageContent(data=PNG, mime_type="image/png"),
        EmbeddedResource(
            resource=TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=json.dumps({"test": "data", "value": 123}),
            )
        ),
    ]


@server.tool(description="Tests a tool that mirrors a parameter into the Mcp-Param-Region header")
async def test_x_mcp_header(
    region: Annotated[str, Field(description="A region", schema={"x-mcp-header": "Region"})],
) -> str:
    return f"Region: {region}"


# -- tools: logging, progress, errors ---------------------------------------------------------


@server.tool(description="Tests tool that emits log messages during execution")
async def test_tool_with_logging(ctx: Context) -> str:
    await ctx.info("Tool execution started")
    await trio.sleep(0.05)
    await ctx.info("Tool processing data")
    await trio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool(description="Tests tool that reports progress notifications")
async def test_tool_with_progress(ctx: Context) -> str:
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100, f"Completed step {done // 50 + 1} of 3")
        if done < 100:
            await trio.sleep(0.05)
    return "Progress test completed"


@server.tool(description="Tests error response handling")
async def test_error_handling() -> str:
    from trio_mcp import ToolError

    raise ToolError("This tool intentionally returns an error for testing")


@server.tool(description="Logs only when the request asked for a log level (2026-07-28)")
async def test_logging_tool(ctx: Context) -> str:
    await ctx.info("Diagnostic trace logging activated")
    return "Logging evaluated"


# -- tools: asking the client (both eras) -----------------------------------------------------


@server.tool(description="Tests server-initiated sampling (LLM completion request)")
async def test_sampling(
    prompt: Annotated[str, Field(description="The prompt to send to the LLM")], ctx: Context
) -> str:
    result = await ctx.sample(prompt, max_tokens=100)
    content = result.content[0] if isinstance(result.content, list) else result.content
    text = content.text if isinstance(content, TextContent) else json.dumps(str(content))
    return f"LLM response: {text}"


@server.tool(description="Tests server-initiated elicitation (user input request)")
async def test_elicitation(
    message: Annotated[str, Field(description="The message to show the user")], ctx: Context
) -> str:
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await ctx.elicit(message, schema)
    return f"User response: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Tests elicitation with default values for all primitive types (SEP-1034)")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verified user", "default": True},
        },
    }
    result = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Tests elicitation with the enum schema variants (SEP-1330)")
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    def titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
        return [{"const": value, "title": title} for value, title in pairs]

    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": titled(
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ),
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": titled(
                        ("value1", "First Choice"),
                        ("value2", "Second Choice"),
                        ("value3", "Third Choice"),
                    )
                },
            },
        },
    }
    result = await ctx.elicit("Please select options from the enum fields", schema)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Tests SSE stream disconnection and client reconnection (SEP-1699)")
async def test_reconnection(ctx: Context) -> str:
    # End this call's stream now; the client comes back with Last-Event-ID for the answer.
    await close_sse_stream(ctx)
    await trio.sleep(0.1)
    return "Reconnection test completed successfully"


@server.tool(
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    },
)
async def json_schema_tool(**arguments: Any) -> str:
    return f"Received: {json.dumps(arguments, sort_keys=True)}"


# -- tools: the stateless era (2026-07-28) ----------------------------------------------------


@server.tool(description="Needs the client's sampling capability")
async def test_missing_capability(ctx: Context) -> str:
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        raise MissingRequiredClientCapability(
            "this tool needs sampling", required_capabilities={"sampling": {}}
        )
    return "Success"


@server.tool(description="Asks for input without sending the client a request")
async def test_streaming_elicitation(ctx: Context) -> str:
    await ctx.report_progress(50, 100)
    answer = await ctx.elicit("Please confirm", form(ok="boolean"), key="confirm")
    return f"Streaming complete: {answer.action}"


@server.tool(description="Tells subscribers that the tool list changed")
async def test_trigger_tool_change() -> str:
    server.notify_list_changed("tools")  # the list stays the same; listeners get the hint
    return "Mutation triggered"


@server.tool(description="Tells subscribers that the prompt list changed")
async def test_trigger_prompt_change() -> str:
    server.notify_list_changed("prompts")
    return "Mutation triggered"


@server.tool(description="Asks for the user's name (input-required result)")
async def test_input_required_result_elicitation(ctx: Context) -> str:
    answer = await ctx.elicit("What is your name?", form(name="string"), key="user_name")
    name = (answer.content or {}).get("name", "stranger")
    return f"Hello, {name}!"


@server.tool(description="Asks the client's model a question (input-required result)")
async def test_input_required_result_sampling(ctx: Context) -> str:
    result = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    content = result.content[0] if isinstance(result.content, list) else result.content
    text = content.text if isinstance(content, TextContent) else "no text"
    return f"Sampling result: {text}"


@server.tool(description="Asks for the client's roots (input-required result)")
async def test_input_required_result_list_roots(ctx: Context) -> str:
    roots = await ctx.list_roots(key="client_roots")
    return f"Found {len(roots)} root(s)"


@server.tool(description="Carries a sealed request state between rounds")
async def test_input_required_result_request_state(ctx: Context) -> str:
    answer = await ctx.elicit("Please confirm", form(ok="boolean"), key="confirm")
    return f"state-ok: confirmed={(answer.content or {}).get('ok')}"


@server.tool(description="Asks for three inputs at once")
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    answers = await ctx.ask(
        {
            "user_name": ElicitRequest(
                params=ElicitRequestFormParams(
                    message="What is your name?", requested_schema=form(name="string")
                )
            ),
            "greeting": CreateMessageRequest(
                params=CreateMessageRequestParams(
                    messages=[
                        SamplingMessage(
                            role="user", content=TextContent(text="Generate a greeting")
                        )
                    ],
                    max_tokens=50,
                )
            ),
            "client_roots": ListRootsRequest(),
        }
    )
    name = (answers["user_name"].content or {}).get("name")
    return f"Name: {name}; Roots: {len(answers['client_roots'].roots)}"


@server.tool(description="Asks in two rounds: a name, then a colour")
async def test_input_required_result_multi_round(ctx: Context) -> str:
    name = await ctx.elicit("Step 1: What is your name?", form(name="string"), key="step1")
    color = await ctx.elicit(
        "Step 2: What is your favorite color?", form(color="string"), key="step2"
    )
    return (
        f"Multi-round complete for {(name.content or {}).get('name')} "
        f"who likes {(color.content or {}).get('color')}"
    )


@server.tool(description="Rejects a request state that was altered")
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    await ctx.elicit("Please confirm", form(ok="boolean"), key="confirm")
    return "integrity-ok: state verified"


@server.tool(description="Asks only for what the client declared it can do")
async def test_input_required_result_capabilities(ctx: Context) -> str:
    capabilities = ctx.client_capabilities
    questions: dict[str, Any] = {}
    if capabilities is not None and capabilities.elicitation is not None:
        questions["elicit_input"] = ElicitRequest(
            params=ElicitRequestFormParams(
                message="Elicitation input", requested_schema=form(value="string")
            )
        )
    if capabilities is not None and capabilities.sampling is not None:
        questions["sample_input"] = CreateMessageRequest(
            params=CreateMessageRequestParams(
                messages=[SamplingMessage(role="user", content=TextContent(text="Sample request"))],
                max_tokens=50,
            )
        )
    if not questions:
        return "No supported capabilities declared"
    answers = await ctx.ask(questions)
    return f"capabilities-ok: received {','.join(sorted(answers))}"


# -- resources --------------------------------------------------------------------------------


@server.resource(
    "test://static-text",
    name="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
async def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary",
    name="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
async def static_binary() -> bytes:
    import base64

    return base64.b64decode(PNG)


@server.resource(
    "test://watched-resource",
    name="Watched Resource",
    description="A resource that can be subscribed to",
    mime_type="text/plain",
)
async def watched_resource() -> str:
    return "Watched resource content"


@server.resource(
    "test://template/{id}/data",
    name="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
async def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- skills (SEP-2640: io.modelcontextprotocol/skills) ----------------------------------------
#
# One skill, built from its files: each file is a resource at skill://pdf-processing/<path>,
# and add_skills declares the extension (with directoryRead) and answers skills/list,
# skills/get and resources/directory/read.

server.add_skills(
    Skill.from_files(
        "pdf-processing",
        {
            "SKILL.md": (
                "---\n"
                "name: pdf-processing\n"
                "description: Extract, fill, and assemble PDF documents\n"
                "license: Apache-2.0\n"
                "---\n\n"
                "# PDF processing\n\nFill forms as references/FORMS.md explains; pick a "
                "template from templates/; run scripts/extract.py to pull text out.\n"
            ),
            "references/FORMS.md": "# Forms\n\nFill every field, then flatten.\n",
            "templates/invoice.md": "# Invoice\n\nNumber, date, lines, total.\n",
            "templates/regional/eu-invoice.md": "# EU invoice\n\nAdd the VAT id.\n",
            "scripts/extract.py": "import sys\n\nprint(open(sys.argv[1]).read())\n",
        },
    )
)


# -- tools: the tasks extension (io.modelcontextprotocol/tasks) ------------------------------
#
# A tool registered with task= runs as a task for a client that declared the extension: the
# call is answered at once with a task id and the function runs in the server's task nursery.
# The function is written as for a plain call: sleeping, asking, failing, being cancelled.


@server.tool(description="Greets without ever becoming a task")
async def greet(name: str) -> str:
    return f"Hello, {name}!"


@server.tool(description="Sleeps, then answers (a task when the client opts in)", task="optional")
async def slow_compute(seconds: float = 1, label: str = "") -> str:
    await trio.sleep(seconds)
    return f"computed {label!r} after {seconds:g} s"


@server.tool(description="Fails as a tool (isError) after about a second", task="always")
async def failing_job() -> str:
    await trio.sleep(1)
    raise RuntimeError("the job failed")


@server.tool(description="Fails with a protocol error", task="optional")
async def protocol_error_job() -> str:
    await trio.sleep(0.1)
    raise McpError("the job broke the protocol", code=ErrorCode.INTERNAL_ERROR)


@server.tool(description="Asks for confirmation, then deletes", task="optional")
async def confirm_delete(ctx: Context, path: str = "/tmp/example") -> str:
    answer = await ctx.elicit(
        f"Delete {path}?", {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
    )
    confirmed = answer.action == "accept" and (answer.content or {}).get("confirm", True)
    return f"deleted {path}" if confirmed else f"kept {path}"


@server.tool(description="Asks two questions at once", task="optional")
async def multi_input(ctx: Context) -> str:
    answers = await ctx.ask(
        {
            "first": ElicitRequest(
                params=ElicitRequestFormParams(message="First?", requested_schema=form(a="string"))
            ),
            "second": ElicitRequest(
                params=ElicitRequestFormParams(message="Second?", requested_schema=form(b="string"))
            ),
        }
    )
    return ", ".join(f"{key}: {answer.action}" for key, answer in sorted(answers.items()))


@server.tool(
    description="Asks for a name in an input round, then finishes as a task",
    task="always",
    task_start="on_start_task",
)
async def test_tool_with_task(ctx: Context) -> str:
    answer = await ctx.elicit("What is your name?", form(name="string"), key="user_name")
    await ctx.start_task()  # the request answers with a task; the handler runs again in it
    await trio.sleep(0.2)
    return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"


# -- prompts and completion -------------------------------------------------------------------


@server.prompt(description="A simple prompt without arguments")
async def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@server.prompt(description="A prompt with required arguments")
async def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(description="A prompt with an embedded resource")
async def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[Any]:
    resource = TextResourceContents(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
    )
    return [
        PromptMessage(role="user", content=EmbeddedResource(resource=resource)),
        "Please process the embedded resource above.",
    ]


@server.prompt(description="A prompt with image content")
async def test_prompt_with_image() -> list[Any]:
    return [ImageContent(data=PNG, mime_type="image/png"), "Please analyze the image above."]


@server.prompt(description="A prompt that asks the user for context first")
async def test_input_required_result_prompt(ctx: Context) -> str:
    answer = await ctx.elicit(
        "What context should the prompt use?", form(context="string"), key="user_context"
    )
    return f"Use this context: {(answer.content or {}).get('context')}"


@server.completion(prompt="test_prompt_with_arguments", argument="arg1")
async def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
    return [c for c in ("test", "testing", "tested", "other") if c.startswith(value)]


@server.completion(resource_template="test://template/{id}/data", argument="id")
async def complete_id(value: str, context: dict[str, str]) -> list[str]:
    return [c for c in ("123", "456", "789") if c.startswith(value)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve, server, args.host, args.port))
            print(f"conformance server on http://{args.host}:{port}/mcp", flush=True)

    trio.run(run)


if __name__ == "__main__":
    main()
