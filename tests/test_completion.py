"""Completion of prompt arguments and template variables, in both eras."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from feature_harness import ERAS, MODERN, open_pair, open_raw

from trio_mcp import Context, ErrorCode, McpError, Server
from trio_mcp.server import MAX_VALUES
from trio_mcp.types import Completion, PromptReference, ResourceTemplateReference

LANGUAGES = ["python", "pytorch", "pyside", "perl", "php", "go"]
FRAMEWORKS = {"python": ["flask", "fastapi", "django"], "go": ["gin"]}


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


def make_server() -> Server:
    server = Server("c")

    @server.prompt()
    def code_review(language: str, framework: str | None = None) -> str:
        return f"{language}/{framework}"

    @server.resource("repo://{owner}/{name}")
    def repo(owner: str, name: str) -> str:
        return f"{owner}/{name}"

    @server.resource("static://x")
    def static() -> str:
        return "x"

    @server.completion(prompt="code_review", argument="language")
    def languages(value: str, context: Mapping[str, str]) -> list[str]:
        return [lang for lang in LANGUAGES if lang.startswith(value)]

    @server.completion(prompt="code_review", argument="framework")
    async def frameworks(value: str, context: Mapping[str, str]) -> list[str]:
        return [f for f in FRAMEWORKS.get(context.get("language", ""), []) if f.startswith(value)]

    @server.completion(resource_template="repo://{owner}/{name}", argument="name")
    def names(value: str, context: Mapping[str, str]) -> list[str]:
        return [f"{context.get('owner', '?')}-repo-{i}" for i in range(250)]

    @server.completion(resource_template="repo://{owner}/{name}", argument="owner")
    def owners(value: str, context: Mapping[str, str]) -> Completion:
        return Completion(values=["trio", "python-trio"], total=40, has_more=True)

    return server


async def test_prompt_argument_completion(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        py = await pair.client.complete(PromptReference(name="code_review"), "language", "py")
        nothing = await pair.client.complete(PromptReference(name="code_review"), "language", "z")
    assert py == Completion(values=["python", "pytorch", "pyside"], total=3, has_more=False)
    assert nothing == Completion(values=[], total=0, has_more=False)


async def test_context_arguments_reach_the_completer(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        ref = PromptReference(name="code_review")
        flask = await pair.client.complete(ref, "framework", "fl", context={"language": "python"})
        gin = await pair.client.complete(ref, "framework", "", context={"language": "go"})
        none = await pair.client.complete(ref, "framework", "")
    assert flask.values == ["flask"]
    assert gin.values == ["gin"]
    assert none.values == []


async def test_at_most_100_values_with_total_and_has_more(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        ref = ResourceTemplateReference(uri="repo://{owner}/{name}")
        many = await pair.client.complete(ref, "name", "", context={"owner": "trio"})
        given = await pair.client.complete(ref, "owner", "t")
    assert len(many.values) == MAX_VALUES == 100
    assert many.values[0] == "trio-repo-0"
    assert many.total == 250
    assert many.has_more is True
    assert given == Completion(values=["trio", "python-trio"], total=40, has_more=True)


async def test_unknown_references_are_invalid_params(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        with pytest.raises(McpError) as prompt:
            await pair.client.complete(PromptReference(name="nope"), "x", "")
        with pytest.raises(McpError) as template:
            await pair.client.complete(ResourceTemplateReference(uri="nope://{x}"), "x", "")
        unknown_argument = await pair.client.complete(PromptReference(name="code_review"), "x", "")
        static = await pair.client.complete(ResourceTemplateReference(uri="static://x"), "x", "")
    assert prompt.value.code == ErrorCode.INVALID_PARAMS
    assert template.value.code == ErrorCode.INVALID_PARAMS
    assert unknown_argument.values == []
    assert static.values == []  # a plain URI is a valid reference, with nothing to complete


async def test_completer_failure_is_an_internal_error(version: str) -> None:
    server = make_server()

    @server.completion(prompt="code_review", argument="language")
    def broken(value: str, context: Mapping[str, str]) -> list[str]:
        raise RuntimeError("index offline")

    async with open_pair(server, protocol_version=version) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.complete(PromptReference(name="code_review"), "language", "p")
    assert info.value.code == ErrorCode.INTERNAL_ERROR


async def test_servers_without_completions_answer_method_not_found(version: str) -> None:
    server = Server("bare", tools=True)
    assert server.capabilities().completions is None
    async with open_raw(server, version) as raw:
        with pytest.raises(McpError) as info:
            await raw.session.send_request(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "x"},
                    "argument": {"name": "a", "value": ""},
                },
            )
    assert info.value.code == ErrorCode.METHOD_NOT_FOUND


def test_completion_needs_exactly_one_target() -> None:
    server = Server("c")
    with pytest.raises(TypeError):
        server.completion(argument="a")
    with pytest.raises(TypeError):
        server.completion(argument="a", prompt="p", resource_template="t://{a}")


async def test_completion_in_2025_03_26_has_no_context() -> None:
    async with open_pair(make_server(), protocol_version="2025-03-26") as pair:
        ref = PromptReference(name="code_review")
        result = await pair.client.complete(ref, "framework", "", context={"language": "python"})
        (request,) = pair.client_sent.requests("completion/complete")
    assert request.params is not None
    assert "context" not in request.params
    assert result.values == []


_ = MODERN


async def test_a_completer_may_take_the_context(version: str) -> None:
    """Like tools and prompts, a completer gets the request's Context by annotating a
    parameter with it."""
    server = Server("c")
    seen: list[Context] = []

    @server.prompt()
    def greet(name: str) -> str:
        return name

    @server.completion(prompt="greet", argument="name")
    async def names(value: str, context: Mapping[str, str], ctx: Context) -> list[str]:
        seen.append(ctx)
        await ctx.info(f"completing {value!r}")
        return [f"{value}-{ctx.protocol_version}"]

    async with open_pair(server, protocol_version=version) as pair:
        completion = await pair.client.complete(PromptReference(name="greet"), "name", "a")
    assert completion.values == [f"a-{version}"]
    (ctx,) = seen
    assert ctx.method == "completion/complete"
    assert not ctx.cancelled


def test_the_context_parameter_comes_after_value_and_context() -> None:
    server = Server("c")
    with pytest.raises(TypeError, match="must come after"):

        @server.completion(prompt="p", argument="a")
        def wrong(ctx: Context, value: str) -> list[str]:
            return []
