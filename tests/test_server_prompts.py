"""Prompts, in both eras: arguments, every message content type, errors."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from feature_harness import ERAS, open_pair

from trio_mcp import ErrorCode, McpError, Server
from trio_mcp.types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    GetPromptResult,
    Icon,
    ImageContent,
    PromptArgument,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
)


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


IMAGE = ImageContent.from_bytes(b"\x89PNG", "image/png")
AUDIO = AudioContent.from_bytes(b"RIFF", "audio/wav")
LINK = ResourceLink(uri="file:///main.rs", name="main.rs", mime_type="text/x-rust")
EMBEDDED_TEXT = EmbeddedResource(
    resource=TextResourceContents(uri="resource://doc", text="docs", mime_type="text/plain")
)
EMBEDDED_BLOB = EmbeddedResource(
    resource=BlobResourceContents.from_bytes("resource://bin", b"\0", "application/octet-stream")
)


def make_server() -> Server:
    server = Server("p")

    @server.prompt(title="Code review", icons=[Icon(src="https://example.com/r.svg")])
    def code_review(
        code: Annotated[str, "The code to review"],
        language: str | None = None,
        tone: Literal["kind", "blunt"] = "kind",
    ) -> str:
        """Asks the model to review code."""
        return f"Review this {language or 'code'} ({tone}):\n{code}"

    @server.prompt()
    async def everything() -> list[PromptMessage]:
        return [
            PromptMessage(role="user", content=TextContent(text="look")),
            PromptMessage(role="user", content=IMAGE),
            PromptMessage(role="user", content=AUDIO),
            PromptMessage(role="assistant", content=LINK),
            PromptMessage(role="user", content=EMBEDDED_TEXT),
            PromptMessage(role="user", content=EMBEDDED_BLOB),
        ]

    @server.prompt(name="plain-content", description="Content blocks become user messages")
    def plain() -> list[object]:
        return ["first", IMAGE]

    @server.prompt()
    def custom() -> GetPromptResult:
        return GetPromptResult(
            messages=[PromptMessage(role="assistant", content=TextContent(text="hi"))],
            description="custom description",
        )

    @server.prompt()
    def failing() -> str:
        raise RuntimeError("template store offline")

    @server.prompt()
    def wrong_type() -> int:
        return 3

    return server


async def test_listing_prompts_and_their_arguments(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        prompts = {p.name: p for p in await pair.client.list_prompts()}
    review = prompts["code_review"]
    assert list(prompts) == [
        "code_review",
        "everything",
        "plain-content",
        "custom",
        "failing",
        "wrong_type",
    ]
    assert review.title == "Code review"
    assert review.description == "Asks the model to review code."
    assert review.icons == [Icon(src="https://example.com/r.svg")]
    assert review.arguments == [
        PromptArgument(name="code", description="The code to review", required=True),
        PromptArgument(name="language", required=False),
        PromptArgument(name="tone", required=False),
    ]
    assert prompts["everything"].arguments is None
    assert prompts["plain-content"].description == "Content blocks become user messages"


async def test_getting_a_prompt_with_required_and_optional_arguments(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        short = await pair.client.get_prompt("code_review", {"code": "x = 1"})
        full = await pair.client.get_prompt(
            "code_review", {"code": "x = 1", "language": "Python", "tone": "blunt"}
        )
    assert short.messages == [
        PromptMessage(role="user", content=TextContent(text="Review this code (kind):\nx = 1"))
    ]
    assert short.description == "Asks the model to review code."
    assert full.messages[0].content == TextContent(text="Review this Python (blunt):\nx = 1")


async def test_bare_decorator_registers_the_prompt(version: str) -> None:
    server = Server("t")

    @server.prompt
    def greet(name: str) -> str:
        """Greets someone."""
        return f"Hello, {name}"

    async with open_pair(server, protocol_version=version) as pair:
        (listed,) = await pair.client.list_prompts()
        got = await pair.client.get_prompt("greet", {"name": "Ada"})
    assert listed.name == "greet"
    assert listed.description == "Greets someone."
    assert listed.arguments == [PromptArgument(name="name", required=True)]
    assert got.messages == [PromptMessage(role="user", content=TextContent(text="Hello, Ada"))]
    assert greet("Bo") == "Hello, Bo"  # returned unchanged


@pytest.mark.parametrize(
    ("name", "arguments", "needle"),
    [
        ("code_review", None, "needs code"),
        ("code_review", {"language": "Go"}, "needs code"),
        ("code_review", {"code": "x", "tone": "rude"}, "tone: expected one of"),
        ("nope", {}, "unknown prompt 'nope'"),
    ],
)
async def test_bad_requests_are_invalid_params(
    version: str, name: str, arguments: dict[str, str] | None, needle: str
) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.get_prompt(name, arguments)
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert needle in info.value.message


async def test_every_message_content_type(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        everything = await pair.client.get_prompt("everything")
        plain = await pair.client.get_prompt("plain-content")
        custom = await pair.client.get_prompt("custom")
    assert [m.content for m in everything.messages] == [
        TextContent(text="look"),
        IMAGE,
        AUDIO,
        LINK,
        EMBEDDED_TEXT,
        EMBEDDED_BLOB,
    ]
    assert [m.role for m in everything.messages] == ["user"] * 3 + ["assistant"] + ["user"] * 2
    assert plain.messages == [
        PromptMessage(role="user", content=TextContent(text="first")),
        PromptMessage(role="user", content=IMAGE),
    ]
    assert custom.description == "custom description"


async def test_failing_prompts_are_internal_errors(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        with pytest.raises(McpError) as failing:
            await pair.client.get_prompt("failing")
        with pytest.raises(McpError) as wrong:
            await pair.client.get_prompt("wrong_type")
        assert (await pair.client.get_prompt("custom")).messages
    assert failing.value.code == ErrorCode.INTERNAL_ERROR
    assert "template store offline" in failing.value.message
    assert wrong.value.code == ErrorCode.INTERNAL_ERROR


@pytest.mark.parametrize("old", ["2024-11-05", "2025-03-26"])
async def test_old_revisions_get_content_they_can_read(old: str) -> None:
    async with open_pair(make_server(), protocol_version=old) as pair:
        everything = await pair.client.get_prompt("everything")
    kinds = [m.content.type for m in everything.messages]
    assert "resource_link" not in kinds
    assert ("audio" in kinds) == (old >= "2025-03-26")
    assert everything.messages[3] == PromptMessage(
        role="assistant", content=TextContent(text="main.rs: file:///main.rs (text/x-rust)")
    )


def test_prompt_arguments_must_be_strings() -> None:
    server = Server("p")
    with pytest.raises(TypeError, match="must be a str"):

        @server.prompt()
        def numbered(count: int) -> str:
            return str(count)


async def test_prompts_can_be_removed(version: str) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=version, cache=False) as pair:
        server.remove_prompt("failing")
        names = [p.name for p in await pair.client.list_prompts()]
        with pytest.raises(McpError):
            await pair.client.get_prompt("failing")
    assert "failing" not in names
