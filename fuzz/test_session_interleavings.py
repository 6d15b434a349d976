"""Two real Sessions (``memory_session_pair``, both eras) driven through random interleavings
under pytest-trio, with ``autojump_clock`` so that every sleep is free.

Hypothesis draws a script up front: requests from the client (and, in the legacy era, from
the server) whose handlers return at once, sleep, sleep forever, raise, report progress or
return something that is not a valid result; callers that give up (``move_on_after``) or
leave an ``open_request`` block at once; cancellations sent behind the session's back;
malformed bytes from either side; and perhaps a disconnect. Each action starts at its own
virtual time, and Trio's scheduler (seeded by Hypothesis) interleaves the rest.

Checked, per example:

* every request ends exactly once, with an outcome its handler, its deadline and the
  disconnect allow (a result, an error with the right code, cancelled, ConnectionClosed);
* a handler whose cancellation the session accepted is cancelled at once, and no response
  goes out for that request afterwards;
* malformed input gets the JSON-RPC error it calls for, and never kills a session;
* when the pair closes, both sessions finish, and no task or channel outlives them.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Literal

import attrs
import orjson
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings, strategies as st

from trio_mcp import ConnectionClosed, ErrorCode, McpError, jsonrpc as rpc
from trio_mcp.protocol import CancelRequested, InboundRequest, ReceiveEvent
from trio_mcp.session import Session
from trio_mcp.testing import SessionPair, memory_session_pair
from trio_mcp.transports import MemoryMessageStream
from trio_mcp.types import ServerCapabilities, ToolsCapability

from ._corpus import ALIEN_IDS, MALFORMED, Malformed

Behavior = Literal[
    "return",
    "sleep",
    "forever",
    "progress",
    "raise mcp",
    "raise",
    "not an object",
    "unserializable",
]
Style = Literal["send_request", "open_request", "abandon"]
Sender = Literal["client", "server"]
Disconnect = Literal["client", "server", "client stream"]
BEHAVIORS: tuple[Behavior, ...] = (
    "return",
    "sleep",
    "forever",
    "progress",
    "raise mcp",
    "raise",
    "not an object",
    "unserializable",
)
SENDERS: tuple[Sender, ...] = ("client", "server")
DISCONNECTS: tuple[Disconnect, ...] = ("client", "server", "client stream")
#: The error code a handler raises with McpError (an application code).
APP_ERROR = -31000
#: What the caller of a request must see when its handler finishes (None: no answer ever).
ANSWER: dict[str, tuple[str, Any] | None] = {
    "return": ("result", None),
    "sleep": ("result", None),
    "progress": ("result", None),
    "forever": None,
    "raise mcp": ("error", APP_ERROR),
    # A handler that fails, or returns what cannot be a result, is an internal error.
    "raise": ("error", ErrorCode.INTERNAL_ERROR),
    "not an object": ("error", ErrorCode.INTERNAL_ERROR),
    "unserializable": ("error", ErrorCode.INTERNAL_ERROR),
}
#: A server with every handler slot taken and its backlog full refuses a request.
BUSY = ("error", ErrorCode.INTERNAL_ERROR)
#: Longer than any script: a request still waiting by then hangs.
HANG = 10_000.0


@attrs.define
class RequestAction:
    """One request. Times are virtual seconds; integers for handlers, halves for callers,
    quarters for disconnects, so no two events in a script tie."""

    n: int
    at: float
    sender: Sender
    behavior: Behavior
    duration: int
    #: The caller gives up after this long (``None``: it waits).
    timeout: float | None
    #: How the caller waits: send_request with an on_progress callback, or open_request
    #: iterating progress, or open_request left at once (abandoned).
    style: Style
    #: Send a notifications/cancelled for it behind the session's back after this long.
    raw_cancel_after: float | None


@attrs.define
class RawAction:
    at: float
    sender: Sender
    case: Malformed | None
    #: Or a notification naming an id that is no request (cancel / progress).
    alien: tuple[str, Any] | None = None


@attrs.define
class Script:
    modern: bool
    buffer: int
    tight: bool
    requests: list[RequestAction]
    raws: list[RawAction]
    disconnect: tuple[float, Disconnect] | None


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    modern = draw(st.booleans())
    # Modern servers send no requests (they return InputRequiredResult instead).
    senders: tuple[Sender, ...] = ("client",) if modern else ("client", "client", "server")
    styles: tuple[Style, ...] = ("send_request", "open_request", "open_request", "abandon")
    requests = []
    for n in range(draw(st.integers(1, 8))):
        behavior = draw(st.sampled_from(BEHAVIORS))
        style = draw(st.sampled_from(styles))
        timeout = draw(st.none() | st.integers(0, 12).map(lambda t: t + 0.5))
        if behavior == "forever" and timeout is None and style != "abandon":
            timeout = draw(st.integers(0, 12).map(lambda t: t + 0.5))
        raw_cancel = None
        if style == "open_request" and timeout is not None and draw(st.booleans()):
            raw_cancel = draw(st.sampled_from([0.0, 0.5, 2.5]))
        requests.append(
            RequestAction(
                n=n,
                at=draw(st.integers(0, 6)) + 0.5,
                sender=draw(st.sampled_from(senders)),
                behavior=behavior,
                duration=draw(st.integers(0, 8)),
                timeout=timeout,
                style=style,
                raw_cancel_after=raw_cancel,
            )
        )
    raws = [
        RawAction(
            at=draw(st.integers(0, 8)) + 0.75,
            sender=draw(st.sampled_from(SENDERS)),
            case=draw(st.sampled_from(MALFORMED)),
        )
        for _ in range(draw(st.integers(0, 4)))
    ]
    for _ in range(draw(st.integers(0, 2))):
        method = draw(st.sampled_from(["notifications/cancelled", "notifications/progress"]))
        raws.append(
            RawAction(
                at=draw(st.integers(0, 8)) + 0.75,
                sender=draw(st.sampled_from(SENDERS)),
                case=None,
                alien=(method, draw(st.sampled_from(ALIEN_IDS))),
            )
        )
    disconnect = None
    if draw(st.integers(0, 3)) == 0:
        who = draw(st.sampled_from(DISCONNECTS))
        disconnect = (draw(st.integers(0, 10)) + 0.25, who)
    return Script(
        modern=modern,
        buffer=draw(st.sampled_from([0, 1, 64])),
        tight=draw(st.booleans()),
        requests=requests,
        raws=raws,
        disconnect=disconnect,
    )


# --- What happened -------------------------------------------------------------------------------


@attrs.define
class HandlerRun:
    request: InboundRequest
    #: Virtual times, and positions in the log's sequence of events (several events can
    #: share one instant).
    started: float
    started_seq: int
    ended: float | None = None
    ended_seq: int | None = None
    outcome: str | None = None


@attrs.define
class Log:
    """Everything the sessions did, in order, with virtual times."""

    outcomes: dict[int, tuple[str, Any]] = attrs.Factory(dict)
    ended_at: dict[int, float] = attrs.Factory(dict)
    handlers: dict[tuple[str, Any], HandlerRun] = attrs.Factory(dict)
    #: (side, request id) -> when (time, sequence) the side's connection accepted the
    #: peer's cancellation.
    cancels: dict[tuple[str, Any], tuple[float, int]] = attrs.Factory(dict)
    #: (side, request id, sequence) of every response each side sent.
    responses: list[tuple[str, Any, int]] = attrs.Factory(list)
    #: Error responses each side sent to malformed input: (side, code, id).
    error_replies: Counter[tuple[str, int, Any]] = attrs.Factory(Counter)
    progress: dict[int, list[float]] = attrs.Factory(dict)
    disconnected_at: float | None = None
    events: int = 0

    def seq(self) -> int:
        self.events += 1
        return self.events

    def end(self, n: int, outcome: str, detail: Any = None) -> None:
        assert n not in self.outcomes, f"request {n} ended twice: {self.outcomes[n]}, {outcome}"
        self.outcomes[n] = (outcome, detail)
        self.ended_at[n] = trio.current_time()


def watch(log: Log, side: str, session: Session) -> None:
    """Record what ``side``'s session receives and sends (both are looked up per call)."""
    connection = session.connection
    receive = connection.receive
    stream = session.stream
    send = stream.send

    def recording_receive(message: Any) -> ReceiveEvent:
        event = receive(message)
        if isinstance(event, CancelRequested):
            log.cancels.setdefault((side, event.request.id), (trio.current_time(), log.seq()))
        return event

    send_nowait = stream.send_nowait

    def record(message: rpc.Message) -> None:
        if isinstance(message, rpc.ResultResponse | rpc.ErrorResponse):
            log.responses.append((side, message.id, log.seq()))
            if isinstance(message, rpc.ErrorResponse) and (
                message.id is None or str(message.id).startswith("m")
            ):
                log.error_replies[(side, message.error.code, message.id)] += 1

    async def recording_send(message: rpc.Message, *, related: Any = None) -> None:
        record(message)
        await send(message, related=related)

    def recording_send_nowait(message: rpc.Message, *, related: Any = None) -> None:
        send_nowait(message, related=related)  # WouldBlock: not sent, so not recorded
        record(message)

    connection.receive = recording_receive  # type: ignore[method-assign]
    stream.send = recording_send  # type: ignore[method-assign]
    stream.send_nowait = recording_send_nowait  # type: ignore[method-assign]


def fail(behavior: str) -> None:
    if behavior == "raise mcp":
        raise McpError("as told", code=APP_ERROR)
    raise RuntimeError("as told")


def handler_for(log: Log, side: str) -> Any:
    async def handle(session: Session, request: InboundRequest) -> Any:
        params = request.raw_params or {}
        behavior = params.get("behavior")
        run = HandlerRun(request, trio.current_time(), log.seq())
        log.handlers[(side, request.id)] = run
        try:
            await trio.lowlevel.checkpoint()
            if behavior == "sleep":
                await trio.sleep(params["duration"])
            elif behavior == "forever":
                await trio.sleep_forever()
            elif behavior == "progress":
                for step in range(params["duration"]):
                    await session.send_progress(request, step + 1, total=params["duration"])
                    await trio.sleep(1)
            elif behavior in ("raise mcp", "raise"):
                fail(behavior)
            run.outcome = "returned"
            if behavior == "not an object":
                return ["not", "an", "object"]
            if behavior == "unserializable":
                return {"value": {"a set is not JSON"}}
            return {"value": params["n"]}
        except trio.Cancelled:
            run.outcome = "cancelled"
            raise
        except Exception:
            run.outcome = "raised"
            raise
        finally:
            run.ended, run.ended_seq = trio.current_time(), log.seq()

    return handle


# --- Driving ---------------------------------------------------------------------------------


async def run_request(pair: SessionPair, log: Log, start: float, action: RequestAction) -> None:
    await trio.sleep_until(start + action.at)
    caller = pair.client if action.sender == "client" else pair.server
    params = {"n": action.n, "behavior": action.behavior, "duration": action.duration}
    timeout = math.inf if action.timeout is None else action.timeout
    progress: list[float] = log.progress.setdefault(action.n, [])

    def on_progress(update: Any) -> None:
        assert action.n not in log.outcomes, "progress after the request ended"
        progress.append(update.progress)

    with trio.move_on_after(timeout) as scope:
        try:
            if action.style == "send_request":
                result = await caller.send_request("x/custom", params, on_progress=on_progress)
            else:
                async with caller.open_request("x/custom", params, progress=True) as call:
                    if action.style == "abandon":
                        log.end(action.n, "abandoned")
                        return
                    if action.raw_cancel_after is not None:
                        await trio.sleep(action.raw_cancel_after)
                        await send_raw_quietly(
                            caller.stream,
                            rpc.dumps(
                                rpc.JsonRpcNotification(
                                    "notifications/cancelled", {"requestId": call.id}
                                )
                            ),
                        )
                    async for update in call:
                        on_progress(update)
                    result = await call.result()
        except ConnectionClosed:
            log.end(action.n, "closed")
        except McpError as exc:
            log.end(action.n, "error", exc.code)
        else:
            log.end(action.n, "result", result)
    if scope.cancelled_caught:
        log.end(action.n, "cancelled")


async def send_raw_quietly(stream: Any, data: bytes) -> None:
    assert isinstance(stream, MemoryMessageStream)
    try:
        await stream.send_raw(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass


async def run_raw(pair: SessionPair, start: float, raw: RawAction) -> None:
    await trio.sleep_until(start + raw.at)
    sender = pair.client if raw.sender == "client" else pair.server
    if raw.case is not None:
        data = raw.case.data
    else:
        assert raw.alien is not None
        method, id = raw.alien
        key = "requestId" if method == "notifications/cancelled" else "progressToken"
        data = orjson.dumps(
            {"jsonrpc": "2.0", "method": method, "params": {key: id, "progress": 1}}
        )
    await send_raw_quietly(sender.stream, data)


async def run_disconnect(pair: SessionPair, log: Log, start: float, at: float, who: str) -> None:
    await trio.sleep_until(start + at)
    log.disconnected_at = trio.current_time()
    if who == "client":
        await pair.client.aclose()
    elif who == "server":
        await pair.server.aclose()
    else:
        await pair.client.stream.aclose()


# --- The test --------------------------------------------------------------------------------


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(script=scripts())
async def test_session_interleavings(
    script: Script, autojump_clock: trio.testing.MockClock
) -> None:
    tasks_before = trio.lowlevel.current_statistics().tasks_living
    log = Log()
    server_options = {"max_concurrent_requests": 2} if script.tight else {}
    async with memory_session_pair(
        server_capabilities=ServerCapabilities(tools=ToolsCapability()),
        modern=script.modern,
        buffer=script.buffer,
        server_options={"handler": handler_for(log, "server"), **server_options},
        client_options={"handler": handler_for(log, "client")},
    ) as pair:
        start = trio.current_time()
        watch(log, "client", pair.client)
        watch(log, "server", pair.server)
        with trio.fail_after(HANG):
            async with trio.open_nursery() as nursery:
                for action in script.requests:
                    nursery.start_soon(run_request, pair, log, start, action)
                for raw in script.raws:
                    nursery.start_soon(run_raw, pair, start, raw)
                if script.disconnect is not None:
                    nursery.start_soon(run_disconnect, pair, log, start, *script.disconnect)
        # Let both sessions take in everything that was sent before the pair closes.
        await trio.testing.wait_all_tasks_blocked()
        streams = (pair.client.stream, pair.server.stream)
    # Leaving the pair closes both sessions: they finish, and nothing they started lives on.
    with trio.fail_after(1):
        await pair.client.wait_finished()
        await pair.server.wait_finished()
    assert trio.lowlevel.current_statistics().tasks_living == tasks_before
    for stream in streams:
        assert isinstance(stream, MemoryMessageStream)
        for channel in (stream._send_channel, stream._receive_channel):
            stats = channel.statistics()
            assert (stats.open_send_channels, stats.open_receive_channels) == (0, 0)
    for session in (pair.client, pair.server):
        assert session._notifications_in.statistics().open_send_channels == 0
    check(script, log)


def check(script: Script, log: Log) -> None:
    disconnected = log.disconnected_at is not None
    # Every request ended exactly once (Log.end refuses a second ending), with an outcome
    # its handler, its deadline and the disconnect allow.
    assert set(log.outcomes) == {a.n for a in script.requests}
    for action in script.requests:
        outcome, detail = log.outcomes[action.n]
        allowed: set[str] = set()
        expected = ANSWER[action.behavior]
        if action.style == "abandon":
            allowed.add("abandoned")
        if expected is not None:
            allowed.add(expected[0])
        if action.timeout is not None:
            allowed.add("cancelled")
        if disconnected:
            allowed.add("closed")
        busy = script.tight and action.sender == "client" and (outcome, detail) == BUSY
        assert outcome in allowed or busy, (action, outcome, detail)
        if outcome == "result":
            assert detail["value"] == action.n
        if outcome == "error" and not busy:
            assert expected is not None
            assert detail == expected[1], (action, detail)
        finishes_at = action.at + (
            action.duration if action.behavior in ("sleep", "progress") else 0
        )
        quiet = not disconnected and not script.tight and action.raw_cancel_after is None
        if (
            quiet
            and action.timeout is not None
            and expected is not None
            and action.style != "abandon"
        ):
            # Nothing else in the way: the earlier of the deadline and the answer decides.
            gives_up = action.at + action.timeout
            assert outcome == ("cancelled" if gives_up < finishes_at else expected[0]), (
                action,
                outcome,
            )
        if action.n in log.progress:
            steps = log.progress[action.n]
            assert steps == sorted(set(steps)), f"progress went backwards: {steps}"
            assert all(1 <= s <= action.duration for s in steps)

    for (side, id), (accepted_at, accepted_seq) in log.cancels.items():
        run = log.handlers.get((side, id))
        # cancellation: receivers SHOULD "Stop processing the cancelled request": a handler
        # still running when the cancellation was accepted ends cancelled, at once, and
        # one not started yet never starts.
        if run is not None:
            assert run.started_seq < accepted_seq, f"{side} started {id!r} after its cancel"
            if run.ended_seq is None or run.ended_seq > accepted_seq:
                assert run.outcome == "cancelled", (side, id, run)
                assert run.ended == accepted_at, (side, id, run, accepted_at)
        # ... and "Not send a response for the cancelled request".
        late = [n for s, i, n in log.responses if (s, i) == (side, id) and n > accepted_seq]
        assert not late, f"{side} answered {id!r} after accepting its cancellation"

    for (side, id), run in log.handlers.items():
        assert run.ended is not None, f"{side} handler for {id!r} outlived the session"

    # lifecycle, timeouts: a sender that stops waiting "SHOULD issue a cancellation
    # notification": the handler of a request its caller gave up on stops right then.
    for action in script.requests:
        outcome, _ = log.outcomes[action.n]
        if disconnected or outcome not in ("cancelled", "abandoned"):
            continue
        receiver = "server" if action.sender == "client" else "client"
        for (side, _id), run in log.handlers.items():
            if side == receiver and (run.request.raw_params or {}).get("n") == action.n:
                assert run.ended is not None
                assert run.ended <= log.ended_at[action.n], (action, run)

    # Malformed input gets the JSON-RPC error it calls for (section 5.1), from the side
    # that received it. Under a disconnect some replies may never be sent.
    expected_replies: Counter[tuple[str, int, Any]] = Counter()
    for raw in script.raws:
        if raw.case is not None and raw.case.code is not None:
            receiver = "server" if raw.sender == "client" else "client"
            expected_replies[(receiver, raw.case.code, raw.case.reply_id)] += 1
    if disconnected:
        assert log.error_replies <= expected_replies, (log.error_replies, expected_replies)
    else:
        assert log.error_replies == expected_replies


@pytest.mark.parametrize("modern", [False, True])
async def test_a_quiet_script_answers_everything(
    modern: bool, autojump_clock: trio.testing.MockClock
) -> None:
    """The harness itself: with no deadlines and no trouble, every request is answered."""
    log = Log()
    actions = [
        RequestAction(n, 0.5, "client", "sleep", n, None, "send_request", None) for n in range(3)
    ]
    async with memory_session_pair(
        server_capabilities=ServerCapabilities(tools=ToolsCapability()),
        modern=modern,
        server_options={"handler": handler_for(log, "server")},
    ) as pair:
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            for action in actions:
                nursery.start_soon(run_request, pair, log, start, action)
    assert {n: outcome for n, (outcome, _) in log.outcomes.items()} == dict.fromkeys(
        range(3), "result"
    )
