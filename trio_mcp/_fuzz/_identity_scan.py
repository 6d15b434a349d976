"""The identity scan: acting as two principals, check that nothing of one crosses to the
other over Streamable HTTP.

Theory of operation
-------------------

The first identity is the *owner*, each other one in turn an *intruder*. The owner
makes something (a legacy session, a resumable stream, tasks); the intruder then
presents its id as if it were its own. Every such request must be refused, and refused
as a request for something that does not exist would be: the intruder first asks for an
id nobody was given, and its refusals of the owner's ids are compared with that one.
Afterwards the owner checks that what it made is unharmed (its session still answers, its
task was not cancelled by the intruder).

- Sessions (initialize era): POST, GET and DELETE with the owner's ``Mcp-Session-Id``;
  a GET resuming the owner's stream with its ``Last-Event-ID`` (with the owner's session,
  and with the intruder's own).
- ``requestState`` (2026-07-28 multi round-trip requests): the owner's state sent back
  by the intruder (same request, same answers), by the owner altered, and by the owner
  for the same tool with other arguments; none may be taken. Given the server's lifetime
  for states (``--state-ttl``), the owner's genuine state is also offered once it has
  expired (:func:`expiry_wait`): the fuzzer cannot forge an expired seal, so it waits.
- Tasks (2026-07-28, the tasks extension): ``tasks/get``, ``tasks/update`` and
  ``tasks/cancel`` with the owner's task id (2025-11-25's core tasks: ``tasks/get``,
  ``tasks/result`` and ``tasks/cancel``, each identity in a session of its own); the
  owner's ids judged for guessability (length, alphabet, sequence); the intruder's
  ``subscriptions/listen`` for the owner's task.

Each step is one exchange with a bounded read window (:class:`~._wire.Wire`); the scan
blocks for at most a few windows per step, and cancelling it cancels the exchange in
flight. It starts no task of its own.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

import trio

from .._protocol._envelope import CLIENT_CAPABILITIES
from ._guessable import guessable_ids
from ._identities import Identity
from ._probe import Catalogue, EraCatalogue
from ._scan_finding import ScanFinding, Transcript
from ._scan_tools import minimal_arguments, task_tools
from ._tasks import TASKS_EXTENSION
from ._wire import Exchange, Wire

__all__ = ["expiry_wait", "scan_identities"]

_DECLARED: dict[str, Any] = {CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}}}
#: Client capabilities that let a server ask for input (multi round-trip requests).
_ASKABLE: dict[str, Any] = {CLIENT_CAPABILITIES: {"elicitation": {}, "sampling": {}, "roots": {}}}
#: Task ids created by the owner to judge their guessability.
_SAMPLES = 3
#: The revision with core tasks (tasks/get, tasks/result, tasks/cancel in a session).
_CORE_TASKS_VERSION = "2025-11-25"
#: Tools tried, at most, for one that answers with a task.
_TRIED_TOOLS = 6


async def scan_identities(
    wires: dict[str, Wire],
    identities: Sequence[Identity],
    catalogue: Catalogue,
    *,
    state_ttl: float | None = None,
) -> tuple[list[ScanFinding], list[str]]:
    """Run the identity scan with every era's :class:`~._wire.Wire` (by era) as the first
    identity (the owner) against each other one; returns the findings and notes on what
    could not be checked. Blocks for the exchanges (each bounded by its wire's window),
    and, given the server's ``requestState`` lifetime ``state_ttl`` (seconds), for
    :func:`expiry_wait` of it, once per intruder, to offer a state past it."""
    findings: list[ScanFinding] = []
    notes: list[str] = []
    if len(identities) < 2:
        return findings, notes
    owner = identities[0]
    for intruder in identities[1:]:
        legacy = catalogue.eras.get("legacy")
        if legacy is not None and "legacy" in wires:
            scan = _Scan(wires["legacy"], owner, intruder, "legacy", findings, notes)
            await scan.sessions(legacy)
            scan = _Scan(wires["legacy"], owner, intruder, "legacy", findings, notes)
            await scan.legacy_tasks(legacy)
        modern = catalogue.eras.get("modern")
        if modern is not None and "modern" in wires:
            scan = _Scan(wires["modern"], owner, intruder, "modern", findings, notes)
            await scan.tasks(modern)
            scan = _Scan(wires["modern"], owner, intruder, "modern", findings, notes)
            await scan.request_state(modern, state_ttl)
    return _first_of_each(findings), notes


def _first_of_each(findings: list[ScanFinding]) -> list[ScanFinding]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for finding in findings:
        if (finding.invariant, finding.era) not in seen:
            seen.add((finding.invariant, finding.era))
            kept.append(finding)
    return kept


def _refused(exchange: Exchange, id: object | None) -> bool:
    """Whether an exchange was refused: a 4xx/5xx status, or an error answer."""
    if not exchange.accepted:
        return True
    answer = exchange.answer(id) if id is not None else None
    return answer is not None and "error" in answer


def _shape(exchange: Exchange, id: object | None) -> tuple[int, object]:
    """What a refusal looks like: its status and error code."""
    answer = exchange.answer(id) if id is not None else None
    if answer is None:  # a refusal at the HTTP level answers with a null id
        answer = exchange.answer(None)
    error = answer.get("error") if answer is not None else None
    return exchange.status, error.get("code") if isinstance(error, dict) else None


class _Scan:
    def __init__(
        self,
        wire: Wire,
        owner: Identity,
        intruder: Identity,
        era: str,
        findings: list[ScanFinding],
        notes: list[str],
    ) -> None:
        self.wire = wire
        self.owner = owner
        self.intruder = intruder
        self.era = era
        self.findings = findings
        self.notes = notes
        self.log = Transcript()
        self.ids = 0
        #: (2025-11-25 tasks) each identity's session, by name.
        self.task_sessions: dict[str, str] = {}
        #: What each task request's ``_meta`` adds: the extension's declaration (modern).
        self._meta: dict[str, Any] = _DECLARED if era == "modern" else {}

    def _id(self, who: Identity) -> str:
        self.ids += 1
        return f"{who.name}-{self.ids}"

    def _found(self, invariant: str, detail: str) -> None:
        self.findings.append(self.log.finding(invariant, detail, self.era))

    def _compare(self, what: str, got: tuple[int, object], unknown: tuple[int, object]) -> None:
        if got != unknown:
            self._found(
                "identity-refusal-not-found",
                f"{self.intruder.name}'s {what} was refused with status {got[0]} and code "
                f"{got[1]}, but one for an id nobody has with status {unknown[0]} and code "
                f"{unknown[1]}: the refusal tells that the id exists",
            )

    # -- sessions (initialize era) ----------------------------------------------------------

    async def sessions(self, catalogue: EraCatalogue) -> None:
        wire, owner, intruder, log = self.wire, self.owner, self.intruder, self.log
        session = await wire.initialize(owner.headers)
        log.add(owner.name, "initialize", session="(the owner's)" if session else None)
        if session is None:
            self.notes.append("identities: the server opened no legacy session to cross")
            return
        event_id = await self._owner_event_id(catalogue, session)
        ping = wire.request(self._id(intruder), "ping")
        made_up = await wire.post(ping, intruder.headers, session="fuzz-" + secrets.token_hex(16))
        log.add(intruder.name, "POST ping with a made-up session id", status=made_up.status)
        unknown = _shape(made_up, ping["id"])

        ping = wire.request(self._id(intruder), "ping")
        got = await wire.post(ping, intruder.headers, session=session)
        log.add(intruder.name, f"POST ping with {owner.name}'s session id", status=got.status)
        if not _refused(got, ping["id"]):
            self._found(
                "identity-session-bound",
                f"{intruder.name}'s POST with {owner.name}'s Mcp-Session-Id was answered "
                f"(status {got.status}): the session is not bound to its principal",
            )
        else:
            self._compare(f"POST with {owner.name}'s session id", _shape(got, ping["id"]), unknown)
        stream = await wire.get(intruder.headers, session=session, window=wire.window / 4)
        log.add(intruder.name, f"GET with {owner.name}'s session id", status=stream.status)
        if stream.accepted:
            self._found(
                "identity-session-bound",
                f"{intruder.name}'s GET with {owner.name}'s Mcp-Session-Id opened its stream "
                f"(status {stream.status})",
            )
        if event_id is not None:
            await self._resume(session, event_id)
        gone = await wire.delete(intruder.headers, session=session)
        log.add(intruder.name, f"DELETE with {owner.name}'s session id", status=gone.status)
        ping = wire.request(self._id(owner), "ping")
        alive = await wire.post(ping, owner.headers, session=session)
        log.add(owner.name, "POST ping with its own session id", status=alive.status)
        if gone.accepted or (alive.answer(ping["id"]) is None and alive.status == 404):
            self._found(
                "identity-session-bound",
                f"{intruder.name}'s DELETE with {owner.name}'s Mcp-Session-Id was accepted "
                f"(status {gone.status}); {owner.name}'s session then answered "
                f"status {alive.status}",
            )
        await wire.delete(owner.headers, session=session)

    async def _owner_event_id(self, catalogue: EraCatalogue, session: str) -> str | None:
        """An SSE event id of one of the owner's streams: from a tool call answered as a
        stream with ids (the server's choice), if any of the first few tools does."""
        for tool in catalogue.tools[:4]:
            call = self.wire.request(
                self._id(self.owner),
                "tools/call",
                {"name": tool["name"], "arguments": minimal_arguments(tool.get("inputSchema"))},
            )
            got = await self.wire.post(call, self.owner.headers, session=session)
            if got.event_ids:
                self.log.add(self.owner.name, f"tools/call {tool['name']}", events="with ids")
                return got.event_ids[-1]
        return None

    async def _resume(self, session: str, event_id: str) -> None:
        wire, owner, intruder, log = self.wire, self.owner, self.intruder, self.log
        window = wire.window / 4
        got = await wire.get(
            intruder.headers, session=session, last_event_id=event_id, window=window
        )
        log.add(
            intruder.name,
            f"GET with {owner.name}'s session id and Last-Event-ID",
            status=got.status,
        )
        if got.accepted:
            self._found(
                "identity-session-bound",
                f"{intruder.name}'s GET resuming {owner.name}'s stream (its session id and "
                f"Last-Event-ID) was accepted (status {got.status})",
            )
        own = await wire.initialize(intruder.headers)
        if own is None:
            return
        got = await wire.get(intruder.headers, session=own, last_event_id=event_id, window=window)
        theirs = [m for m in got.messages if str(m.get("id", "")).startswith(owner.name + "-")]
        log.add(
            intruder.name,
            f"GET with its own session id and {owner.name}'s Last-Event-ID",
            status=got.status,
            messages=len(got.messages),
        )
        if theirs:
            self._found(
                "identity-session-bound",
                f"{intruder.name} resuming its own session with {owner.name}'s Last-Event-ID "
                f"got {len(theirs)} of {owner.name}'s messages (answer to id "
                f"{theirs[0].get('id')!r})",
            )
        await wire.delete(intruder.headers, session=own)

    # -- tasks (2026-07-28) -----------------------------------------------------------------

    async def legacy_tasks(self, catalogue: EraCatalogue) -> None:
        """2025-11-25's core tasks: the owner's and the intruder's requests each in a
        session of their own."""
        if catalogue.version != _CORE_TASKS_VERSION or not catalogue.has("tasks"):
            return
        for who in (self.owner, self.intruder):
            session = await self.wire.initialize(who.headers)
            if session is None:
                self.notes.append("identities: no legacy session: core tasks not crossed")
                return
            self.task_sessions[who.name] = session
        try:
            await self.tasks(catalogue)
        finally:
            for who in (self.owner, self.intruder):
                await self.wire.delete(who.headers, session=self.task_sessions.pop(who.name))

    async def tasks(self, catalogue: EraCatalogue) -> None:
        """Tasks: the 2026-07-28 extension, or (:meth:`legacy_tasks`) 2025-11-25's."""
        if self.era == "modern" and not catalogue.has("extensions", TASKS_EXTENSION):
            return
        # Tools that say they run as tasks first (2025-11-25's execution.taskSupport),
        # then any: in 2026-07-28 a tool shows it by answering with a task.
        marked = task_tools(catalogue.tools)
        tools = marked + [t for t in catalogue.tools if t not in marked]
        ids: list[str] = []
        for tool in tools[:_TRIED_TOOLS]:
            for _ in range(_SAMPLES):
                task_id = await self._create_task(tool)
                if task_id is None:
                    break
                ids.append(task_id)
            if ids:
                break
        if not ids:
            self.notes.append("identities: no tool answered with a task: tasks not crossed")
            return
        why = guessable_ids(ids)
        if why is not None:
            self._found("identity-task-id-unguessable", f"task ids {ids[:3]!r}: {why}")
        await self._cross_task(ids[-1])

    async def _listen_to(self, task_id: str) -> None:
        """The intruder's ``subscriptions/listen`` asks for the owner's task's status
        notifications: they must not be agreed to, nor arrive (read for a quarter of the
        window, while the owner's task may still change)."""
        wire, owner, intruder = self.wire, self.owner, self.intruder
        params = {"notifications": {"taskIds": [task_id]}}
        listen = wire.request(self._id(intruder), "subscriptions/listen", params, **_DECLARED)
        got = await wire.post(listen, intruder.headers, window=wire.window / 4)
        agreed: list[object] = []
        acknowledged = False
        for message in got.messages:
            if message.get("method") == "notifications/subscriptions/acknowledged":
                acknowledged = True
                notes = _params(message).get("notifications")
                ids = notes.get("taskIds") if isinstance(notes, dict) else None
                agreed = ids if isinstance(ids, list) else []
        leaked = [
            m
            for m in got.messages
            if m.get("method") == "notifications/tasks" and _params(m).get("taskId") == task_id
        ]
        self.log.add(
            intruder.name,
            f"subscriptions/listen to {owner.name}'s task",
            status=got.status,
            agreed=agreed,
            notifications=len(leaked),
        )
        if not acknowledged:
            self.notes.append("identities: subscriptions/listen was not acknowledged")
        if task_id in agreed or leaked:
            self._found(
                "identity-subscription-bound",
                f"{intruder.name}'s subscriptions/listen for {owner.name}'s task {task_id!r} "
                + ("was agreed to" if task_id in agreed else "was not agreed to")
                + (f" and got {len(leaked)} of its status notifications" if leaked else ""),
            )

    # -- requestState (2026-07-28) ---------------------------------------------------------

    async def request_state(self, catalogue: EraCatalogue, state_ttl: float | None) -> None:
        """Find a tool that asks the owner for input, then offer its ``requestState``
        where it does not belong (and, given ``state_ttl``, once it has expired)."""
        for tool in catalogue.tools[:_TRIED_TOOLS]:
            arguments = minimal_arguments(tool.get("inputSchema"), "x")
            call = self.wire.request(
                self._id(self.owner),
                "tools/call",
                {"name": tool["name"], "arguments": arguments},
                **_ASKABLE,
            )
            got = await self.wire.post(call, self.owner.headers)
            answer = got.answer(call["id"])
            result = answer.get("result") if answer is not None else None
            if _result_type(answer) != "input_required" or not isinstance(result, dict):
                continue
            state, asked = result.get("requestState"), result.get("inputRequests")
            if not isinstance(state, str) or not state or not isinstance(asked, dict):
                continue
            self.log.add(self.owner.name, f"tools/call {tool['name']}", result="input_required")
            responses = {key: _plausible_input(value) for key, value in asked.items()}
            await self._offer_state(tool, arguments, state, responses)
            if state_ttl is None:
                self.notes.append(
                    "identities: an expired requestState was not offered (the fuzzer cannot "
                    "forge one): give --state-ttl SECONDS, the server's lifetime for them"
                )
            else:
                await self._offer_expired(tool, arguments, state, responses, state_ttl)
            return
        self.notes.append("identities: no tool asked for input: requestState not crossed")

    async def _retry(
        self,
        who: Identity,
        tool: dict[str, Any],
        arguments: dict[str, Any],
        state: str,
        responses: dict[str, Any],
        what: str,
    ) -> tuple[Exchange, dict[str, Any] | None]:
        params = {
            "name": tool["name"],
            "arguments": arguments,
            "inputResponses": responses,
            "requestState": state,
        }
        call = self.wire.request(self._id(who), "tools/call", params, **_ASKABLE)
        got = await self.wire.post(call, who.headers)
        answer = got.answer(call["id"])
        self.log.add(who.name, what, status=got.status, answer=answer)
        return got, answer

    async def _offer_state(
        self, tool: dict[str, Any], arguments: dict[str, Any], state: str, responses: dict[str, Any]
    ) -> None:
        owner, intruder, name = self.owner, self.intruder, tool["name"]
        other = {**arguments, "_fuzz": "another request"} if arguments else {"_fuzz": 1}
        offers = (
            (intruder, arguments, state, f"tools/call {name} with {owner.name}'s requestState"),
            (owner, arguments, _altered(state), f"tools/call {name} with its requestState altered"),
            (owner, other, state, f"tools/call {name}, other arguments, its requestState"),
        )
        for who, args, offered, what in offers:
            got, answer = await self._retry(who, tool, args, offered, responses, what)
            if got.accepted and _result_type(answer) == "complete":
                self._found(
                    "identity-request-state-bound",
                    f"{who.name}'s {what} was taken: the call completed",
                )

    async def _offer_expired(
        self,
        tool: dict[str, Any],
        arguments: dict[str, Any],
        state: str,
        responses: dict[str, Any],
        state_ttl: float,
    ) -> None:
        """Wait until the owner's genuine state has outlived ``state_ttl``, then offer it
        back unchanged, as the owner, for the same request: it must be refused."""
        waited = expiry_wait(state_ttl)
        await trio.sleep(waited)
        what = f"tools/call {tool['name']} with its requestState {waited:g} s later"
        got, answer = await self._retry(self.owner, tool, arguments, state, responses, what)
        if got.accepted and _result_type(answer) == "complete":
            self._found(
                "identity-request-state-bound",
                f"{self.owner.name}'s {what} (past --state-ttl {state_ttl:g} s) was taken: "
                "the call completed with an expired state",
            )

    async def _create_task(self, tool: dict[str, Any]) -> str | None:
        wire, owner = self.wire, self.owner
        arguments = minimal_arguments(tool.get("inputSchema"), "x")
        params: dict[str, Any] = {"name": tool["name"], "arguments": arguments}
        if self.era == "legacy":
            params["task"] = {}  # 2025-11-25: a task-augmented call
        call = wire.request(self._id(owner), "tools/call", params, **self._meta)
        got = await wire.post(call, owner.headers, session=self.task_sessions.get(owner.name))
        answer = got.answer(call["id"])
        result = answer.get("result") if answer is not None else None
        if self.era == "legacy" and isinstance(result, dict):
            result = result.get("task")
        task_id = result.get("taskId") if isinstance(result, dict) else None
        self.log.add(owner.name, f"tools/call {tool['name']} as a task", status=got.status)
        return task_id if isinstance(task_id, str) else None

    async def _task_request(
        self, who: Identity, method: str, task_id: str, **params: Any
    ) -> tuple[Exchange, dict[str, Any] | None]:
        request = self.wire.request(
            self._id(who), method, {"taskId": task_id, **params}, **self._meta
        )
        got = await self.wire.post(request, who.headers, session=self.task_sessions.get(who.name))
        answer = got.answer(request["id"])
        mine = "its own" if who is self.owner else f"{self.owner.name}'s"
        self.log.add(who.name, f"{method} for {mine} task", status=got.status, answer=answer)
        return got, answer

    async def _cross_task(self, task_id: str) -> None:
        owner, intruder = self.owner, self.intruder
        _, before = await self._task_request(owner, "tasks/get", task_id)
        status_before = _task_status(before)
        made_up = "fuzz-" + secrets.token_hex(16)
        crossings: tuple[tuple[str, dict[str, Any]], ...] = (
            ("tasks/get", {}),
            ("tasks/update", {"inputResponses": {}})
            if self.era == "modern"
            else ("tasks/result", {}),
            ("tasks/cancel", {}),
        )
        for method, params in crossings:
            # First as for a task nobody has: what "not found" looks like for this method.
            got, answer = await self._task_request(intruder, method, made_up, **params)
            unknown = (got.status, _error_code(answer))
            unknown_taken = got.accepted and answer is not None and "result" in answer
            got, answer = await self._task_request(intruder, method, task_id, **params)
            taken = got.accepted and answer is not None and "result" in answer
            if answer is not None and taken and not (unknown_taken and method == "tasks/cancel"):
                # (A server that acknowledges every tasks/cancel, known id or not, gives
                # nothing away by it: whether it cancelled is checked below.)
                self._found(
                    "identity-task-bound",
                    f"{intruder.name}'s {method} for {owner.name}'s task {task_id!r} was "
                    f"answered with a result: {_describe(answer['result'])}",
                )
            elif not taken:
                self._compare(
                    f"{method} for {owner.name}'s task",
                    (got.status, _error_code(answer)),
                    unknown,
                )
        if self.era == "modern":
            await self._listen_to(task_id)
        _, after = await self._task_request(owner, "tasks/get", task_id)
        status_after = _task_status(after)
        if status_after == "cancelled" and status_before not in (None, "cancelled"):
            self._found(
                "identity-task-bound",
                f"{owner.name}'s task {task_id!r} was {status_before}, and after "
                f"{intruder.name}'s tasks/cancel it is cancelled",
            )


def expiry_wait(state_ttl: float) -> float:
    """How long after a ``requestState`` was issued the scan offers it as expired:
    ``state_ttl`` and a tenth, plus a second and a half (servers seal expiry times in
    whole seconds, and the state was issued a round trip before it was read)."""
    return state_ttl * 1.1 + 1.5


def _params(message: dict[str, Any]) -> dict[str, Any]:
    """A message's params, or ``{}`` when they are not an object."""
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _plausible_input(request: Any) -> dict[str, Any]:
    """An answer a client might give to one input request (declining where it can)."""
    method = request.get("method") if isinstance(request, dict) else None
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "fuzz"}
    if method == "roots/list":
        return {"roots": []}
    return {"action": "decline"}


def _result_type(answer: dict[str, Any] | None) -> str | None:
    result = answer.get("result") if answer is not None else None
    kind = result.get("resultType", "complete") if isinstance(result, dict) else None
    return kind if isinstance(kind, str) else None


def _altered(state: str) -> str:
    """``state`` with one character in its middle changed."""
    middle = len(state) // 2
    swap = "A" if state[middle] != "A" else "B"
    return state[:middle] + swap + state[middle + 1 :]


def _task_status(answer: dict[str, Any] | None) -> str | None:
    result = answer.get("result") if answer is not None else None
    status = result.get("status") if isinstance(result, dict) else None
    return status if isinstance(status, str) else None


def _error_code(answer: dict[str, Any] | None) -> object:
    error = answer.get("error") if answer is not None else None
    return error.get("code") if isinstance(error, dict) else None


def _describe(result: Any) -> str:
    if isinstance(result, dict) and "status" in result:
        return f"status {result['status']!r}"
    return "a result"
