"""The invariants, applied to everything sent to and received from one server connection.

The checker is plain code, driven by the connection on the Trio side: it is
told of each message sent (with what the state machine expects of the answer)
and of each message received, and it keeps what it needs to judge them: the
requests awaiting an answer, which of them were cancelled and when, which
progress tokens are live, what the lists looked like. It never blocks and
never sends; it returns the answers a client owes the server (to a ``ping``,
say) for the connection to send.

Ordering is by sequence number: every message sent and received on the
connection gets the next one. That is what makes "the server had read the
cancellation" precise: if a request sent *after* a cancellation was answered
*before* the cancelled request, the server had read the cancellation (stdio
is read in order) when it answered.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import attrs
import orjson

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._protocol._envelope import LOG_LEVEL, PROGRESS_TOKEN, PROTOCOL_VERSION
from .._types._base import Error, RequestId
from .._types._methods import EXTENSION_METHODS
from .._versions import LEGACY_VERSIONS, MODERN_VERSIONS
from ._invariants import INVARIANTS, Invariant
from ._steps import Expect
from ._tasks import TaskWatch
from ._tool_checks import ToolWatch
from ._validate import Validator

__all__ = ["Checker", "Finding"]

_ANSWERED_MEMORY = 4096
#: Progress may push a request's deadline back (as the lifecycle's Timeouts section
#: allows), up to this many deadlines after it was sent.
_PROGRESS_LIMIT = 10
_CLIENT_FEATURE_REQUESTS = frozenset({"sampling/createMessage", "roots/list", "elicitation/create"})


@attrs.frozen
class Finding:
    """An invariant that failed, what happened, and at which message (sequence number)."""

    invariant: Invariant
    detail: str
    seq: int


@attrs.define(eq=False)
class _Pending:
    """A request we sent that is owed an answer (or an invalid message with a readable id)."""

    id: RequestId
    method: str | None
    seq: int
    time: float
    version: str | None
    expect: Expect | None
    #: When an answer is overdue (the deadline, plus the startup allowance for requests
    #: sent before the server had said anything).
    due: float = 0.0
    answer: str = "must"
    allowed: int = 1
    answers: int = 0
    cancelled_at: int | None = None
    timed_out: bool = False
    warned: bool = False
    progress_token: RequestId | None = None
    last_progress: float | None = None
    log_level: bool = False
    invalid: bool = False
    params: dict[str, Any] | None = None


@attrs.define(eq=False)
class _Credit:
    """Leave for one error response with a null id (we sent something whose id is unreadable)."""

    seq: int
    expect: Expect
    answered: bool = False
    warned: bool = False
    #: The request the credit belongs to, if its id was readable: answering it by id
    #: uses the credit up.
    owner: RequestId | None = None


def _expectation_for_invalid(message: rpc.InvalidMessage, expect: Expect | None) -> Expect:
    if expect is not None:
        return expect
    code = message.reply.error.code if message.reply is not None else ErrorCode.INVALID_REQUEST
    if code == ErrorCode.PARSE_ERROR:
        return Expect(
            answer="should",
            answer_invariant="parse-error-answered",
            error_codes=(ErrorCode.PARSE_ERROR,),
            error_invariant="parse-error-code",
            result_ok=False,
        )
    readable = message.reply is not None and message.reply.id is not None
    return Expect(
        answer="should" if readable else "may",
        answer_invariant="invalid-request-answered",
        error_codes=(ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_PARAMS),
        error_invariant="invalid-request-code",
        result_ok=False,
    )


class Checker:
    """Judges one connection. See the module docstring.

    Args:
        validator: schema checks of results and notifications.
        deadline: seconds within which every request must be answered.
        transport: ``"stdio"`` or ``"http"`` (some rules differ).
        startup: extra seconds for requests sent before the server first said anything
            (a process that is still starting).
    """

    def __init__(
        self,
        validator: Validator,
        *,
        era: str,
        deadline: float,
        transport: str,
        startup: float = 0.0,
    ) -> None:
        self.validator = validator
        self.deadline = deadline
        self.startup = startup
        self._heard = False
        self.transport = transport
        #: The era the client speaks: ``"legacy"`` (initialize) or ``"modern"`` (_meta).
        self.era = era
        #: The legacy version ``initialize`` negotiated.
        self.version: str | None = None
        #: What the server said about its capabilities (initialize or discover).
        self.capabilities: dict[str, Any] | None = None
        self.closed = False
        self._pending: dict[RequestId, _Pending] = {}
        self._answered: OrderedDict[RequestId, _Pending] = OrderedDict()
        self._credits: list[_Credit] = []
        self._tokens: dict[RequestId, _Pending] = {}
        self._finished_tokens: OrderedDict[RequestId, None] = OrderedDict()
        self._max_answered_seq = -1
        self._findings: list[Finding] = []
        self._list_changed: dict[str, int] = {}
        self._lists: dict[str, tuple[bytes, dict[str, int]]] = {}
        #: The tasks the server created (the tasks extension), followed through their polls.
        self.tasks = TaskWatch(validator)
        #: The tools listed, for the ``tools`` checks (poisoning, drift, look-alikes).
        self.tools = ToolWatch()
        #: Results and errors by request id, for the state machine to read.
        self.answers: dict[RequestId, rpc.ResultResponse | rpc.ErrorResponse] = {}

    # -- findings ---------------------------------------------------------------------------------

    def fail(self, name: str, detail: str, seq: int) -> None:
        """Record that invariant ``name`` failed."""
        self._findings.append(Finding(INVARIANTS[name], detail, seq))

    def take_findings(self) -> list[Finding]:
        """The findings since the last call."""
        found, self._findings = self._findings, []
        return found

    # -- what we send -----------------------------------------------------------------------------

    def on_send(self, data: bytes, expect: Expect | None, seq: int, now: float) -> None:
        """Take note of a message we sent (``data`` is exactly what went out)."""
        parsed = rpc.parse(data)
        if isinstance(parsed, rpc.Batch):
            for item in parsed.items:
                self._sent_item(item, None, seq, now, in_batch=True)
            # A server may also reject the whole batch with one error.
            self._credits.append(_Credit(seq, Expect(answer="may")))
            return
        self._sent_item(parsed, expect, seq, now, in_batch=False, raw=data)

    def _due(self, now: float) -> float:
        return now + self.deadline + (0.0 if self._heard else self.startup)

    def _request_version(self, params: dict[str, Any] | None) -> str | None:
        """The version a request is answered in: the negotiated one in a legacy conversation
        (whatever its _meta says), the _meta one in a modern conversation."""
        if self.era == "legacy":
            return self.version
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
        return version if isinstance(version, str) and version in MODERN_VERSIONS else None

    def _sent_item(
        self,
        item: rpc.Message | rpc.InvalidMessage,
        expect: Expect | None,
        seq: int,
        now: float,
        *,
        in_batch: bool,
        raw: bytes = b"",
    ) -> None:
        if isinstance(item, rpc.JsonRpcRequest):
            self._sent_request(item, expect, seq, now, in_batch=in_batch)
        elif isinstance(item, rpc.JsonRpcNotification):
            if item.method == "notifications/cancelled" and item.params is not None:
                target = self._pending.get(item.params.get("requestId"))  # type: ignore[arg-type]
                if (
                    target is not None
                    and type(target.id) is type(item.params.get("requestId"))
                    and target.cancelled_at is None
                    and target.method not in (None, "initialize")
                ):
                    target.cancelled_at = seq
        elif (
            isinstance(item, rpc.InvalidMessage)
            and expect is not None
            and (expect.request_id is not None and expect.request_id not in self._pending)
        ):
            # A request too deep for our parser: the server may read (and answer) it.
            self._pending[expect.request_id] = _Pending(
                id=expect.request_id,
                method=None,
                seq=seq,
                time=now,
                version=None,
                expect=None,
                answer="may",
                due=self._due(now),
            )
            self._credits.append(_Credit(seq, Expect(answer="may"), owner=expect.request_id))
        elif isinstance(item, rpc.InvalidMessage):
            reply_id = item.reply.id if item.reply is not None else None
            wanted = _expectation_for_invalid(item, expect)
            if in_batch:
                wanted = attrs.evolve(wanted, answer="may")
            owner = None
            if reply_id is not None and reply_id not in self._pending:
                owner = reply_id
                self._pending[reply_id] = _Pending(
                    id=reply_id,
                    method=_method_of(raw),
                    seq=seq,
                    time=now,
                    version=None,
                    expect=wanted,
                    answer=wanted.answer,
                    invalid=True,
                    due=self._due(now),
                )
            self._credits.append(_Credit(seq, wanted, owner=owner))
        # A response we send (to a request the server never made) expects nothing back.

    def _sent_request(
        self,
        request: rpc.JsonRpcRequest,
        expect: Expect | None,
        seq: int,
        now: float,
        *,
        in_batch: bool,
    ) -> None:
        params = request.params
        current = self._pending.get(request.id)
        if current is not None and type(current.id) is type(request.id):
            # The same id while the first is in flight: the client broke the rules, so the
            # server may answer either or both; only its survival is judged.
            current.allowed += 1
            current.expect = None
            current.answer = "may"
            return
        self._answered.pop(request.id, None)
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get(PROGRESS_TOKEN) if isinstance(meta, dict) else None
        pending = _Pending(
            id=request.id,
            method=request.method,
            seq=seq,
            time=now,
            version=self._request_version(params),
            expect=expect,
            answer="may" if in_batch else (expect.answer if expect is not None else "must"),
            progress_token=token if type(token) in (str, int) else None,
            log_level=isinstance(meta, dict) and meta.get(LOG_LEVEL) is not None,
            params=params,
            due=self._due(now),
        )
        self._pending[request.id] = pending
        if pending.answer in ("should", "may"):
            # A message the server may refuse before reading its id (too large, say):
            # an error with a null id is fair.
            self._credits.append(_Credit(seq, Expect(answer="may"), owner=request.id))
        if pending.progress_token is not None:
            self._tokens[pending.progress_token] = pending
            self._finished_tokens.pop(pending.progress_token, None)

    # -- what we receive --------------------------------------------------------------------------

    def on_receive(
        self,
        item: rpc.Message | rpc.Batch | rpc.InvalidMessage,
        seq: int,
        now: float,
        *,
        origin: int | None = None,
    ) -> list[rpc.Message]:
        """Judge a message from the server; returns the answers we owe it (to its requests).

        ``origin``: the sequence number of the message this one answers, when the transport
        tells (an HTTP response body): an error with a null id then answers that message.
        """
        self._heard = True
        if isinstance(item, rpc.Batch):
            owed: list[rpc.Message] = []
            for part in item.items:
                owed.extend(self.on_receive(part, seq, now, origin=origin))
            return owed
        if isinstance(item, rpc.InvalidMessage):
            where = "on stdout" if self.transport == "stdio" else "in a response body"
            self.fail("valid-jsonrpc-only", f"the server wrote {where}: {item.reason}", seq)
            return []
        if isinstance(item, rpc.ResultResponse | rpc.ErrorResponse):
            if item.id is None:
                assert isinstance(item, rpc.ErrorResponse)
                self._null_id_error(item, seq, origin)
            else:
                self._response(item, seq, now)
            return []
        if isinstance(item, rpc.JsonRpcRequest):
            return self._server_request(item, seq)
        self._server_notification(item, seq, now)
        return []

    def _find_loosely(self, id: RequestId) -> _Pending | None:
        """A request in flight whose id this one looks like: the same text, or the same
        number ("01" sent, 1 echoed)."""
        for pending in self._pending.values():
            if pending.answers < pending.allowed and (
                str(pending.id) == str(id) or _same_number(pending.id, id)
            ):
                return pending
        return None

    def _response(
        self, response: rpc.ResultResponse | rpc.ErrorResponse, seq: int, now: float
    ) -> None:
        id = response.id
        assert id is not None
        pending = self._pending.get(id)
        if pending is not None and type(pending.id) is not type(id):
            pending = None
        if pending is None:
            near = self._find_loosely(id)
            if near is not None:
                # Meant for ``near``: count it as its (wrongly labelled) answer, so that the
                # request is not also reported as unanswered.
                near.answers += 1
                if near.answers >= near.allowed:
                    del self._pending[near.id]
                    self._answered[near.id] = near
                self.fail(
                    "response-id-matches-request",
                    f"a response with id {orjson.dumps(id).decode()} arrived; the request "
                    f"({near.method}) had id {orjson.dumps(near.id).decode()}: the id was not "
                    "echoed exactly",
                    seq,
                )
                return
            earlier = self._answered.get(id)
            if earlier is not None and type(earlier.id) is type(id):
                self.fail(
                    "one-response-per-request",
                    f"a second response to request {id!r} ({earlier.method}): "
                    f"{_describe(response)}",
                    seq,
                )
                return
            self.fail(
                "response-id-matches-request",
                f"a response with id {orjson.dumps(id).decode()}, which no request of ours "
                f"carries: {_describe(response)}",
                seq,
            )
            return
        pending.answers += 1
        for credit in self._credits:
            if credit.seq == pending.seq and credit.owner is not None and not credit.answered:
                credit.answered = True
        if pending.answers >= pending.allowed:
            del self._pending[id]
            self._answered[id] = pending
            while len(self._answered) > _ANSWERED_MEMORY:
                self._answered.popitem(last=False)
            token = pending.progress_token
            if token is not None and self._tokens.get(token) is pending:
                del self._tokens[token]
                self._finished_tokens[token] = None
                while len(self._finished_tokens) > _ANSWERED_MEMORY:
                    self._finished_tokens.popitem(last=False)
        if (
            pending.cancelled_at is not None
            and self._max_answered_seq > pending.cancelled_at
            # Only one ordered stream shows that the later answer was sent first: over HTTP
            # each request's answer comes on its own response, read by its own task, so the
            # order they arrive in says nothing about the order the server sent them in.
            and self.transport == "stdio"
        ):
            name = (
                "cancelled-request-not-answered"
                if self.era == "modern"
                else "cancelled-request-not-answered-legacy"
            )
            self.fail(
                name,
                f"request {id!r} ({pending.method}) was cancelled, and a request sent after the "
                f"cancellation was answered first, yet it got an answer: {_describe(response)}",
                seq,
            )
        self._max_answered_seq = max(self._max_answered_seq, pending.seq)
        self.answers[id] = response
        self._judge_silence_before(pending.seq, seq)
        if pending.invalid:
            self._judge_invalid_answer(pending, response, seq)
            return
        if pending.expect is not None:
            self._judge_expectation(pending, pending.expect, response, seq)
        if isinstance(response, rpc.ErrorResponse):
            self._judge_error(pending, response, seq)
        else:
            self._judge_result(pending, response, seq)
        self._judge_task(pending, response, seq, now)

    def _judge_task(
        self,
        pending: _Pending,
        response: rpc.ResultResponse | rpc.ErrorResponse,
        seq: int,
        now: float,
    ) -> None:
        """The tasks extension's invariants (modern requests only: it is a 2026-07-28 one)."""
        if pending.method is None or pending.version not in MODERN_VERSIONS:
            return
        if isinstance(response, rpc.ErrorResponse):
            failures = self.tasks.on_error(
                pending.method,
                pending.params,
                response.error.code,
                response.error.message,
                now=now,
            )
        else:
            failures = self.tasks.on_result(
                pending.method, pending.params, response.result, sent=pending.seq, seq=seq, now=now
            )
        for name, detail in failures:
            self.fail(name, f"{detail} (id {pending.id!r})", seq)

    def _null_id_error(self, response: rpc.ErrorResponse, seq: int, origin: int | None) -> None:
        open_credits = [c for c in self._credits if not c.answered]
        if origin is not None:
            # Not another message's leave (a request of ours whose id the server may drop).
            open_credits = [c for c in open_credits if c.seq == origin] or open_credits
        code = response.error.code
        credit = (
            next((c for c in open_credits if code in c.expect.error_codes), None)
            or next((c for c in open_credits if not c.expect.error_codes), None)
            or (open_credits[0] if open_credits else None)
        )
        if credit is not None:
            credit.answered = True
            if credit.owner is not None:
                owner = self._pending.pop(credit.owner, None)
                if owner is not None:
                    self._answered[owner.id] = owner
            expect = credit.expect
            if expect.error_codes and response.error.code not in expect.error_codes:
                self.fail(
                    expect.error_invariant or "invalid-request-code",
                    f"answered with error {response.error.code} ({response.error.message!r}); "
                    f"expected {_codes(expect.error_codes)}",
                    seq,
                )
            return
        self.fail(
            "no-response-to-notification",
            f"an error response with a null id ({response.error.code}: "
            f"{response.error.message!r}), though everything sent had a readable id or was a "
            "notification",
            seq,
        )

    def _judge_silence_before(self, before: int, seq: int) -> None:
        """A request sent at ``before`` was answered: what was sent earlier and should have
        been answered by now (the server reads in order) but was not, gets its warning."""
        for credit in self._credits:
            if credit.owner is not None:
                continue  # judged through the request it belongs to, below
            if credit.seq < before and not credit.answered and not credit.warned:
                credit.warned = True
                if credit.expect.answer == "should":
                    self.fail(
                        _should(credit.expect.answer_invariant),
                        "no answer, though a later request was answered",
                        credit.seq,
                    )
        for pending in list(self._pending.values()):
            if pending.invalid and pending.seq < before and not pending.warned:
                pending.warned = True
                if pending.answer == "should" and pending.expect is not None:
                    self.fail(
                        _should(pending.expect.answer_invariant),
                        f"no answer to the invalid request with id {pending.id!r}, though a "
                        "later request was answered",
                        pending.seq,
                    )
        if len(self._credits) > 256:
            self._credits = [c for c in self._credits if not (c.answered or c.warned)][-256:]

    def _judge_invalid_answer(
        self, pending: _Pending, response: rpc.ResultResponse | rpc.ErrorResponse, seq: int
    ) -> None:
        expect = pending.expect
        if expect is None:
            return
        if isinstance(response, rpc.ResultResponse):
            self.fail(
                expect.error_invariant or "invalid-request-code",
                f"an invalid request was answered with a result: {_describe(response)}",
                seq,
            )
        elif expect.error_codes and response.error.code not in expect.error_codes:
            self.fail(
                expect.error_invariant or "invalid-request-code",
                f"an invalid request was answered with error {response.error.code} "
                f"({response.error.message!r}); expected {_codes(expect.error_codes)}",
                seq,
            )

    def _judge_expectation(
        self,
        pending: _Pending,
        expect: Expect,
        response: rpc.ResultResponse | rpc.ErrorResponse,
        seq: int,
    ) -> None:
        what = f"{pending.method} (id {pending.id!r})"
        if isinstance(response, rpc.ErrorResponse):
            code, message = response.error.code, response.error.message
            if not expect.error_ok:
                self.fail(
                    expect.error_invariant or "request-answered",
                    f"{what} was answered with error {code} ({message!r}); expected a result",
                    seq,
                )
            elif expect.error_codes and code not in expect.error_codes:
                self.fail(
                    expect.error_invariant or "invalid-params-code",
                    f"{what} was answered with error {code} ({message!r}); expected "
                    f"{_codes(expect.error_codes)}",
                    seq,
                )
            if expect.own_cursor:
                self.fail(
                    "own-cursor-accepted",
                    f"{what} sent back a nextCursor the server returned, and got error "
                    f"{code} ({message!r})",
                    seq,
                )
            if expect.empty_result:
                self.fail("ping-answered-empty", f"{what} got error {code} ({message!r})", seq)
            if expect.echo_version is not None:
                self.fail(
                    "initialize-echoes-version",
                    f"initialize with {expect.echo_version!r}, a version the server chose "
                    f"before, got error {code} ({message!r})",
                    seq,
                )
            return
        result = response.result
        tool_error = expect.is_error_ok and result.get("isError") is True
        if not expect.result_ok and not tool_error:
            self.fail(
                expect.error_invariant or "invalid-params-code",
                f"{what} was answered with a result; expected error {_codes(expect.error_codes)}: "
                f"{_describe(response)}",
                seq,
            )
        if expect.empty_result and {k: v for k, v in result.items() if k != "_meta"}:
            self.fail(
                "ping-answered-empty",
                f"{what} was answered with a non-empty result: {_describe(response)}",
                seq,
            )
        if expect.echo_version is not None and result.get("protocolVersion") != expect.echo_version:
            self.fail(
                "initialize-echoes-version",
                f"initialize asked for {expect.echo_version!r}, which the server chose before, "
                f"and the server answered {result.get('protocolVersion')!r}",
                seq,
            )
        if (
            expect.output_schema is not None
            and result.get("isError") is not True
            # Only a complete result owes structured content: an input_required one
            # (2026-07-28) asks a question and is retried.
            and result.get("resultType", "complete") == "complete"
        ):
            structured = result.get("structuredContent")
            if structured is None:
                self.fail(
                    "structured-content-matches-output-schema",
                    f"{what}: the tool has an outputSchema but the result has no structuredContent",
                    seq,
                )
            else:
                problems = self.validator.output_problems(expect.output_schema, structured)
                if problems:
                    self.fail(
                        "structured-content-matches-output-schema",
                        f"{what}: structuredContent {_short_json(structured)} does not match the "
                        f"outputSchema: {'; '.join(problems)}",
                        seq,
                    )

    def _judge_error(self, pending: _Pending, response: rpc.ErrorResponse, seq: int) -> None:
        error = response.error
        if error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and self.era == "modern":
            data = error.data
            supported = data.get("supported") if isinstance(data, dict) else None
            if not (
                isinstance(supported, list)
                and supported
                and all(isinstance(v, str) for v in supported)
            ):
                self.fail(
                    "unsupported-version-error",
                    f"{pending.method} (id {pending.id!r}): error -32022 without a list of "
                    f"supported versions in data: {_short_json(data)}",
                    seq,
                )

    def _judge_result(self, pending: _Pending, response: rpc.ResultResponse, seq: int) -> None:
        method = pending.method
        result = response.result
        if method is None:
            return  # a request we could not read ourselves: nothing to judge it by
        if method == "initialize":
            version = result.get("protocolVersion")
            if isinstance(version, str):
                self.version = version if version in LEGACY_VERSIONS else None
                caps = result.get("capabilities")
                self.capabilities = caps if isinstance(caps, dict) else None
            version_for_schema = (
                self.version
                if self.version is not None
                else (pending.version if pending.version in LEGACY_VERSIONS else None)
            )
        else:
            version_for_schema = pending.version
            if method == "server/discover" and isinstance(result.get("capabilities"), dict):
                self.capabilities = result["capabilities"]
        # The tasks extension's results are judged against its own schema (see _tasks).
        extension = version_for_schema in MODERN_VERSIONS and (
            method in EXTENSION_METHODS
            or (method == "tools/call" and result.get("resultType") == "task")
        )
        if (
            not extension
            and version_for_schema is not None
            and version_for_schema in (LEGACY_VERSIONS + MODERN_VERSIONS)
        ):
            problems = self.validator.result_problems(method, version_for_schema, result)
            if problems:
                self.fail(
                    "message-matches-schema",
                    f"the {method} result (id {pending.id!r}) does not match the "
                    f"{version_for_schema} schema: {'; '.join(problems)}",
                    seq,
                )
        self._judge_list(pending, result, seq)
        if method == "tools/list" and isinstance(result.get("tools"), list):
            for name, detail in self.tools.on_list(result["tools"]):
                self.fail(name, detail, seq)

    def _judge_list(self, pending: _Pending, result: dict[str, Any], seq: int) -> None:
        if self.era != "legacy" or self.transport != "stdio":
            # Only there would we see every list_changed: over HTTP a legacy server sends
            # it on the standalone GET stream, and a 2026-07-28 server only on
            # subscriptions/listen streams, neither of which the fuzzer keeps open.
            return
        method = pending.method or ""
        field = {
            "tools/list": "tools",
            "prompts/list": "prompts",
            "resources/list": "resources",
            "resources/templates/list": "resourceTemplates",
        }.get(method)
        if field is None or (pending.params or {}).get("cursor") is not None:
            return
        items = result.get(field)
        if not isinstance(items, list):
            return
        kind = method.split("/")[0]
        snapshot = orjson.dumps(items, option=orjson.OPT_SORT_KEYS)
        previous = self._lists.get(method)
        self._lists[method] = (snapshot, dict(self._list_changed))
        if previous is None or previous[0] == snapshot:
            return
        if self._list_changed.get(kind, 0) != previous[1].get(kind, 0):
            return
        self.fail(
            "lists-stable",
            f"{method} (first page) changed between two calls with no "
            f"notifications/{kind}/list_changed in between",
            seq,
        )

    # -- what the server asks of us ---------------------------------------------------------------

    def _server_request(self, request: rpc.JsonRpcRequest, seq: int) -> list[rpc.Message]:
        if self.era == "modern":
            self.fail(
                "no-server-requests-in-modern",
                f"the server sent a {request.method!r} request to a 2026-07-28 client",
                seq,
            )
            return [_not_found(request)]
        if request.method == "ping":
            return [rpc.ResultResponse(request.id, {})]
        if request.method in _CLIENT_FEATURE_REQUESTS:
            self.fail(
                "only-negotiated-capabilities",
                f"the server sent {request.method!r}, though the client declared no capabilities",
                seq,
            )
        return [_not_found(request)]

    def _server_notification(
        self, notification: rpc.JsonRpcNotification, seq: int, now: float
    ) -> None:
        method = notification.method
        params = notification.params or {}
        version = self.version if self.era == "legacy" else MODERN_VERSIONS[0]
        if method == "notifications/progress":
            self._progress(params, seq, now)
        elif method == "notifications/message":
            if self.era == "modern":
                if not any(p.log_level for p in self._pending.values()):
                    self.fail(
                        "only-negotiated-capabilities",
                        "a notifications/message, though no request in flight set "
                        f"{LOG_LEVEL!r} in its _meta",
                        seq,
                    )
            elif self.capabilities is not None and "logging" not in self.capabilities:
                self.fail(
                    "only-negotiated-capabilities",
                    "a notifications/message from a server that did not declare the logging "
                    "capability",
                    seq,
                )
        elif method.endswith("/list_changed") and method.startswith("notifications/"):
            kind = method.split("/")[1]
            self._list_changed[kind] = self._list_changed.get(kind, 0) + 1
            if kind == "tools":
                self.tools.list_changed()
            caps = self.capabilities
            declared = caps.get(kind) if isinstance(caps, dict) else None
            if (
                self.era == "legacy"
                and caps is not None
                and kind in ("tools", "prompts", "resources")
                and not (isinstance(declared, dict) and declared.get("listChanged"))
            ):
                self.fail(
                    "only-negotiated-capabilities",
                    f"{method} from a server that did not declare {kind}.listChanged",
                    seq,
                )
        if version is not None:
            problems = self.validator.notification_problems(rpc.serialize(notification), version)
            if problems:
                self.fail(
                    "message-matches-schema",
                    f"a {method} notification does not match the {version} schema: "
                    f"{'; '.join(problems)}",
                    seq,
                )

    def progress_token_active(self, token: str | int) -> bool:
        """Whether a request still waiting for its answer carries ``token``."""
        return token in self._tokens

    def _progress(self, params: dict[str, Any], seq: int, now: float) -> None:
        token = params.get("progressToken")
        pending = self._tokens.get(token) if type(token) in (str, int) else None  # type: ignore[arg-type]
        if pending is None:
            finished = type(token) in (str, int) and token in self._finished_tokens
            self.fail(
                "progress-token-active",
                f"progress for token {_short_json(token)}, "
                + (
                    "whose request was already answered"
                    if finished
                    else "which no request in flight carries"
                ),
                seq,
            )
            return
        value = params.get("progress")
        if isinstance(value, int | float) and not isinstance(value, bool):
            if pending.last_progress is not None and not value > pending.last_progress:
                self.fail(
                    "progress-increases",
                    f"progress for token {token!r} went from {pending.last_progress} to {value}",
                    seq,
                )
            pending.last_progress = float(value)
            # Work is happening: the clock restarts, within an overall limit.
            limit = pending.time + self.deadline * _PROGRESS_LIMIT + self.startup
            pending.due = min(max(pending.due, now + self.deadline), limit)

    # -- time and the end -------------------------------------------------------------------------

    def outstanding(self, ids: tuple[RequestId, ...] | None = None) -> list[RequestId]:
        """Ids (of ``ids``, or of all) still owed an answer that we must wait for."""
        if ids is None:
            return [
                p.id
                for p in self._pending.values()
                if p.answer == "must" and p.cancelled_at is None and not p.timed_out
            ]
        waiting = []
        for id in ids:
            pending = self._pending.get(id)
            if (
                pending is not None
                and type(pending.id) is type(id)
                and pending.cancelled_at is None
                and not pending.timed_out
                and pending.answer in ("must", "should", "may")
            ):
                waiting.append(id)
        return waiting

    def cancelled_unanswered(self) -> list[RequestId]:
        """Cancelled requests not answered (yet): a late answer would be judged."""
        return [p.id for p in self._pending.values() if p.cancelled_at is not None]

    def earliest_deadline(self) -> float | None:
        times = [
            p.due
            for p in self._pending.values()
            if p.answer == "must" and p.cancelled_at is None and not p.timed_out
        ]
        return min(times) if times else None

    def latest_due(self, ids: tuple[RequestId, ...] | None) -> float | None:
        """When the last of ``ids`` (or of all requests) still owed an answer is overdue."""
        times = [
            p.due
            for p in self._pending.values()
            if (ids is None or p.id in ids) and p.cancelled_at is None and not p.timed_out
        ]
        return max(times) if times else None

    def check_deadlines(self, now: float, seq: int) -> None:
        """Every request owed an answer for longer than the deadline is a hang."""
        for pending in self._pending.values():
            if (
                pending.answer == "must"
                and pending.cancelled_at is None
                and not pending.timed_out
                and now > pending.due
            ):
                pending.timed_out = True
                self.fail(
                    pending.expect.answer_invariant if pending.expect else "request-answered",
                    f"hang: no answer to {pending.method} (id {pending.id!r}) within "
                    f"{pending.due - pending.time:g} s",
                    pending.seq,
                )

    def resuming(self, id: RequestId, now: float) -> None:
        """(HTTP) ``id``'s stream was left to be resumed: from now on its answer is owed
        under ``http-disconnect-not-cancellation``, within a deadline from ``now``."""
        pending = self._pending.get(id)
        if pending is None or type(pending.id) is not type(id):
            return
        pending.expect = attrs.evolve(
            pending.expect or Expect(), answer_invariant="http-disconnect-not-cancellation"
        )
        pending.due = max(pending.due, now + self.deadline)

    def give_up(self, ids: list[RequestId]) -> None:
        """Stop waiting for ``ids`` (they were judged already, or their stream is gone)."""
        for id in ids:
            pending = self._pending.get(id)
            if pending is not None:
                pending.timed_out = True

    def on_closed(self, why: str, seq: int) -> None:
        """The server went away while we were still talking to it."""
        if self.closed:
            return
        self.closed = True
        self.fail("server-alive", why, seq)


def _same_number(a: RequestId, b: RequestId) -> bool:
    def number(value: RequestId) -> int | None:
        if isinstance(value, int):
            return value
        try:
            return int(value.strip())
        except ValueError:
            return None

    first, second = number(a), number(b)
    return first is not None and first == second


def _should(name: str) -> str:
    """A missing answer that was only a SHOULD is never reported as a MUST."""
    return name if INVARIANTS[name].level == "SHOULD" else "invalid-request-answered"


def _method_of(data: bytes) -> str | None:
    """The method a message we sent names, if it can be read at all."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    method = value.get("method") if isinstance(value, dict) else None
    return method if isinstance(method, str) else None


def _not_found(request: rpc.JsonRpcRequest) -> rpc.ErrorResponse:
    return rpc.ErrorResponse(
        request.id, Error(code=ErrorCode.METHOD_NOT_FOUND, message="Method not found")
    )


def _codes(codes: tuple[int, ...]) -> str:
    return " or ".join(str(c) for c in codes) if codes else "an error"


def _short_json(value: Any, limit: int = 200) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(response: rpc.ResultResponse | rpc.ErrorResponse) -> str:
    if isinstance(response, rpc.ErrorResponse):
        return f"error {response.error.code} ({response.error.message!r})"
    return f"result {_short_json(response.result)}"
