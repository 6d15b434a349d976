"""requestState sealed by one worker opens on another sharing the fleet's keys, and
keeps opening across a key rotation while a tampered or foreign state is refused."""

from __future__ import annotations

from typing import Any

import pytest
from feature_harness import MODERN, open_raw

from trio_mcp import Context, Server
from trio_mcp._errors import McpError
from trio_mcp._server._request_state import RequestStateSealer, binding_of
from trio_mcp.types import ClientCapabilities, ElicitationCapability

OLD = b"o" * 32
NEW = b"n" * 32
BINDING = binding_of("tools/call", {"name": "echo", "arguments": {"x": 1}})


def _seal(sealer: RequestStateSealer) -> str:
    return sealer.seal(binding=BINDING, answers={"a": 1}, pending=("b",), round=1)


def test_state_sealed_on_one_worker_opens_on_another_with_the_same_key() -> None:
    worker_a = RequestStateSealer(NEW, clock=lambda: 1000.0)
    worker_b = RequestStateSealer(NEW, clock=lambda: 1000.0)
    opened = worker_b.open(_seal(worker_a), binding=BINDING)
    assert opened.answers == {"a": 1}
    assert opened.pending == ("b",)
    assert opened.round == 1


def test_rotation_opens_states_sealed_with_a_previous_key() -> None:
    before = RequestStateSealer(OLD, clock=lambda: 1000.0)
    state = _seal(before)
    after = RequestStateSealer(NEW, previous=[OLD], clock=lambda: 1000.0)
    assert after.open(state, binding=BINDING).answers == {"a": 1}


def test_rotation_seals_new_states_with_the_newest_key() -> None:
    after = RequestStateSealer(NEW, previous=[OLD], clock=lambda: 1000.0)
    state = _seal(after)
    # A worker that only knows the newest key opens it; one that only knows the old cannot.
    assert RequestStateSealer(NEW, clock=lambda: 1000.0).open(state, binding=BINDING).round == 1
    with pytest.raises(McpError, match="altered"):
        RequestStateSealer(OLD, clock=lambda: 1000.0).open(state, binding=BINDING)


def test_a_dropped_key_no_longer_opens_its_states() -> None:
    state = _seal(RequestStateSealer(OLD, clock=lambda: 1000.0))
    with pytest.raises(McpError, match="altered") as caught:
        RequestStateSealer(NEW, clock=lambda: 1000.0).open(state, binding=BINDING)
    assert caught.value.code == -32602


def test_tampered_state_is_refused_with_any_key() -> None:
    state = _seal(RequestStateSealer(OLD, clock=lambda: 1000.0))
    version, payload, tag = state.split(".")
    tampered = f"{version}.{payload[:-2]}AA.{tag}"
    sealer = RequestStateSealer(NEW, previous=[OLD], clock=lambda: 1000.0)
    with pytest.raises(McpError, match="altered"):
        sealer.open(tampered, binding=BINDING)


def test_expired_state_sealed_with_an_old_key_is_refused() -> None:
    state = _seal(RequestStateSealer(OLD, ttl=60, clock=lambda: 1000.0))
    later = RequestStateSealer(NEW, previous=[OLD], ttl=60, clock=lambda: 1062.0)
    with pytest.raises(McpError, match="expired"):
        later.open(state, binding=BINDING)


def test_a_short_previous_key_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"previous\[1\] key must be at least 16 bytes"):
        RequestStateSealer(NEW, previous=[OLD, b"short"])


async def test_a_fleet_rotates_its_server_secret_without_refusing_rounds_in_flight() -> None:
    """Two servers, as two workers: the first still seals with the old key, the second has
    rotated (new key, the old one kept in previous_secrets). A round asked by the first is
    finished by the second; one sealed by a key the second dropped is refused."""
    old, new = b"o" * 32, b"n" * 32

    def make(**keys: Any) -> Server:
        server = Server("rotating", **keys)

        @server.tool()
        async def ask(ctx: Context) -> str:
            answer = await ctx.elicit("Name?", {"properties": {"n": {"type": "string"}}}, key="n")
            return f"hi {(answer.content or {}).get('n')}"

        return server

    capabilities = ClientCapabilities(elicitation=ElicitationCapability(form={}))
    before, after = make(secret=old), make(secret=new, previous_secrets=[old])
    async with open_raw(before, MODERN, capabilities=capabilities) as a:
        first = await a.session.send_request("tools/call", {"name": "ask"}, model=dict)
    retry = {
        "name": "ask",
        "requestState": first.request_state,
        "inputResponses": {"n": {"action": "accept", "content": {"n": "Ada"}}},
    }
    async with open_raw(after, MODERN, capabilities=capabilities) as b:
        done = await b.session.send_request("tools/call", retry, model=dict)
        assert done["content"][0]["text"] == "hi Ada"
    async with open_raw(make(secret=new), MODERN, capabilities=capabilities) as c:
        with pytest.raises(McpError) as refused:
            await c.session.send_request("tools/call", retry, model=dict)
        assert refused.value.code == -32602
    with pytest.raises(ValueError, match=r"previous_secrets\[0\]"):
        Server("x", previous_secrets=[b"short"])
