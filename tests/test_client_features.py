"""What servers ask of clients (elicitation, sampling, roots), with the same handler code in
both eras: legacy server-to-client requests, modern multi round-trip requests."""

from __future__ import annotations

import pickle
from typing import Any

import attrs
import pytest
import trio
from feature_harness import ERAS, MODERN, open_pair

from trio_mcp import (
    Context,
    ErrorCode,
    McpError,
    MissingRequiredClientCapability,
    Server,
    URLElicitationRequired,
    jsonrpc as rpc,
)
from trio_mcp.types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsRequest,
    Root,
    SamplingMessage,
    TextContent,
    Tool,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


# Every primitive and enum shape form mode allows, with defaults.
FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "default": "octocat"},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "score": {"type": "number", "default": 0.5},
        "subscribe": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["Red", "Green"], "default": "Red"},
        "hex": {
            "type": "string",
            "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#0f0", "title": "Green"}],
            "default": "#f00",
        },
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        "colors": {
            "type": "array",
            "items": {"type": "string", "enum": ["Red", "Green", "Blue"]},
            "minItems": 1,
            "default": ["Red"],
        },
        "hexes": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "#f00", "title": "Red"}, {"const": "#0f0", "title": "Green"}]
            },
            "default": ["#f00"],
        },
    },
    "required": ["name"],
}

ANSWER = {
    "name": "Mona",
    "email": "mona@example.com",
    "age": 30,
    "score": 0.75,
    "subscribe": True,
    "color": "Green",
    "hex": "#0f0",
    "legacy": "b",
    "colors": ["Red", "Blue"],
    "hexes": ["#f00"],
}


def tool_server() -> tuple[Server, list[int]]:
    """A server whose tools ask for input; ``runs`` counts handler runs (re-runs included)."""
    server = Server("asks")
    runs: list[int] = []

    @server.tool()
    async def signup(ctx: Context) -> str:
        runs.append(ctx.round)
        answer = await ctx.elicit("Your details, please", FORM)
        return f"{answer.action}: {answer.content}"

    @server.tool()
    async def pay(ctx: Context) -> str:
        answer = await ctx.elicit_url(
            "Pay here", "https://pay.example.com/s/1", elicitation_id="e1"
        )
        if answer.action == "accept":
            await ctx.elicitation_complete("e1")
        return answer.action

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:
        result = await ctx.sample(
            f"Summarize: {text}", max_tokens=50, system_prompt="Be brief.", temperature=0.1
        )
        assert isinstance(result.content, TextContent)
        return f"{result.model}: {result.content.text}"

    @server.tool()
    async def agent(ctx: Context) -> str:
        weather = Tool(name="weather", input_schema={"type": "object"})
        result = await ctx.sample(
            "What is the weather?",
            max_tokens=50,
            tools=[weather],
            tool_choice=ToolChoice(mode="auto"),
        )
        assert isinstance(result.content, ToolUseContent)
        return f"{result.stop_reason}: {result.content.name}({result.content.input})"

    @server.tool()
    async def roots(ctx: Context) -> list[str]:
        return [root.uri for root in await ctx.list_roots()]

    @server.tool()
    async def all_at_once(ctx: Context) -> str:
        runs.append(ctx.round)
        answers = await ctx.ask(
            {
                "who": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message="Who?",
                        requested_schema={
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                        },
                    )
                ),
                "llm": CreateMessageRequest(
                    params=CreateMessageRequestParams(
                        messages=[SamplingMessage(role="user", content=TextContent(text="hi"))],
                        max_tokens=5,
                    )
                ),
                "where": ListRootsRequest(),
            }
        )
        return ",".join(
            [
                str(answers["who"].content["name"]),
                answers["llm"].model,
                answers["where"].roots[0].uri,
            ]
        )

    @server.tool()
    async def one_after_another(ctx: Context) -> str:
        runs.append(ctx.round)
        first = await ctx.elicit("First?", {"properties": {"v": {"type": "string"}}})
        second = await ctx.sample("Second?", max_tokens=5)
        third = await ctx.list_roots()
        assert first.content is not None
        return f"{first.content['v']} {second.model} {len(third)}"

    @server.tool()
    async def in_a_nursery(ctx: Context) -> str:
        names: list[str] = []

        async def ask(key: str) -> None:
            answer = await ctx.elicit(key, {"properties": {"v": {"type": "string"}}}, key=key)
            assert answer.content is not None
            names.append(str(answer.content["v"]))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "left")
            nursery.start_soon(ask, "right")
        return ",".join(sorted(names))

    @server.tool()
    async def careful(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", {"properties": {"v": {"type": "string"}}})
        except MissingRequiredClientCapability:
            return "no elicitation here; using a default"
        return "asked"

    @server.tool()
    async def nested(ctx: Context) -> str:
        await ctx.elicit("Address?", {"properties": {"a": {"type": "object"}}})
        return "never"

    return server, runs


class Handlers:
    """Client-side handlers that record what they were asked."""

    def __init__(self, elicit_answer: ElicitResult | None = None) -> None:
        self.elicitations: list[Any] = []
        self.samplings: list[CreateMessageRequestParams] = []
        self.roots_asked = 0
        self.elicit_answer = elicit_answer or ElicitResult(action="accept", content=ANSWER)

    async def elicitation(self, params: Any) -> ElicitResult:
        self.elicitations.append(params)
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult(action="accept")
        if "v" in params.requested_schema.get("properties", {}):
            return ElicitResult(action="accept", content={"v": params.message})
        if "name" in params.requested_schema.get("properties", {}) and params.message == "Who?":
            return ElicitResult(action="accept", content={"name": "Ann"})
        return self.elicit_answer

    async def sampling(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        self.samplings.append(params)
        if params.tools:
            return CreateMessageResult(
                role="assistant",
                content=ToolUseContent(id="t1", name="weather", input={"city": "Oslo"}),
                model="m-tools",
                stop_reason="toolUse",
            )
        return CreateMessageResult(
            role="assistant", content=TextContent(text="short"), model="m-1", stop_reason="endTurn"
        )

    async def roots(self) -> list[Root]:
        self.roots_asked += 1
        return [Root(uri="file:///project", name="project")]

    def options(self, **extra: Any) -> dict[str, Any]:
        return {
            "elicitation": self.elicitation,
            "sampling": self.sampling,
            "roots": self.roots,
            **extra,
        }


async def test_form_elicitation_with_every_field_shape(version: str) -> None:
    server, runs = tool_server()
    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("signup")
        calls = pair.client_sent.requests("tools/call")
        asked = pair.server_sent.requests("elicitation/create")
    (params,) = handlers.elicitations
    assert isinstance(params, ElicitRequestFormParams)
    assert params.message == "Your details, please"
    assert params.requested_schema == FORM  # every shape and default, verbatim
    assert result.content == [TextContent(text=f"accept: {ANSWER}")]
    if version == MODERN:
        assert runs == [0, 1]  # asked, then re-run with the answer
        assert len(calls) == 2
        assert calls[0].id != calls[1].id
        assert asked == []  # a modern server sends no requests
        retry = calls[1].params
        assert retry is not None
        assert retry["inputResponses"] == {"input-1": {"action": "accept", "content": ANSWER}}
        assert isinstance(retry["requestState"], str)
        assert retry["name"] == "signup"
        assert "arguments" not in retry
    else:
        assert runs == [0]
        assert len(calls) == 1
        (request,) = asked
        assert request.params is not None
        assert request.params["requestedSchema"] == FORM


async def test_2025_06_18_gets_form_schemas_it_can_read() -> None:
    server = Server("asks")

    @server.tool()
    async def choose(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Pick",
            {"properties": {"hex": FORM["properties"]["hex"], "name": {"type": "string"}}},  # type: ignore[index]
        )
        return str(answer.content)

    @server.tool()
    async def choose_many(ctx: Context) -> str:
        await ctx.elicit("Pick", {"properties": {"colors": FORM["properties"]["colors"]}})  # type: ignore[index]
        return "never"

    handlers = Handlers(ElicitResult(action="accept", content={"hex": "#0f0"}))
    async with open_pair(server, protocol_version="2025-06-18", **handlers.options()) as pair:
        result = await pair.client.call_tool("choose")
        many = await pair.client.call_tool("choose_many")
    (params,) = handlers.elicitations
    assert params.requested_schema["properties"]["hex"] == {
        "type": "string",
        "enum": ["#f00", "#0f0"],
        "enumNames": ["Red", "Green"],
        "default": "#f00",
    }
    assert result.content == [TextContent(text="{'hex': '#0f0'}")]
    assert many.is_error
    assert "multi-select" in many.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_declined_and_cancelled_elicitation(version: str, action: str) -> None:
    server, _ = tool_server()
    handlers = Handlers(ElicitResult(action=action))  # type: ignore[arg-type]
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("signup")
    assert result.content == [TextContent(text=f"{action}: None")]


async def test_an_answer_that_breaks_the_schema_is_refused_by_the_client(version: str) -> None:
    """The client checks its handler's form answer against ``requestedSchema`` before
    sending it (the spec's SHOULD): the answer never reaches the server."""
    server, runs = tool_server()
    handlers = Handlers(ElicitResult(action="accept", content={"age": "old"}))
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.call_tool("signup")
        calls = pair.client_sent.requests("tools/call")
        answers = [m for m in pair.client_sent.sent if isinstance(m, rpc.ResultResponse)]
    assert info.value.code == ErrorCode.INTERNAL_ERROR
    assert "does not match the requested schema" in info.value.message
    assert "'name' is a required property" in info.value.message
    assert answers == []  # no result went to the server
    if version == MODERN:
        assert len(calls) == 1  # no retry carried the bad answer
        assert runs == [0]


async def test_a_declined_form_is_not_checked(version: str) -> None:
    server, _ = tool_server()
    handlers = Handlers(ElicitResult(action="decline", content={"age": "old"}))
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("signup")
    assert result.content == [TextContent(text="decline: {'age': 'old'}")]


async def test_nested_form_schemas_are_refused_before_asking(version: str) -> None:
    server, _ = tool_server()
    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("nested")
    assert result.is_error
    assert "flat objects of primitives" in result.content[0].text  # type: ignore[union-attr]
    assert handlers.elicitations == []


async def test_url_elicitation(version: str) -> None:
    server, _ = tool_server()
    handlers = Handlers()
    options = handlers.options(elicitation_modes=("form", "url"))
    async with open_pair(server, protocol_version=version, **options) as pair:
        result = await pair.client.call_tool("pay")
        await pair.client.list_tools()
        completions = pair.server_sent.notifications("notifications/elicitation/complete")
    (params,) = handlers.elicitations
    assert isinstance(params, ElicitRequestURLParams)
    assert params.url == "https://pay.example.com/s/1"
    assert result.content == [TextContent(text="accept")]
    if version == MODERN:
        assert params.elicitation_id is None
        assert completions == []
    else:
        assert params.elicitation_id == "e1"
        assert [n.params for n in completions] == [{"elicitationId": "e1"}]


async def test_sampling(version: str) -> None:
    server, _ = tool_server()
    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("summarize", {"text": "a long story"})
    (params,) = handlers.samplings
    assert params.messages == [
        SamplingMessage(role="user", content=TextContent(text="Summarize: a long story"))
    ]
    assert params.max_tokens == 50
    assert params.system_prompt == "Be brief."
    assert params.temperature == 0.1
    assert result.content == [TextContent(text="m-1: short")]


async def test_sampling_with_tools_needs_the_capability(version: str) -> None:
    server, _ = tool_server()
    handlers = Handlers()
    async with open_pair(
        server, protocol_version=version, **handlers.options(sampling_tools=True)
    ) as pair:
        result = await pair.client.call_tool("agent")
    (params,) = handlers.samplings
    assert params.tools is not None
    assert [t.name for t in params.tools] == ["weather"]
    assert params.tool_choice == ToolChoice(mode="auto")
    assert result.content == [TextContent(text="toolUse: weather({'city': 'Oslo'})")]

    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        with pytest.raises(MissingRequiredClientCapability) as info:
            await pair.client.call_tool("agent")
    assert info.value.required_capabilities == {"sampling": {"tools": {}}}


async def test_roots(version: str) -> None:
    server, _ = tool_server()
    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("roots")
    assert handlers.roots_asked == 1
    assert result.content == [TextContent(text="file:///project")]


async def test_several_inputs_in_one_round(version: str) -> None:
    server, runs = tool_server()
    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("all_at_once")
        calls = pair.client_sent.requests("tools/call")
    assert result.content == [TextContent(text="Ann,m-1,file:///project")]
    if version == MODERN:
        assert runs == [0, 1]
        assert len(calls) == 2
        assert set(calls[1].params["inputResponses"]) == {"who", "llm", "where"}  # type: ignore[index]
    else:
        assert runs == [0]


async def test_several_rounds(version: str) -> None:
    server, runs = tool_server()
    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("one_after_another")
        calls = pair.client_sent.requests("tools/call")
    assert result.content == [TextContent(text="First? m-1 1")]
    if version == MODERN:
        assert runs == [0, 1, 2, 3]
        assert len(calls) == 4
        assert len({c.id for c in calls}) == 4
        # Each retry carries the new round's answers and a new state, never the old ones.
        assert [set(c.params.get("inputResponses", {})) for c in calls] == [  # type: ignore[union-attr]
            set(),
            {"input-1"},
            {"input-2"},
            {"input-3"},
        ]
        states = [c.params.get("requestState") for c in calls]  # type: ignore[union-attr]
        assert states[0] is None
        assert len(set(states[1:])) == 3
    else:
        assert runs == [0]


async def test_questions_from_several_tasks(version: str) -> None:
    server, _ = tool_server()
    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        result = await pair.client.call_tool("in_a_nursery")
    assert result.content == [TextContent(text="left,right")]
    assert sorted(p.message for p in handlers.elicitations) == ["left", "right"]


@pytest.mark.parametrize(
    ("tool", "options", "required"),
    [
        ("signup", {}, {"elicitation": {}}),
        ("pay", {"elicitation_modes": ("form",)}, {"elicitation": {"url": {}}}),
        ("summarize", {}, {"sampling": {}}),
        ("roots", {}, {"roots": {}}),
    ],
)
async def test_missing_client_capability(
    version: str, tool: str, options: dict[str, Any], required: dict[str, Any]
) -> None:
    server, _ = tool_server()
    handlers = Handlers()
    declared = {k: v for k, v in handlers.options(**options).items() if k not in required}
    if tool == "pay":
        declared["elicitation"] = handlers.elicitation
    arguments = {"text": "x"} if tool == "summarize" else None
    async with open_pair(server, protocol_version=version, **declared) as pair:
        with pytest.raises(MissingRequiredClientCapability) as info:
            await pair.client.call_tool(tool, arguments)
        asked = pair.server_sent.requests()
    assert info.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY == -32021
    assert info.value.data == {"requiredCapabilities": required}
    assert asked == []  # nothing was asked of a client that cannot answer


async def test_a_handler_may_catch_the_missing_capability(version: str) -> None:
    server, _ = tool_server()
    async with open_pair(server, protocol_version=version) as pair:
        result = await pair.client.call_tool("careful")
    assert result.content == [TextContent(text="no elicitation here; using a default")]


async def test_prompts_and_resources_can_ask_too(version: str) -> None:
    server = Server("asks")

    @server.prompt()
    async def greeting(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"properties": {"v": {"type": "string"}}})
        assert answer.content is not None
        return f"Hello {answer.content['v']}"

    @server.resource("roots://first")
    async def first_root(ctx: Context) -> str:
        return (await ctx.list_roots())[0].uri

    handlers = Handlers()
    async with open_pair(server, protocol_version=version, **handlers.options()) as pair:
        prompt = await pair.client.get_prompt("greeting")
        resource = await pair.client.read_resource("roots://first")
    assert prompt.messages[0].content == TextContent(text="Hello Name?")
    assert resource.contents[0].text == "file:///project"  # type: ignore[union-attr]


async def test_a_tool_result_in_sampling_round_trips(version: str) -> None:
    server = Server("asks")

    @server.tool()
    async def loop(ctx: Context) -> str:
        weather = Tool(name="weather", input_schema={"type": "object"})
        messages = [
            SamplingMessage(role="user", content=TextContent(text="Weather?")),
            SamplingMessage(
                role="assistant", content=ToolUseContent(id="t1", name="weather", input={})
            ),
            SamplingMessage(
                role="user",
                content=[ToolResultContent(tool_use_id="t1", content=[TextContent(text="sunny")])],
            ),
        ]
        result = await ctx.sample(messages, max_tokens=10, tools=[weather])
        return result.model

    seen: list[CreateMessageRequestParams] = []

    async def sampling(params: CreateMessageRequestParams) -> CreateMessageResult:
        seen.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")

    async with open_pair(
        server, protocol_version=version, sampling=sampling, sampling_tools=True
    ) as pair:
        result = await pair.client.call_tool("loop")
    assert result.content == [TextContent(text="m")]
    last = seen[0].messages[-1].content
    assert isinstance(last, list)
    assert last[0] == ToolResultContent(tool_use_id="t1", content=[TextContent(text="sunny")])


async def test_cancelling_a_call_that_is_asking_cancels_the_question(
    version: str, autojump_clock: Any
) -> None:
    server, _ = tool_server()
    asked = trio.Event()

    async def slow_user(params: Any) -> ElicitResult:
        asked.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async with open_pair(server, protocol_version=version, elicitation=slow_user) as pair:
        with trio.move_on_after(10):
            await pair.client.call_tool("signup")
        assert asked.is_set()
        await pair.client.list_tools()
        await trio.sleep(1)
        calls = pair.client_sent.requests("tools/call")
        if version == MODERN:
            # The question came back as a result; the user never answered, so no retry.
            assert len(calls) == 1
            assert pair.client_sent.notifications("notifications/cancelled") == []
        else:
            assert pair.server_sent.responses_to(calls[0].id) == []
            # The server gave up its own elicitation/create when the call was cancelled.
            (question,) = pair.server_sent.requests("elicitation/create")
            (cancel,) = pair.server_sent.notifications("notifications/cancelled")
            assert cancel.params is not None
            assert cancel.params["requestId"] == question.id


async def test_a_legacy_client_refusing_one_of_several_questions() -> None:
    server, _ = tool_server()
    handlers = Handlers()

    async def refuse(params: CreateMessageRequestParams) -> CreateMessageResult:
        raise McpError("the user refused sampling", code=-1)

    options = {**handlers.options(), "sampling": refuse}
    async with open_pair(server, protocol_version="2025-11-25", **options) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.call_tool("all_at_once")
    assert info.value.code == -1
    assert info.value.message == "the user refused sampling"


# -- URL elicitation required (-32042) ---------------------------------------------------------

SIGN_IN = ElicitRequestURLParams(
    message="Sign in to Example Co", url="https://example.com/connect?s=c1", elicitation_id="c1"
)


def sign_in_server() -> tuple[Server, list[str]]:
    """A server whose ``files`` tool needs an out-of-band sign-in first (-32042), and whose
    ``finish`` tool announces that a sign-in ended."""
    server = Server("sign-in")
    signed_in: list[str] = []

    @server.tool()
    async def files() -> str:
        if not signed_in:
            raise URLElicitationRequired([SIGN_IN], "Sign-in is required")
        return "report.pdf"

    @server.tool()
    def files_now() -> str:
        """The same, as a plain function (answered without a task of its own when it can)."""
        raise URLElicitationRequired([SIGN_IN], "Sign-in is required")

    @server.tool()
    async def finish(elicitation_id: str, ctx: Context) -> str:
        signed_in.append(elicitation_id)
        await ctx.elicitation_complete(elicitation_id)
        return "ok"

    return server, signed_in


async def test_url_elicitation_required_reaches_the_client_typed() -> None:
    server, _ = sign_in_server()
    heard: list[str] = []
    handlers = Handlers()
    options = handlers.options(
        elicitation_modes=("form", "url"), on_elicitation_complete=heard.append
    )
    async with open_pair(server, protocol_version="2025-11-25", **options) as pair:
        with pytest.raises(URLElicitationRequired) as info:
            await pair.client.call_tool("files")
        (error,) = [m for m in pair.server_sent.sent if isinstance(m, rpc.ErrorResponse)]
        # The user completes the sign-in; the server says so, once.
        await pair.client.call_tool("finish", {"elicitation_id": "c1"})
        await pair.client.call_tool("finish", {"elicitation_id": "c1"})  # already ended
        await pair.client.call_tool("finish", {"elicitation_id": "never-told"})  # unknown
        retried = await pair.client.call_tool("files")
        sent = pair.server_sent.notifications("notifications/elicitation/complete")
    assert isinstance(info.value, McpError)
    assert info.value.code == ErrorCode.URL_ELICITATION_REQUIRED == -32042
    assert info.value.elicitations == [SIGN_IN]
    assert error.error.code == -32042
    assert error.error.message == "Sign-in is required"
    assert error.error.data == {
        "elicitations": [
            {
                "mode": "url",
                "elicitationId": "c1",
                "url": "https://example.com/connect?s=c1",
                "message": "Sign in to Example Co",
            }
        ]
    }
    assert len(sent) == 3  # the server sent all three...
    assert heard == ["c1"]  # ...the client heard only the one it knew, once
    assert retried.content == [TextContent(text="report.pdf")]
    assert handlers.elicitations == []  # the error is the caller's to handle


async def test_the_end_of_an_elicitation_the_server_asked_for_is_heard() -> None:
    server, _ = tool_server()
    heard: list[str] = []

    async def on_complete(elicitation_id: str) -> None:
        heard.append(elicitation_id)

    handlers = Handlers()
    options = handlers.options(
        elicitation_modes=("form", "url"), on_elicitation_complete=on_complete
    )
    async with open_pair(server, protocol_version="2025-11-25", **options) as pair:
        await pair.client.call_tool("pay")
        await pair.client.list_tools()  # the notification is handled meanwhile
    assert heard == ["e1"]


@pytest.mark.parametrize(
    ("version", "modes"),
    [("2025-11-25", ("form",)), ("2025-06-18", ("form", "url"))],
)
async def test_url_elicitation_required_needs_the_capability(
    version: str, modes: tuple[str, ...]
) -> None:
    server, _ = sign_in_server()
    handlers = Handlers()
    options = handlers.options(elicitation_modes=modes)
    async with open_pair(server, protocol_version=version, **options) as pair:
        with pytest.raises(MissingRequiredClientCapability) as info:
            await pair.client.call_tool("files")
        codes = [m.error.code for m in pair.server_sent.sent if isinstance(m, rpc.ErrorResponse)]
    assert info.value.required_capabilities == {"elicitation": {"url": {}}}
    assert codes == [ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY]  # never -32042


async def test_url_elicitation_required_is_an_input_round_in_the_modern_era() -> None:
    """2026-07-28 has no -32042: the same handler code asks through an input round, and the
    retry runs it again."""
    server, signed_in = sign_in_server()
    asked: list[Any] = []

    async def elicitation(params: Any) -> ElicitResult:
        asked.append(params)
        signed_in.append("c1")  # the user signs in, out of band
        return ElicitResult(action="accept")

    async with open_pair(
        server, protocol_version=MODERN, elicitation=elicitation, elicitation_modes=("url",)
    ) as pair:
        result = await pair.client.call_tool("files")
        (first, _) = pair.client_sent.requests("tools/call")
        (needed,) = pair.server_sent.responses_to(first.id)
    assert result.content == [TextContent(text="report.pdf")]
    assert asked == [attrs.evolve(SIGN_IN, elicitation_id=None)]
    assert isinstance(needed, rpc.ResultResponse)
    assert needed.result["resultType"] == "input_required"
    assert needed.result["inputRequests"] == {
        "c1": {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "url": "https://example.com/connect?s=c1",
                "message": "Sign in to Example Co",
            },
        }
    }


@pytest.mark.parametrize("tool", ["files", "files_now"])
async def test_url_elicitation_required_without_the_capability_in_the_modern_era(
    tool: str,
) -> None:
    server, _ = sign_in_server()
    async with open_pair(server, protocol_version=MODERN, **Handlers().options()) as pair:
        with pytest.raises(MissingRequiredClientCapability) as info:
            await pair.client.call_tool(tool)
    assert info.value.required_capabilities == {"elicitation": {"url": {}}}


async def test_a_plain_function_tool_raising_it_in_the_legacy_era() -> None:
    server, _ = sign_in_server()
    options = Handlers().options(elicitation_modes=("form", "url"))
    async with open_pair(server, protocol_version="2025-11-25", **options) as pair:
        with pytest.raises(URLElicitationRequired) as info:
            await pair.client.call_tool("files_now")
    assert info.value.elicitations == [SIGN_IN]


async def test_no_elicitation_complete_for_a_client_without_url_mode() -> None:
    server, _ = sign_in_server()
    async with open_pair(server, protocol_version="2025-11-25", **Handlers().options()) as pair:
        await pair.client.call_tool("finish", {"elicitation_id": "c1"})
        sent = pair.server_sent.notifications("notifications/elicitation/complete")
    assert sent == []


def test_url_elicitation_required_needs_ids_and_survives_pickling() -> None:
    with pytest.raises(ValueError, match="no elicitation_id"):
        URLElicitationRequired([attrs.evolve(SIGN_IN, elicitation_id=None)])
    error = pickle.loads(pickle.dumps(URLElicitationRequired([SIGN_IN])))
    assert error.elicitations == [SIGN_IN]
    assert (error.code, error.message) == (-32042, "This request requires more information.")


def test_a_received_url_elicitation_error_keeps_what_it_can_read() -> None:
    data = {
        "elicitations": [
            {"mode": "url", "elicitationId": "a", "url": "https://a", "message": "A"},
            {"mode": "url", "url": "https://no-id", "message": "no id"},
            {"mode": "url", "elicitationId": "b"},  # no url, no message
            "junk",
        ]
    }
    error = McpError.from_error(
        rpc.ErrorResponse(1, McpError("m", code=-32042, data=data).error).error
    )
    assert isinstance(error, URLElicitationRequired)
    assert [e.elicitation_id for e in error.elicitations] == ["a"]
    assert error.data == data
    assert isinstance(McpError.from_error(McpError("m", code=-32042).error), URLElicitationRequired)
