"""Multi round-trip requests (2026-07-28), driven with raw requests so the test controls
``inputResponses`` and ``requestState``: the state is sealed, bound to its request,
expiring, and checked; the client's answering loop is bounded."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from feature_harness import MODERN, open_pair, open_raw

from trio_mcp import Context, ErrorCode, McpError, Server
from trio_mcp.types import (
    ClientCapabilities,
    ElicitationCapability,
    ElicitResult,
    InputRequiredResult,
    RootsCapability,
    SamplingCapability,
)

EVERYTHING = ClientCapabilities(
    elicitation=ElicitationCapability(form={}, url={}),
    sampling=SamplingCapability(),
    roots=RootsCapability(),
)
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def make_server(clock: Clock | None = None, secret: bytes = b"s" * 32) -> Server:
    server = Server("m", secret=secret, request_state_ttl=60, **({"clock": clock} if clock else {}))

    @server.tool()
    async def greet(greeting: str, ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME_FORM)
        assert answer.content is not None
        return f"{greeting}, {answer.content['name']}"

    @server.tool()
    async def other(greeting: str, ctx: Context) -> str:
        await ctx.elicit("Name?", NAME_FORM)
        return "other"

    @server.prompt()
    async def hello(greeting: str, ctx: Context) -> str:
        await ctx.elicit("Name?", NAME_FORM)
        return "hello"

    @server.tool()
    async def twice(ctx: Context) -> str:
        first = await ctx.elicit("First?", NAME_FORM, key="first")
        second = await ctx.elicit("Second?", NAME_FORM, key="second")
        assert first.content is not None
        assert second.content is not None
        return f"{first.content['name']}+{second.content['name']}"

    @server.tool()
    async def forever(ctx: Context) -> str:
        await ctx.elicit(f"Round {ctx.round}?", NAME_FORM, key=f"round-{ctx.round}")
        return "never"

    return server


ANSWER = {"action": "accept", "content": {"name": "Ann"}}


async def first_round(raw: Any, name: str = "greet", greeting: str = "Hi") -> InputRequiredResult:
    result = await raw.request("tools/call", {"name": name, "arguments": {"greeting": greeting}})
    assert isinstance(result, InputRequiredResult)
    return result


async def test_input_required_result_shape() -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        await first_round(raw)
        (response,) = [m for m in raw.server_sent.sent if hasattr(m, "result")]
    result = response.result  # type: ignore[union-attr]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {
        "input-1": {
            "method": "elicitation/create",
            "params": {"message": "Name?", "requestedSchema": NAME_FORM},
        }
    }
    assert isinstance(result["requestState"], str)
    assert "ttlMs" not in result  # interim results carry no caching hints
    assert "cacheScope" not in result
    assert "content" not in result


async def test_retry_with_the_answer_completes() -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
        result = await raw.request(
            "tools/call",
            {
                "name": "greet",
                "arguments": {"greeting": "Hi"},
                "inputResponses": {"input-1": ANSWER, "unasked": {"whatever": 1}},
                "requestState": needed.request_state,
            },
        )
    assert result.content[0].text == "Hi, Ann"


async def test_a_missing_answer_is_asked_again() -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
        again = await raw.request(
            "tools/call",
            {
                "name": "greet",
                "arguments": {"greeting": "Hi"},
                "inputResponses": {"something-else": ANSWER},
                "requestState": needed.request_state,
            },
        )
    assert isinstance(again, InputRequiredResult)
    assert again.input_requests is not None
    assert list(again.input_requests) == ["input-1"]


async def test_answers_without_a_state_are_taken() -> None:
    """The conformance case input-required-result-ignore-extra-params: a client may answer
    without a state (there was no earlier round); unknown keys are ignored."""
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        done = await raw.request(
            "tools/call",
            {
                "name": "greet",
                "arguments": {"greeting": "Hi"},
                "inputResponses": {"input-1": ANSWER, "unexpected": {"x": 1}},
            },
        )
    assert done.content[0].text == "Hi, Ann"


async def test_state_carries_earlier_answers_across_rounds() -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        one = await raw.request("tools/call", {"name": "twice"})
        assert list(one.input_requests) == ["first"]
        two = await raw.request(
            "tools/call",
            {
                "name": "twice",
                "inputResponses": {"first": {"action": "accept", "content": {"name": "A"}}},
                "requestState": one.request_state,
            },
        )
        assert list(two.input_requests) == ["second"]
        done = await raw.request(
            "tools/call",
            {
                "name": "twice",
                # Only the pending key is read: a changed "first" answer is ignored.
                "inputResponses": {
                    "second": {"action": "accept", "content": {"name": "B"}},
                    "first": {"action": "accept", "content": {"name": "X"}},
                },
                "requestState": two.request_state,
            },
        )
    assert done.content[0].text == "A+B"


def tamper(state: str) -> list[str]:
    """Ways a client could alter a state: its payload, its tag, its format."""
    version, payload, tag = state.split(".")
    data = orjson.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data["a"] = {"input-1": ANSWER}  # slip in an answer
    forged = base64.urlsafe_b64encode(orjson.dumps(data)).rstrip(b"=").decode()
    flipped = tag[:-1] + ("A" if tag[-1] != "A" else "B")
    return [
        f"{version}.{forged}.{tag}",
        f"{version}.{payload}.{flipped}",
        f"v2.{payload}.{tag}",
        f"{payload}.{tag}",
        "garbage",
        "",
    ]


async def test_tampered_state_is_rejected() -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
        assert needed.request_state is not None
        for bad in tamper(needed.request_state):
            with pytest.raises(McpError) as info:
                await raw.request(
                    "tools/call",
                    {
                        "name": "greet",
                        "arguments": {"greeting": "Hi"},
                        "inputResponses": {"input-1": ANSWER},
                        "requestState": bad,
                    },
                )
            assert info.value.code == ErrorCode.INVALID_PARAMS
            assert "requestState" in info.value.message


async def test_a_state_that_is_not_a_string_is_invalid_params() -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        with pytest.raises(McpError) as info:
            await raw.request(
                "tools/call",
                {"name": "greet", "arguments": {"greeting": "Hi"}, "requestState": 42},
            )
    assert info.value.code == ErrorCode.INVALID_PARAMS


async def test_expired_state_is_rejected() -> None:
    clock = Clock()
    async with open_raw(make_server(clock), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
        clock.now += 62
        with pytest.raises(McpError) as info:
            await raw.request(
                "tools/call",
                {
                    "name": "greet",
                    "arguments": {"greeting": "Hi"},
                    "inputResponses": {"input-1": ANSWER},
                    "requestState": needed.request_state,
                },
            )
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert "expired" in info.value.message


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "greet", "arguments": {"greeting": "Bye"}}),
        ("tools/call", {"name": "other", "arguments": {"greeting": "Hi"}}),
        ("tools/call", {"name": "greet", "arguments": {"greeting": "Hi", "extra": 1}}),
        ("prompts/get", {"name": "hello", "arguments": {"greeting": "Hi"}}),
    ],
)
async def test_state_of_another_request_is_rejected(method: str, params: dict[str, Any]) -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
        with pytest.raises(McpError) as info:
            await raw.request(
                method,
                {
                    **params,
                    "inputResponses": {"input-1": ANSWER},
                    "requestState": needed.request_state,
                },
            )
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert "another request" in info.value.message


async def test_state_from_another_server_only_with_the_shared_secret() -> None:
    async with open_raw(make_server(secret=b"a" * 32), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
    retry = {
        "name": "greet",
        "arguments": {"greeting": "Hi"},
        "inputResponses": {"input-1": ANSWER},
        "requestState": needed.request_state,
    }
    async with open_raw(make_server(secret=b"a" * 32), MODERN, capabilities=EVERYTHING) as raw:
        result = await raw.request("tools/call", retry)
    assert result.content[0].text == "Hi, Ann"
    async with open_raw(make_server(secret=b"b" * 32), MODERN, capabilities=EVERYTHING) as raw:
        with pytest.raises(McpError) as info:
            await raw.request("tools/call", retry)
    assert info.value.code == ErrorCode.INVALID_PARAMS


async def test_a_state_is_bound_to_its_principal() -> None:
    """The spec's SHOULD: a state issued to one principal is refused when another presents
    it (here the principal is the connection's, given to ``Server.serve``)."""
    server = make_server()
    async with open_raw(
        server, MODERN, capabilities=EVERYTHING, server_options={"principal": "alice"}
    ) as raw:
        needed = await first_round(raw)
    retry = {
        "name": "greet",
        "arguments": {"greeting": "Hi"},
        "inputResponses": {"input-1": ANSWER},
        "requestState": needed.request_state,
    }
    for thief in ({"principal": "mallory"}, {}):
        async with open_raw(server, MODERN, capabilities=EVERYTHING, server_options=thief) as raw:
            with pytest.raises(McpError) as info:
                await raw.request("tools/call", retry)
        assert info.value.code == ErrorCode.INVALID_PARAMS
        assert "another principal" in info.value.message
    async with open_raw(
        server, MODERN, capabilities=EVERYTHING, server_options={"principal": "alice"}
    ) as raw:
        result = await raw.request("tools/call", retry)
    assert result.content[0].text == "Hi, Ann"


async def test_handlers_see_the_principal() -> None:
    server = Server("p")

    @server.tool()
    async def whoami(ctx: Context) -> str:
        return repr(ctx.principal)

    async with open_raw(server, MODERN, server_options={"principal": "alice"}) as raw:
        alice = await raw.request("tools/call", {"name": "whoami"})
    async with open_raw(server, MODERN) as raw:
        nobody = await raw.request("tools/call", {"name": "whoami"})
    assert alice.content[0].text == "'alice'"
    assert nobody.content[0].text == "None"


@pytest.mark.usefixtures("front_end")
async def test_over_http_the_asgi_principal_hook_binds_the_state() -> None:
    """``asgi_app(principal=...)`` names each stateless request's caller from its scope (as
    an authentication middleware would); a state replayed by another caller is refused."""
    import httpx
    from http_support import modern_body, modern_headers, running

    from trio_mcp.http import asgi_app

    def user_of(scope: dict[str, Any]) -> str | None:
        return dict(scope["headers"]).get(b"x-user", b"").decode() or None

    app = asgi_app(make_server(), principal=user_of)
    body = modern_body(1, "tools/call", {"name": "greet", "arguments": {"greeting": "Hi"}})
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {}}
    headers = modern_headers("tools/call", "greet")
    async with running(app) as base, httpx.AsyncClient(timeout=10) as client:
        url = base + "/mcp"
        first = await client.post(url, json=body, headers={**headers, "x-user": "alice"})
        state = first.json()["result"]["requestState"]
        body["params"].update(inputResponses={"input-1": ANSWER}, requestState=state)
        stolen = await client.post(url, json=body, headers={**headers, "x-user": "bob"})
        anonymous = await client.post(url, json=body, headers=headers)
        owned = await client.post(url, json=body, headers={**headers, "x-user": "alice"})
    for refused in (stolen, anonymous):
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == ErrorCode.INVALID_PARAMS
        assert "another principal" in refused.json()["error"]["message"]
    assert owned.json()["result"]["content"] == [{"type": "text", "text": "Hi, Ann"}]


async def test_answers_to_questions_not_asked_are_ignored() -> None:
    """With a state, only the keys it lists as pending are read from ``inputResponses``:
    an answer to a question the server has not asked yet is not taken (nor sealed)."""
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        one = await raw.request("tools/call", {"name": "twice"})
        assert list(one.input_requests) == ["first"]
        two = await raw.request(
            "tools/call",
            {
                "name": "twice",
                "inputResponses": {
                    "first": {"action": "accept", "content": {"name": "A"}},
                    "second": {"action": "accept", "content": {"name": "Early"}},
                },
                "requestState": one.request_state,
            },
        )
        assert isinstance(two, InputRequiredResult)
        assert list(two.input_requests) == ["second"]
        done = await raw.request(
            "tools/call",
            {
                "name": "twice",
                "inputResponses": {"second": {"action": "accept", "content": {"name": "B"}}},
                "requestState": two.request_state,
            },
        )
    assert done.content[0].text == "A+B"


async def test_a_malformed_answer_is_invalid_params() -> None:
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
        with pytest.raises(McpError) as info:
            await raw.request(
                "tools/call",
                {
                    "name": "greet",
                    "arguments": {"greeting": "Hi"},
                    "inputResponses": {"input-1": {"action": "maybe"}},
                    "requestState": needed.request_state,
                },
            )
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert "input-1" in info.value.message


async def test_the_server_checks_an_answer_against_its_schema() -> None:
    """Clients should check form answers before sending them; the server does not rely on
    it."""
    async with open_raw(make_server(), MODERN, capabilities=EVERYTHING) as raw:
        needed = await first_round(raw)
        with pytest.raises(McpError) as info:
            await raw.request(
                "tools/call",
                {
                    "name": "greet",
                    "arguments": {"greeting": "Hi"},
                    "inputResponses": {"input-1": {"action": "accept", "content": {"name": 5}}},
                    "requestState": needed.request_state,
                },
            )
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert "does not match the requested schema" in info.value.message


async def test_missing_capability_is_32021_with_required_capabilities() -> None:
    async with open_raw(make_server(), MODERN) as raw:
        with pytest.raises(McpError) as info:
            await raw.request("tools/call", {"name": "greet", "arguments": {"greeting": "Hi"}})
        (error,) = [m for m in raw.server_sent.sent if hasattr(m, "error")]
    assert info.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.error.data == {"requiredCapabilities": {"elicitation": {}}}  # type: ignore[union-attr]


@pytest.mark.parametrize("rounds", [0, 1, 3])
async def test_the_client_gives_up_after_max_input_rounds(rounds: int) -> None:
    asked: list[str] = []

    async def elicitation(params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"name": "Ann"})

    async with open_pair(
        make_server(), protocol_version=MODERN, elicitation=elicitation, max_input_rounds=rounds
    ) as pair:
        with pytest.raises(McpError, match=f"still wanted input after {rounds} rounds"):
            await pair.client.call_tool("forever")
        calls = pair.client_sent.requests("tools/call")
    assert len(calls) == rounds + 1  # the first request and the retries
    # The user is asked once per retry sent, never for answers that would be thrown away.
    assert asked == [f"Round {n}?" for n in range(rounds)]


async def test_legacy_requests_ignore_mrtr_fields() -> None:
    async with open_raw(make_server(), "2025-11-25", capabilities=EVERYTHING) as raw:
        # A legacy server asks with a request of its own; this client cannot answer it.
        with pytest.raises(McpError):
            await raw.request(
                "tools/call",
                {"name": "greet", "arguments": {"greeting": "Hi"}, "requestState": "garbage"},
            )
        assert raw.server_sent.requests("elicitation/create")
