"""The fuzzer's checker, fed by hand: each invariant fires on the behaviour it forbids
and stays quiet on the behaviour the spec allows. Plus the reproduction format and
the message-level minimizer."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
import trio

from trio_mcp._fuzz._checker import Checker
from trio_mcp._fuzz._minimize import culprit_alone, minimize
from trio_mcp._fuzz._steps import (
    Await,
    Disconnect,
    Expect,
    HttpRequest,
    Send,
    Settle,
    Sleep,
    dump_steps,
    iter_sent_lines,
    load_steps,
)
from trio_mcp._fuzz._validate import Validator

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = Path(os.environ.get("TRIO_MCP_SPEC_DIR", ROOT.parent / "shared" / "spec"))

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Harness:
    """A checker and a clock, with messages as plain dicts."""

    def __init__(
        self, era: str = "legacy", *, deadline: float = 5.0, transport: str = "stdio"
    ) -> None:
        self.checker = Checker(Validator(SPEC_DIR), era=era, deadline=deadline, transport=transport)
        self.seq = 0
        self.now = 0.0

    def send(self, message: Any, expect: Expect | None = None) -> None:
        self.seq += 1
        data = message if isinstance(message, bytes) else orjson.dumps(message)
        self.checker.on_send(data, expect, self.seq, self.now)

    def receive(self, message: Any) -> list[Any]:
        from trio_mcp._jsonrpc import parse

        self.seq += 1
        return self.checker.on_receive(parse(orjson.dumps(message)), self.seq, self.now)

    def failed(self) -> list[str]:
        self.checker.check_deadlines(self.now, self.seq)
        return [f.invariant.name for f in self.checker.take_findings()]

    def handshake(self, version: str = "2025-11-25", capabilities: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
        self.receive(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": version,
                    "capabilities": capabilities if capabilities is not None else {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            }
        )


def request(id: Any, method: str = "ping", params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def result(id: Any, value: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": {} if value is None else value}


def error(id: Any, code: int, message: str = "no") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def test_a_well_behaved_exchange_fails_nothing() -> None:
    h = Harness()
    h.handshake()
    h.send(request(1))
    h.receive(result(1))
    h.send(request("a", "tools/list"))
    h.receive(result("a", {"tools": []}))
    assert h.failed() == []


def test_ids_must_come_back_exactly() -> None:
    h = Harness()
    h.handshake()
    h.send(request("7"))
    h.receive(result(7))
    assert h.failed() == ["response-id-matches-request"]
    h.send(request(8))
    h.receive(result(99))
    assert h.failed() == ["response-id-matches-request"]


def test_one_response_per_request() -> None:
    h = Harness()
    h.handshake()
    h.send(request(1))
    h.receive(result(1))
    h.receive(result(1))
    assert h.failed() == ["one-response-per-request"]


def test_an_id_may_be_used_again_once_answered() -> None:
    h = Harness()
    h.handshake()
    for _ in range(2):
        h.send(request(1))
        h.receive(result(1))
    assert h.failed() == []


def test_a_hang_is_a_failure_once_the_deadline_passes() -> None:
    h = Harness(deadline=2.0)
    h.handshake()
    h.send(request(1))
    h.now = 1.9
    assert h.failed() == []
    h.now = 2.1
    assert h.failed() == ["request-answered"]
    h.now = 10.0
    assert h.failed() == []  # reported once


def test_a_notification_is_never_answered() -> None:
    h = Harness()
    h.handshake()
    h.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
    h.receive(error(None, -32601))
    assert h.failed() == ["no-response-to-notification"]


def test_invalid_json_may_get_a_parse_error_with_a_null_id_but_not_another_code() -> None:
    h = Harness()
    h.handshake()
    h.send(b"{not json")
    h.receive(error(None, -32700))
    assert h.failed() == []
    h.send(b"{not json")
    h.receive(error(None, -32603))
    assert h.failed() == ["parse-error-code"]


def test_silence_on_invalid_json_is_a_warning_once_a_later_request_is_answered() -> None:
    h = Harness()
    h.handshake()
    h.send(b"{not json")
    h.send(request(1))
    h.receive(result(1))
    findings = h.checker.take_findings()
    assert [(f.invariant.name, f.invariant.level) for f in findings] == [
        ("parse-error-answered", "SHOULD")
    ]


def test_expected_error_codes() -> None:
    h = Harness()
    h.handshake()
    wanted = Expect(error_codes=(-32601,), error_invariant="method-not-found-code", result_ok=False)
    h.send(request(1, "nope"), wanted)
    h.receive(error(1, -32601))
    h.send(request(2, "nope"), wanted)
    h.receive(error(2, -32600))
    h.send(request(3, "nope"), wanted)
    h.receive(result(3))
    assert h.failed() == ["method-not-found-code", "method-not-found-code"]


def test_a_late_answer_to_a_cancelled_request_fails_only_once_the_server_read_the_cancel() -> None:
    h = Harness("modern")
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    # The race the spec allows: the answer crossed the cancellation.
    h.send(request(1, "tools/call", {"name": "slow", "_meta": MODERN_META}))
    h.send(cancel)
    h.send(request(2, "server/discover", {"_meta": MODERN_META}))
    h.receive({**result(1, {"content": [], "resultType": "complete"})})
    assert h.failed() == []
    # A later request answered first: the server had read the cancellation, then answered.
    h.send(request(3, "tools/call", {"name": "slow", "_meta": MODERN_META}))
    h.send({**cancel, "params": {"requestId": 3}})
    h.send(request(4, "server/discover", {"_meta": MODERN_META}))
    h.receive(error(4, -32000))
    h.receive(result(3, {"content": [], "resultType": "complete"}))
    assert h.failed() == ["cancelled-request-not-answered"]


def test_in_the_legacy_era_answering_a_cancelled_request_is_a_should() -> None:
    h = Harness()
    h.handshake()
    h.send(request(1, "tools/call", {"name": "slow"}))
    h.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    h.send(request(2))
    h.receive(result(2))
    h.receive(result(1, {"content": []}))
    [finding] = h.checker.take_findings()
    assert (finding.invariant.name, finding.invariant.level) == (
        "cancelled-request-not-answered-legacy",
        "SHOULD",
    )


def test_over_http_the_arrival_order_of_answers_proves_nothing_about_a_cancel() -> None:
    """Each HTTP request is answered on its own response: a later request's answer read
    first does not show that the server had read the cancellation (a run of our own
    server over legacy HTTP reported exactly this as a warning, once in five CI runs)."""
    h = Harness()
    h.checker.transport = "http"
    h.handshake()
    h.send(request(1, "tools/call", {"name": "slow"}))
    h.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    h.send(request(2))
    h.receive(result(2))
    h.receive(result(1, {"content": []}))
    assert h.checker.take_findings() == []


def test_structured_content_must_match_the_output_schema() -> None:
    h = Harness()
    h.handshake()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    h.send(request(1, "tools/call", {"name": "t"}), Expect(output_schema=schema))
    h.receive(result(1, {"content": [], "structuredContent": {"n": 1}}))
    h.send(request(2, "tools/call", {"name": "t"}), Expect(output_schema=schema))
    h.receive(result(2, {"content": [], "structuredContent": {"n": "one"}}))
    h.send(request(3, "tools/call", {"name": "t"}), Expect(output_schema=schema))
    h.receive(result(3, {"content": [], "isError": True}))
    assert h.failed() == ["structured-content-matches-output-schema"]


def test_an_input_required_result_owes_no_structured_content() -> None:
    h = Harness("modern")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    asks = {"resultType": "input_required", "inputRequests": {"q": {"method": "roots/list"}}}
    h.send(
        request(1, "tools/call", {"name": "t", "_meta": MODERN_META}), Expect(output_schema=schema)
    )
    h.receive(result(1, asks))
    assert h.failed() == []
    h.send(
        request(2, "tools/call", {"name": "t", "_meta": MODERN_META}), Expect(output_schema=schema)
    )
    h.receive(result(2, {"content": [], "resultType": "complete"}))
    assert h.failed() == ["structured-content-matches-output-schema"]


def test_progress_only_for_live_tokens_and_always_increasing() -> None:
    h = Harness()
    h.handshake()
    h.send(request(1, "tools/call", {"name": "t", "_meta": {"progressToken": "p"}}))
    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
    h.receive({**progress, "params": {"progressToken": "p", "progress": 1}})
    h.receive({**progress, "params": {"progressToken": "p", "progress": 2}})
    assert h.failed() == []
    h.receive({**progress, "params": {"progressToken": "p", "progress": 2}})
    assert h.failed() == ["progress-increases"]
    h.receive(result(1, {"content": []}))
    h.receive({**progress, "params": {"progressToken": "p", "progress": 3}})
    h.receive({**progress, "params": {"progressToken": "never", "progress": 1}})
    assert h.failed() == ["progress-token-active", "progress-token-active"]


def test_over_http_progress_after_the_answer_on_another_stream_is_no_finding() -> None:
    """Over HTTP a request's progress may come on another stream than its answer (the GET
    stream, a resumed one), read by another task: arriving after the answer says nothing
    of the order the server sent them in (the HTTP connection judges one stream's order).
    A token no request was given is still a finding."""
    h = Harness(transport="http")
    h.handshake()
    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
    h.send(request(1, "tools/call", {"name": "t", "_meta": {"progressToken": "H"}}))
    h.receive(result(1, {"content": []}))
    h.receive({**progress, "params": {"progressToken": "H", "progress": 1}})
    assert h.failed() == []
    h.receive({**progress, "params": {"progressToken": "never", "progress": 1}})
    assert h.failed() == ["progress-token-active"]


def test_a_token_given_again_lives_until_its_latest_request_is_answered() -> None:
    # The fuzzer's own calls may (before issue 26's fix, did) give a token still in use to
    # a second request. Answering the first must not end the second's token: its progress
    # is no server bug ("progress for token ..., whose request was already answered").
    h = Harness()
    h.handshake()
    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
    h.send(request(1, "tools/call", {"name": "t", "_meta": {"progressToken": "H"}}))
    h.send(request(2, "tools/call", {"name": "t", "_meta": {"progressToken": "H"}}))
    assert h.checker.progress_token_active("H")
    h.receive(result(1, {"content": []}))
    assert h.checker.progress_token_active("H")
    h.receive({**progress, "params": {"progressToken": "H", "progress": 1}})
    assert h.failed() == []
    h.receive(result(2, {"content": []}))
    assert not h.checker.progress_token_active("H")
    h.receive({**progress, "params": {"progressToken": "H", "progress": 2}})
    assert h.failed() == ["progress-token-active"]


def test_a_modern_server_sends_no_requests_and_a_legacy_one_only_what_was_negotiated() -> None:
    h = Harness("modern")
    owed = h.receive(request("s1", "ping"))
    assert h.failed() == ["no-server-requests-in-modern"]
    assert owed[0].error.code == -32601
    h = Harness()
    h.handshake()
    assert [type(m).__name__ for m in h.receive(request("s1", "ping"))] == ["ResultResponse"]
    h.receive(request("s2", "sampling/createMessage", {}))
    assert h.failed() == ["only-negotiated-capabilities"]


def test_log_messages_need_the_logging_capability() -> None:
    h = Harness()
    h.handshake(capabilities={"tools": {}})
    h.receive(
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "x"},
        }
    )
    assert h.failed() == ["only-negotiated-capabilities"]


def test_unsupported_version_errors_must_list_the_supported_versions() -> None:
    h = Harness("modern")
    h.send(request(1, "tools/list", {"_meta": {**MODERN_META, PV: "1999-01-01"}}))
    h.receive({**error(1, -32022), "error": {"code": -32022, "message": "no"}})
    assert h.failed() == ["unsupported-version-error"]


PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
TASKS_EXTENSION = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def missing_capability(id: Any, data: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": -32021, "message": "no", "data": data}}


def test_a_missing_capability_error_names_capabilities_the_request_did_not_declare() -> None:
    h = Harness("modern")
    undeclared = {"_meta": MODERN_META, "taskId": "t"}
    h.send(request(1, "tasks/get", undeclared))
    h.receive(missing_capability(1, {"requiredCapabilities": TASKS_EXTENSION}))
    assert h.failed() == []  # as the spec shapes it
    h.send(request(2, "tasks/get", undeclared))
    h.receive(missing_capability(2, None))  # nothing says what to declare
    h.send(request(3, "tasks/get", undeclared))
    h.receive(missing_capability(3, {"requiredCapabilities": {}}))
    assert h.failed() == ["missing-capability-error", "missing-capability-error"]
    # Asking for what the request did declare: the client cannot do better.
    declared = {"_meta": {**MODERN_META, CC: TASKS_EXTENSION}, "taskId": "t"}
    h.send(request(4, "tasks/get", declared))
    h.receive(missing_capability(4, {"requiredCapabilities": TASKS_EXTENSION}))
    assert h.failed() == ["missing-capability-error"]
    # Asking for that and for something it did not declare is fair.
    h.send(request(5, "tools/call", {**declared, "name": "x"}))
    needs = {**TASKS_EXTENSION, "elicitation": {"form": {}}}
    h.receive(missing_capability(5, {"requiredCapabilities": needs}))
    assert h.failed() == []


@pytest.mark.skipif(not (SPEC_DIR / "schema-2026-07-28.json").exists(), reason="no spec schemas")
def test_modern_results_must_match_the_official_schema() -> None:
    h = Harness("modern")
    h.send(request(1, "tools/list", {"_meta": MODERN_META}))
    h.receive(result(1, {"tools": []}))  # no resultType, ttlMs, cacheScope
    assert h.failed() == ["message-matches-schema"]
    h.send(request(2, "tools/list", {"_meta": MODERN_META}))
    h.receive(
        result(2, {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
    )
    assert h.failed() == []


def test_a_list_that_changes_without_notice_is_a_warning() -> None:
    h = Harness()
    h.handshake()
    tool = {"name": "a", "inputSchema": {"type": "object"}}
    h.send(request(1, "tools/list"))
    h.receive(result(1, {"tools": [tool]}))
    h.send(request(2, "tools/list"))
    h.receive(result(2, {"tools": []}))
    assert h.failed() == ["lists-stable"]
    h.receive({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    h.send(request(3, "tools/list"))
    h.receive(result(3, {"tools": [tool]}))
    assert h.failed() == ["only-negotiated-capabilities"]  # listChanged was not declared


def test_garbage_on_stdout_fails() -> None:
    from trio_mcp._jsonrpc import parse

    h = Harness()
    h.checker.on_receive(parse(b"Starting server..."), 1, 0.0)
    assert h.failed() == ["valid-jsonrpc-only"]


def test_reproduction_files_round_trip() -> None:
    steps = [
        Send(data=orjson.dumps(request(1)), expect=Expect(empty_result=True)),
        Await((1,)),
        Send(data=b"{not json"),
        Send(data=b'{"bad": "\xff"}'),
        Sleep(0.01),
        Send(data=b"", http=HttpRequest(method="GET", headers={"last-event-id": "$last-event-id"})),
        Disconnect("$get"),
        Settle(),
    ]
    header, loaded = load_steps(dump_steps({"era": "legacy"}, steps))
    assert header["era"] == "legacy"
    assert loaded == steps
    assert list(iter_sent_lines(loaded)) == [steps[0].data, b"{not json", b'{"bad": "\xff"}']  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="header"):
        load_steps(b'{"send": 1}\n')


async def test_minimize_keeps_only_what_the_failure_needs() -> None:
    steps = [
        Send(data=orjson.dumps(request(0, "initialize"))),
        Await((0,)),
        Send(data=orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})),
    ]
    for id in range(1, 9):
        steps += [Send(data=orjson.dumps(request(id))), Await((id,))]
    steps.append(Settle())
    calls = 0

    async def fails(candidate: Any) -> bool:
        nonlocal calls
        calls += 1
        sent = [orjson.loads(s.data) for s in candidate if isinstance(s, Send)]
        ids = {m.get("id") for m in sent}
        return {3, 6} <= ids  # the failure needs requests 3 and 6, nothing else

    small = await minimize(steps, fails, culprit=None, deadline=trio.current_time() + 60)
    sent = [orjson.loads(s.data)["id"] for s in small if isinstance(s, Send)]
    assert sent == [3, 6]
    assert small[-1] == Settle()
    assert Await((3,)) in small and Await((6,)) in small
    assert calls < 40


async def test_minimize_tries_the_culprit_after_the_handshake_first() -> None:
    steps = [
        Send(data=orjson.dumps(request(0, "initialize"))),
        Await((0,)),
        Send(data=orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        Send(data=orjson.dumps(request(1))),
        Send(data=orjson.dumps(request(2, "tools/call"))),
        Await((1, 2)),
        Settle(),
    ]
    seen = []

    async def fails(candidate: Any) -> bool:
        methods = [orjson.loads(s.data)["method"] for s in candidate if isinstance(s, Send)]
        seen.append(methods)
        return "initialize" in methods and "tools/call" in methods

    small = await minimize(steps, fails, culprit=4, deadline=trio.current_time() + 60)
    assert seen[:2] == [["tools/call"], ["initialize", "notifications/initialized", "tools/call"]]
    assert len(seen) == 2
    assert [type(s).__name__ for s in small] == ["Send", "Await", "Send", "Send", "Await", "Settle"]


async def test_the_culprit_alone_reproduces_even_when_the_whole_transcript_does_not() -> None:
    """The steps before the culprit may not behave the same twice (a slow tool, timing):
    the culprit is replayed alone (then after the handshake) before anything else, and a
    transcript that fails only in that form is still reproduced."""
    steps = [Send(data=orjson.dumps(request(id))) for id in range(1, 5)] + [Settle()]
    seen = []

    async def fails(candidate: Any) -> bool:
        ids = [orjson.loads(s.data)["id"] for s in candidate if isinstance(s, Send)]
        seen.append(ids)
        return ids == [3]  # the full transcript, replayed, goes wrong before request 3

    deadline = trio.current_time() + 60
    alone = await culprit_alone(steps, fails, culprit=2, deadline=deadline)
    assert alone is not None
    assert [orjson.loads(s.data)["id"] for s in alone if isinstance(s, Send)] == [3]
    assert seen == [[3]]
    assert await culprit_alone(steps, fails, culprit=None, deadline=deadline) is None
    seen.clear()
    assert await culprit_alone(steps, fails, culprit=1, deadline=deadline) is None
    assert seen == [[2]]  # no handshake to add: tried once, alone


def test_a_fresh_process_gets_time_to_start_before_its_first_answer() -> None:
    h = Harness(deadline=1.0)
    h.checker.startup = 5.0
    h.send(request(0, "initialize", {}))
    h.now = 4.0
    assert h.failed() == []
    h.receive(
        result(
            0,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"},
            },
        )
    )
    h.send(request(1))
    h.now = 5.5
    assert h.failed() == ["request-answered"]


def test_progress_pushes_the_deadline_back_but_not_forever() -> None:
    h = Harness(deadline=1.0)
    h.handshake()
    h.send(request(1, "tools/call", {"name": "t", "_meta": {"progressToken": 5}}))
    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
    for step in range(1, 8):
        h.now = step * 0.9
        h.receive({**progress, "params": {"progressToken": 5, "progress": step}})
        assert h.failed() == []
    h.now = 11.0  # ten deadlines after the request: no more extensions
    h.receive({**progress, "params": {"progressToken": 5, "progress": 99}})
    assert h.failed() == ["request-answered"]


def test_a_request_too_deep_for_our_parser_may_still_be_answered() -> None:
    h = Harness()
    h.handshake()
    deep = b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":' + b"[" * 5000 + b"]" * 5000
    h.send(deep + b"}}", Expect(answer="may", request_id=2))
    h.receive(result(2))
    assert h.failed() == []
    h.send(deep.replace(b'"id":2', b'"id":3') + b"}}")
    h.receive(result(3))
    assert h.failed() == ["response-id-matches-request"]  # without the hint it looks stray


def test_tools_that_reach_out_or_destroy_are_listed_but_not_called() -> None:
    from trio_mcp._fuzz._probe import Catalogue, EraCatalogue
    from trio_mcp._fuzz._runner import _callable_tools

    def tool(name: str, **annotations: bool) -> dict[str, Any]:
        return {"name": name, "inputSchema": {"type": "object"}, "annotations": annotations}

    tools = (
        tool("read"),
        tool("fetch", openWorldHint=True),
        tool("rm", destructiveHint=True),
        tool("local", openWorldHint=False),
        tool("slow_thing"),
    )
    catalogue = Catalogue(
        eras={
            "legacy": EraCatalogue(era="legacy", version="2025-11-25", capabilities={}, tools=tools)
        }
    )
    notes: list[str] = []
    kept = _callable_tools(catalogue, ["slow_*"], False, notes).eras["legacy"].tools
    assert [t["name"] for t in kept] == ["read", "local"]
    assert notes == [
        "not calling tool 'fetch' (openWorldHint: true)",
        "not calling tool 'rm' (destructiveHint: true)",
        "not calling tool 'slow_thing' (skipped on request)",
    ]
    everything = _callable_tools(catalogue, [], True, []).eras["legacy"].tools
    assert len(everything) == 5


def test_by_position_params_make_a_request_that_must_be_answered() -> None:
    h = Harness(deadline=1.0)
    h.handshake()
    wanted = Expect(
        error_codes=(-32600, -32602), error_invariant="invalid-request-code", result_ok=False
    )
    h.send(request(1, "ping", [1, 2]), wanted)
    h.receive(error(1, -32602))
    assert h.failed() == []
    h.send(request(2, "ping", [1, 2]), wanted)
    h.send(request(3))
    h.receive(result(3))
    h.now = 1.5
    assert h.failed() == ["request-answered"]


def test_silence_on_an_invalid_request_object_is_only_a_should() -> None:
    h = Harness()
    h.handshake()
    h.send({"jsonrpc": "1.0", "id": 1, "method": "ping"})
    h.send(request(2))
    h.receive(result(2))
    [finding] = h.checker.take_findings()
    assert (finding.invariant.name, finding.invariant.level) == (
        "invalid-request-answered",
        "SHOULD",
    )


async def test_sse_lines_end_only_where_the_sse_format_says() -> None:
    from trio_mcp._fuzz._http import split_sse_lines

    async def chunks(*parts: str) -> Any:
        for part in parts:
            yield part

    async def lines(*parts: str) -> list[str]:
        return [line async for line in split_sse_lines(chunks(*parts))]

    tricky = 'data: {"id":"a\u2028b\u0085c\x1cd"}'
    assert await lines(tricky + "\n\n") == [tricky, ""]
    assert await lines("a\r", "\nb\rc\n") == ["a", "b", "c"]
    assert await lines("a\r", "b") == ["a", "b"]
    assert await lines("data: x", "y\r\n", "\r\n") == ["data: xy", ""]


def test_an_id_mangled_into_a_number_is_a_wrong_echo_not_a_duplicate() -> None:
    h = Harness()
    h.handshake()
    h.send(request(1))
    h.receive(result(1))
    h.send(request("01"))
    h.receive(result(1))
    assert h.failed() == ["response-id-matches-request"]  # and "01" is not left hanging
    assert h.checker.outstanding() == []


def test_list_changes_are_judged_only_where_every_notification_is_seen() -> None:
    tool = {"name": "a", "inputSchema": {"type": "object"}}
    for era, transport in (("modern", "stdio"), ("legacy", "http")):
        h = Harness(era)
        h.checker.transport = transport
        meta = {"_meta": MODERN_META} if era == "modern" else None
        h.send(request(1, "tools/list", meta))
        h.receive(result(1, {"tools": [tool]}))
        h.send(request(2, "tools/list", meta))
        h.receive(result(2, {"tools": []}))
        assert "lists-stable" not in h.failed()
