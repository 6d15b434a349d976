"""The security scans read what a server answers, which may be anything: whatever the
statuses, session ids, event ids and messages (any JSON objects, with any members), the
identity and cross-talk scans end with findings and notes, never an exception. A fake wire
stands in for HTTP, answering each exchange with what Hypothesis draws."""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import given, settings, strategies as st

from trio_mcp._fuzz._crosstalk import scan_crosstalk
from trio_mcp._fuzz._identity_scan import scan_identities
from trio_mcp._fuzz._probe import Catalogue, EraCatalogue
from trio_mcp._fuzz._wire import Exchange, Wire
from trio_mcp.fuzz import Identity

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
#: Members that the scans look at, with values of any type.
KEYS = [
    "id",
    "result",
    "error",
    "method",
    "params",
    "taskId",
    "status",
    "requestState",
    "inputRequests",
    "resultType",
    "notifications",
    "taskIds",
    "progressToken",
    "code",
]
OBJECT = st.recursive(
    st.dictionaries(st.sampled_from(KEYS), JSON, max_size=5),
    lambda inner: st.dictionaries(st.sampled_from(KEYS), inner | JSON, max_size=5),
    max_leaves=10,
)
IDS = st.sampled_from(["alice-1", "alice-2", "bob-3", "init", 1, 2, 3, None])


def message(data: st.DataObject) -> dict[str, Any]:
    found: dict[str, Any] = data.draw(OBJECT, label="message")
    if data.draw(st.booleans(), label="with a known id"):
        found["id"] = data.draw(IDS, label="id")
    return found


def exchange(data: st.DataObject) -> Exchange:
    return Exchange(
        status=data.draw(st.sampled_from([0, 200, 202, 400, 403, 404, 500]), label="status"),
        session_id=data.draw(st.none() | st.text(max_size=6), label="session"),
        messages=tuple(message(data) for _ in range(data.draw(st.integers(0, 3), label="n"))),
        event_ids=tuple(data.draw(st.lists(st.text(max_size=4), max_size=2), label="ev")),
    )


class HostileWire(Wire):
    """Every exchange answers the next of a few drawn answers, in turn (drawn before the
    scan runs: its clients run concurrently, where Hypothesis cannot draw)."""

    def __init__(self, answers: list[Exchange], era: str, version: str) -> None:
        super().__init__(None, "http://127.0.0.1:9/mcp", era, version, window=1.0)  # type: ignore[arg-type]
        self.answers = answers
        self.count = 0

    async def _exchange(self, *args: Any, **kwargs: Any) -> Exchange:
        await trio.lowlevel.checkpoint()
        self.count += 1
        return self.answers[self.count % len(self.answers)]


TOOLS = (
    {
        "name": "echo",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "work",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "number"}},
            "required": ["n"],
        },
        "execution": {"taskSupport": "optional"},
    },
)
CATALOGUE = Catalogue(
    eras={
        "modern": EraCatalogue(
            era="modern",
            version="2026-07-28",
            capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}},
            tools=TOOLS,
        ),
        "legacy": EraCatalogue(
            era="legacy", version="2025-11-25", capabilities={"tasks": {}}, tools=TOOLS
        ),
    }
)
IDENTITIES = (
    Identity(name="alice", headers={"Authorization": "Bearer a"}),
    Identity(name="bob", headers={"Authorization": "Bearer b"}),
)


@settings(max_examples=60, deadline=None)
@given(st.data())
async def test_no_answer_crashes_the_identity_or_cross_talk_scan(data: st.DataObject) -> None:
    answers = [exchange(data) for _ in range(data.draw(st.integers(1, 12), label="answers"))]
    wires = {
        "modern": HostileWire(answers, "modern", "2026-07-28"),
        "legacy": HostileWire(answers, "legacy", "2025-11-25"),
    }
    findings, notes = await scan_identities(wires, IDENTITIES, CATALOGUE)
    for finding in findings:
        assert finding.invariant.startswith("identity-")
        assert "Bearer" not in str(finding.transcript)  # tokens stay out of reports
    findings, _ = await scan_crosstalk(wires, {}, CATALOGUE, clients=3)
    assert all(f.invariant.startswith("crosstalk-") for f in findings)
