"""The requirements the fuzzer checks, each named after the sentence of the spec (or of
JSON-RPC 2.0) that it enforces.

A violated ``MUST`` is a failure; a violated ``SHOULD`` is a warning (a failure
with ``strict=True``). Each invariant raises its own exception class, so that
Hypothesis shrinks each kind of failure on its own instead of sliding from one
to another.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterable
from typing import Final, Literal

import attrs

__all__ = [
    "CHECK_CLASSES",
    "INVARIANTS",
    "SECURITY_CLASSES",
    "CheckClass",
    "Invariant",
    "Level",
    "Violation",
    "parse_checks",
    "violation",
]

Level = Literal["MUST", "SHOULD"]
CheckClass = Literal["protocol", "http", "identity", "crosstalk", "tools", "leaks"]
"""The class of a check, as ``--checks`` selects and reports group them: ``protocol``
(JSON-RPC, lifecycle, features, tasks), ``http`` (the HTTP surface), ``identity`` (what
one principal can reach of another's), ``crosstalk`` (answers and notifications reaching
the request they belong to under concurrency), ``tools`` (poisoning and drift), ``leaks``
(hangs and resources held)."""

#: Every check class, in the order reports list them.
CHECK_CLASSES: Final[tuple[CheckClass, ...]] = typing.get_args(CheckClass)
#: The classes ``--security`` selects: all but ``protocol``.
SECURITY_CLASSES: Final[tuple[CheckClass, ...]] = tuple(c for c in CHECK_CLASSES if c != "protocol")


def parse_checks(value: str | Iterable[str]) -> frozenset[CheckClass]:
    """The check classes named by ``value``: a comma-separated string (``"http,tools"``,
    as ``--checks`` takes it) or an iterable of names.

    Raises:
        ValueError: a name that is not a check class (the message names it and lists the
            classes), or no name at all.
    """
    names = value.split(",") if isinstance(value, str) else list(value)
    chosen: set[CheckClass] = set()
    for raw in names:
        name = raw.strip()
        if name not in CHECK_CLASSES:
            raise ValueError(
                f"unknown check class {name!r}: choose from {', '.join(CHECK_CLASSES)}"
            )
        chosen.add(name)
    if not chosen:
        raise ValueError(f"no check class given: choose from {', '.join(CHECK_CLASSES)}")
    return frozenset(chosen)


@attrs.frozen
class Invariant:
    """One checked requirement.

    Attributes:
        name: a short stable identifier (used in reports and reproduction files).
        level: ``"MUST"`` (a failure) or ``"SHOULD"`` (a warning unless strict).
        requirement: what the spec says, close to its own words.
        source: where it says it.
        check_class: the class of check it belongs to (see :data:`CheckClass`).
        cwe: the CWE number of the weakness a violation shows, where one fits.
    """

    name: str
    level: Level
    requirement: str
    source: str
    check_class: CheckClass = attrs.field(default="protocol", kw_only=True)
    cwe: int | None = attrs.field(default=None, kw_only=True)

    @property
    def severity(self) -> Literal["error", "warning"]:
        """How bad a violation is, as reports (and SARIF's ``level``) say it: ``"error"``
        for a ``MUST``, ``"warning"`` for a ``SHOULD``."""
        return "error" if self.level == "MUST" else "warning"


_ALL = (
    Invariant(
        "response-id-matches-request",
        "MUST",
        "Responses MUST include the same ID as the request they correspond to.",
        "MCP basic/index (Responses); JSON-RPC 2.0 §5",
    ),
    Invariant(
        "one-response-per-request",
        "MUST",
        "A request gets exactly one response: a result or an error, never both, never two.",
        "JSON-RPC 2.0 §5",
    ),
    Invariant(
        "request-answered",
        "MUST",
        "When a rpc call is made, the Server MUST reply with a Response (a hang is a failure).",
        "JSON-RPC 2.0 §4; MCP basic/lifecycle (Timeouts)",
    ),
    Invariant(
        "no-response-to-notification",
        "MUST",
        "Notifications: the receiver MUST NOT send a response.",
        "MCP basic/index (Notifications); JSON-RPC 2.0 §4.1",
    ),
    Invariant(
        "cancelled-request-not-answered",
        "MUST",
        "After a cancellation the server has read, it MUST NOT send any further messages "
        "for the cancelled request (2026-07-28 stdio and Streamable HTTP).",
        "MCP 2026-07-28 basic/transports/stdio (Cancellation)",
    ),
    Invariant(
        "cancelled-request-not-answered-legacy",
        "SHOULD",
        "Receivers of a cancellation SHOULD not send a response for the cancelled request.",
        "MCP 2025-11-25 basic/utilities/cancellation",
    ),
    Invariant(
        "valid-jsonrpc-only",
        "MUST",
        "The server MUST NOT write anything to its stdout that is not a valid MCP message "
        "(over HTTP: every body and SSE event is a JSON-RPC message).",
        "MCP basic/transports/stdio",
        cwe=116,
    ),
    Invariant(
        "server-alive",
        "MUST",
        "The server keeps serving until the client ends the connection: bad input gets an "
        "error response, not a crash (every request MUST get a response).",
        "JSON-RPC 2.0 §4, §5.1; MCP basic/lifecycle (Shutdown)",
        cwe=248,
    ),
    Invariant(
        "exit-on-stdin-eof",
        "SHOULD",
        "Servers SHOULD exit promptly when their standard input is closed.",
        "MCP 2026-07-28 basic/transports/stdio (Shutdown)",
    ),
    Invariant(
        "parse-error-code",
        "MUST",
        "Invalid JSON is answered with error -32700 (Parse error) and a null id.",
        "JSON-RPC 2.0 §5.1",
    ),
    Invariant(
        "parse-error-answered",
        "SHOULD",
        "Invalid JSON gets an error response (-32700), not silence.",
        "JSON-RPC 2.0 §5.1 (examples)",
    ),
    Invariant(
        "invalid-request-answered",
        "SHOULD",
        "A value that is not a valid Request object but has a readable id gets an error "
        "response (-32600), not silence.",
        "JSON-RPC 2.0 §5, §5.1 (examples)",
    ),
    Invariant(
        "invalid-request-code",
        "MUST",
        "A value that is not a valid Request object is answered with -32600 (Invalid "
        "Request), or -32602 when only the params are wrong.",
        "JSON-RPC 2.0 §5.1",
    ),
    Invariant(
        "method-not-found-code",
        "MUST",
        "A request for a method that does not exist is answered with error -32601.",
        "JSON-RPC 2.0 §5.1; MCP 2026-07-28 Streamable HTTP (Protocol Version Header)",
    ),
    Invariant(
        "invalid-params-code",
        "SHOULD",
        "Params that do not fit the method are answered with -32602 (Invalid params).",
        "JSON-RPC 2.0 §5.1; MCP server/tools, server/prompts (Error Handling)",
    ),
    Invariant(
        "tool-inputs-validated",
        "SHOULD",
        "Servers MUST validate all tool inputs: arguments that break the tool's inputSchema "
        "get an error (a JSON-RPC error or a result with isError: true), not a plain result.",
        "MCP server/tools (Security Considerations, Error Handling)",
        cwe=20,
    ),
    Invariant(
        "missing-envelope-error",
        "MUST",
        "A modern request without the _meta protocol version and client capabilities is "
        "rejected with -32602 (Invalid params).",
        "MCP 2026-07-28 basic/index (_meta); conformance server-stateless",
    ),
    Invariant(
        "unsupported-version-error",
        "MUST",
        "If the server does not implement the requested version it MUST respond with an "
        "UnsupportedProtocolVersionError (-32022) listing the versions it supports.",
        "MCP 2026-07-28 basic/versioning",
    ),
    Invariant(
        "missing-capability-error",
        "MUST",
        "A request that needs a client capability it did not declare is refused with "
        "MissingRequiredClientCapabilityError (-32021) whose data.requiredCapabilities "
        "names the capabilities needed (not ones the request declared); over HTTP with "
        "400 Bad Request (http-status).",
        "MCP 2026-07-28 schema (MissingRequiredClientCapabilityError); basic (Error Codes)",
    ),
    Invariant(
        "initialize-echoes-version",
        "MUST",
        "If the server supports the requested protocol version, it MUST respond with the "
        "same version.",
        "MCP 2025-11-25 basic/lifecycle (Version Negotiation)",
    ),
    Invariant(
        "discover-answered",
        "MUST",
        "Servers MUST implement server/discover: a well-formed discover gets a DiscoverResult.",
        "MCP 2026-07-28 basic/versioning, server/discover",
    ),
    Invariant(
        "ping-answered-empty",
        "MUST",
        "The receiver of a ping MUST respond promptly with an empty response.",
        "MCP 2025-11-25 basic/utilities/ping",
    ),
    Invariant(
        "message-matches-schema",
        "MUST",
        "Results and notifications have the shape the schema of the negotiated version gives them.",
        "MCP schema (schema.json of the version)",
    ),
    Invariant(
        "structured-content-matches-output-schema",
        "MUST",
        "If an output schema is provided, servers MUST provide structured results that "
        "conform to this schema.",
        "MCP 2025-06-18+ server/tools (Output Schema)",
    ),
    Invariant(
        "no-server-requests-in-modern",
        "MUST",
        "The server MUST NOT write JSON-RPC requests to stdout (nor on any response stream).",
        "MCP 2026-07-28 basic/transports/stdio, streamable-http",
    ),
    Invariant(
        "only-negotiated-capabilities",
        "MUST",
        "Both parties MUST only use capabilities that were successfully negotiated (no "
        "sampling, roots or elicitation requests to a client that declared none; log "
        "messages only with the logging capability and, in 2026-07-28, only for a request "
        "that set a log level).",
        "MCP basic/lifecycle (Operation); 2026-07-28 server/utilities/logging",
    ),
    Invariant(
        "progress-token-active",
        "MUST",
        "Progress notifications MUST only reference tokens that were provided in an active "
        "request; they MUST stop after completion.",
        "MCP basic/utilities/progress (Behavior Requirements)",
    ),
    Invariant(
        "progress-increases",
        "MUST",
        "The progress value MUST increase with each notification.",
        "MCP basic/utilities/progress",
    ),
    Invariant(
        "own-cursor-accepted",
        "MUST",
        "A nextCursor the server returned continues the listing when sent back.",
        "MCP server/utilities/pagination",
    ),
    Invariant(
        "invalid-cursor-error",
        "SHOULD",
        "Invalid cursors SHOULD result in an error with code -32602 (Invalid params).",
        "MCP server/utilities/pagination (Error Handling)",
    ),
    Invariant(
        "lists-stable",
        "SHOULD",
        "A list does not change between two calls unless the server sent its list_changed "
        "notification (checked where every notification is seen: legacy stdio).",
        "MCP server/tools, resources, prompts (List Changed Notification)",
    ),
    Invariant(
        "task-status-forward",
        "MUST",
        "A task's status is one of working, input_required, completed, failed, cancelled; it "
        "moves only forward (working and input_required may alternate, then one terminal "
        "status), and a terminal status never changes.",
        "MCP tasks extension (Task Status)",
    ),
    Invariant(
        "task-durable-create",
        "MUST",
        "A task is recorded before the CreateTaskResult is sent: tasks/get for its id resolves "
        "(within its ttlMs) rather than answering an unknown task.",
        "MCP tasks extension (Task Creation)",
    ),
    Invariant(
        "task-result-once",
        "MUST",
        "A task carries result only when completed and error only when failed, and a completed "
        "task's result is the same on every tasks/get.",
        "MCP tasks extension (Tasks, Task Polling)",
    ),
    Invariant(
        "task-cancel-ack",
        "MUST",
        "tasks/cancel answers an empty acknowledgement (resultType complete, no task fields) "
        "every time: again, and for a task already in a terminal status.",
        "MCP tasks extension (Task Cancellation)",
    ),
    Invariant(
        "task-error-codes",
        "SHOULD",
        "A taskId that is not a known task gets a JSON-RPC error (-32602, Invalid params, is "
        "usual), not a result; tasks/* from a client that did not declare the extension get "
        "the missing-required-client-capability error (-32021; -32003 in the extension draft).",
        "MCP tasks extension (Task Update Requests, Task Cancellation, Capability Negotiation)",
    ),
    Invariant(
        "task-no-request-state",
        "MUST",
        "Task messages carry no requestState: a task is identified by its taskId alone.",
        "MCP tasks extension (Tasks): a task is addressed by its taskId",
    ),
    Invariant(
        "http-status",
        "MUST",
        "Streamable HTTP status codes: 202 with no body for an accepted notification; "
        "application/json or text/event-stream for a request; 400 for header mismatches, "
        "unsupported versions and invalid envelopes; 404 for an unknown method (2026-07-28) "
        "and for a terminated session.",
        "MCP Streamable HTTP (Sending Messages, Server Validation, Session Management)",
        check_class="http",
    ),
    Invariant(
        "http-header-mismatch",
        "MUST",
        "Headers that do not match the body are rejected with 400 and error -32020.",
        "MCP 2026-07-28 Streamable HTTP (Server Validation)",
        check_class="http",
        cwe=436,
    ),
    Invariant(
        "http-missing-session",
        "SHOULD",
        "Servers that require a session ID SHOULD respond to requests without one with 400.",
        "MCP 2025-11-25 Streamable HTTP (Session Management)",
        check_class="http",
    ),
    Invariant(
        "http-get-stream-or-405",
        "MUST",
        "A GET to the MCP endpoint returns text/event-stream or 405 Method Not Allowed.",
        "MCP 2025-11-25 Streamable HTTP (Listening for Messages)",
        check_class="http",
    ),
    Invariant(
        "http-disconnect-not-cancellation",
        "SHOULD",
        "Disconnection SHOULD NOT be interpreted as the client cancelling its request; the SSE "
        "stream SHOULD eventually include the response: after a disconnect from a stream that "
        "gave event IDs, a GET with Last-Event-ID (not refused with 405) delivers the answer.",
        "MCP 2025-11-25 Streamable HTTP (Sending Messages; Resumability and Redelivery)",
        check_class="http",
    ),
    Invariant(
        "http-origin-validated",
        "SHOULD",
        "Servers MUST validate the Origin header; an invalid one gets 403 Forbidden (a "
        "local server refuses http://evil.example).",
        "MCP Streamable HTTP (Security Warning)",
        check_class="http",
        cwe=346,
    ),
    Invariant(
        "http-no-server-error",
        "SHOULD",
        "Bad requests get a 4xx status and a JSON-RPC error, not a 5xx.",
        "MCP Streamable HTTP (Sending Messages)",
        check_class="http",
        cwe=755,
    ),
    Invariant(
        "http-host-validated",
        "SHOULD",
        "Servers bound to localhost validate the Host header (DNS rebinding protection): a "
        "request naming another host (Host: evil.example) gets 403 or 421, not an answer.",
        "MCP Streamable HTTP (Security Warning); MCP security best practices (DNS rebinding)",
        check_class="http",
        cwe=350,
    ),
    Invariant(
        "http-body-limit",
        "SHOULD",
        "A request body past the server's limit is refused (413, or another 4xx) before it "
        "is read in full, not parsed and answered: memory per request is bounded. Probed up "
        "to the fuzzer's --max-body.",
        "MCP Streamable HTTP (Security Warning); RFC 9110 §15.5.14 (413 Content Too Large)",
        check_class="http",
        cwe=770,
    ),
    Invariant(
        "http-body-memory-bounded",
        "SHOULD",
        "Memory per request is bounded: a server on this machine, sent growing request "
        "bodies up to the fuzzer's --max-body, does not grow by more than "
        "--body-memory-bound (it refuses a body past its limit before holding it whole).",
        "MCP Streamable HTTP (Security Warning); CWE-770",
        check_class="http",
        cwe=770,
    ),
    Invariant(
        "stdio-message-memory-bounded",
        "SHOULD",
        "Memory per message is bounded over stdio too: sent growing requests (one line "
        "each) up to the fuzzer's --max-body, the server does not grow by more than "
        "--body-memory-bound (it refuses a line past its limit before holding it whole). "
        "Probed only when asked (--stdio-bodies): most stdio servers read a line whole.",
        "MCP stdio transport; CWE-770",
        check_class="leaks",
        cwe=770,
    ),
    Invariant(
        "http-slow-body-isolated",
        "SHOULD",
        "A client that sends its body slowly holds up only its own request: while one body "
        "is half sent, another request is answered within the deadline (no slowloris).",
        "MCP Streamable HTTP (Security Warning); RFC 9110 §15.5.9 (408 Request Timeout)",
        check_class="http",
        cwe=400,
    ),
    Invariant(
        "http-nesting-limit",
        "SHOULD",
        "JSON nested deeper than the server takes gets a 4xx status and a JSON-RPC error "
        "(-32700 or -32600), not a 5xx, a dropped connection or a crash.",
        "JSON-RPC 2.0 §5.1; MCP Streamable HTTP (Sending Messages)",
        check_class="http",
        cwe=674,
    ),
    Invariant(
        "http-unauthorized-challenge",
        "MUST",
        "A 401 carries a WWW-Authenticate: Bearer challenge with the resource_metadata "
        "parameter, and that URL serves the protected resource metadata (a JSON object whose "
        "authorization_servers lists at least one issuer).",
        "MCP basic/authorization (Protected Resource Metadata Discovery); RFC 9728 §3, §5.1",
        check_class="http",
        cwe=287,
    ),
    Invariant(
        "tool-no-hidden-instructions",
        "MUST",
        "A tool's name, title, description and schema texts carry nothing hidden from the "
        "user who approves it: no invisible or bidirectional-control characters, HTML "
        'comments, or instructions aimed at the model ("ignore previous instructions", '
        '<IMPORTANT> tags, "do not tell the user").',
        "MCP server/tools (Security Considerations); MCP security best practices (tool poisoning)",
        check_class="tools",
        cwe=1427,
    ),
    Invariant(
        "tool-definition-stable",
        "SHOULD",
        "A listed tool keeps its definition (title, description, schemas, annotations) "
        "while a connection lasts: a tool that changes after the user approved it (a rug "
        "pull), with or without notifications/tools/list_changed, must be approved again.",
        "MCP server/tools (Security Considerations); MCP security best practices (tool "
        "poisoning, rug pulls)",
        check_class="tools",
        cwe=345,
    ),
    Invariant(
        "tool-names-distinct",
        "SHOULD",
        "Tool names are 1 to 128 of A-Z a-z 0-9 _ - . and no two of a server's tools look "
        "alike: none differ only by case or Unicode confusables, none collide once "
        "namespaced (server__tool) by a host.",
        "MCP 2025-11-25 server/tools (Tool Names); MCP security best practices (tool shadowing)",
        check_class="tools",
        cwe=1007,
    ),
    Invariant(
        "tool-names-distinct-across-servers",
        "SHOULD",
        "The tools of a host's servers stay distinct once the host lists them together: no "
        "two collide once namespaced (server__tool), differ only by case, Unicode "
        "confusables or punctuation, or agree in the 64 characters an LLM API takes; one "
        "name on two servers is reported too (distinct only for a host that namespaces).",
        "MCP security best practices (tool shadowing); MCP 2025-11-25 server/tools (Tool Names)",
        check_class="tools",
        cwe=1007,
    ),
    Invariant(
        "identity-session-bound",
        "MUST",
        "A session belongs to the principal that opened it: another principal's POST, GET "
        "or DELETE with its Mcp-Session-Id, or GET resuming its stream with Last-Event-ID, is "
        "refused and changes nothing.",
        "MCP Streamable HTTP (Session Management); basic/security_best_practices "
        "(Session Hijacking)",
        check_class="identity",
        cwe=639,
    ),
    Invariant(
        "identity-task-bound",
        "MUST",
        "A task belongs to the principal that created it: tasks/get, tasks/update and "
        "tasks/cancel for its id from another principal are refused and change nothing.",
        "MCP tasks extension (Security Considerations: Task Isolation and Access Control)",
        check_class="identity",
        cwe=639,
    ),
    Invariant(
        "identity-request-state-bound",
        "MUST",
        "A requestState is taken back only from the principal it was issued to, unaltered, "
        "for the request it was issued for: one replayed by another principal, altered, or "
        "sent with another request is refused.",
        "MCP 2026-07-28 basic/utilities/multi-round-trip (Security: requestState integrity)",
        check_class="identity",
        cwe=639,
    ),
    Invariant(
        "identity-subscription-bound",
        "MUST",
        "A subscription carries only its principal's changes: a subscriptions/listen asking "
        "for another principal's task is not agreed to, and none of that task's status "
        "notifications reach it.",
        "MCP 2026-07-28 server/utilities/subscriptions; tasks extension (Task Isolation)",
        check_class="identity",
        cwe=639,
    ),
    Invariant(
        "identity-task-id-unguessable",
        "SHOULD",
        "Task ids are unguessable: long, random (at least 64 bits of entropy) and not "
        "sequential, so that knowing one does not lead to another's.",
        "MCP tasks extension (Security Considerations)",
        check_class="identity",
        cwe=330,
    ),
    Invariant(
        "identity-refusal-not-found",
        "SHOULD",
        "A principal refused another's session or task is told what it would be told of one "
        'that does not exist (the same status and error code): "not found", never '
        '"forbidden", so that refusals do not confirm that an id exists.',
        "MCP Streamable HTTP (Session Management); tasks extension (Security Considerations)",
        check_class="identity",
        cwe=203,
    ),
    Invariant(
        "crosstalk-answer-own-request",
        "MUST",
        "Under concurrency every response reaches the client and the request it answers: a "
        "client never gets an answer (or a result) that belongs to another client's request.",
        "JSON-RPC 2.0 §5; MCP Streamable HTTP (Sending Messages)",
        check_class="crosstalk",
        cwe=488,
    ),
    Invariant(
        "crosstalk-progress-own-request",
        "MUST",
        "Progress and other notifications for a request reach the client that sent it, with "
        "its own progress token, never another client's.",
        "MCP basic/utilities/progress; Streamable HTTP (Sending Messages)",
        check_class="crosstalk",
        cwe=488,
    ),
    Invariant(
        "leaks-requests-answered",
        "MUST",
        "Under N-way concurrency with cancellations every request that was not cancelled is "
        "answered within the deadline (none is lost or starved).",
        "JSON-RPC 2.0 §4; MCP basic/lifecycle (Timeouts)",
        check_class="leaks",
        cwe=400,
    ),
    Invariant(
        "leaks-memory-bounded",
        "SHOULD",
        "Cancelled and answered requests release what they held: the server's memory (RSS) "
        "and open streams after a burst of requests with cancellations stay within the bound.",
        "MCP basic/utilities/cancellation (Implementation Notes: free resources)",
        check_class="leaks",
        cwe=772,
    ),
)

#: Every invariant by name.
INVARIANTS: Final = {invariant.name: invariant for invariant in _ALL}


class Violation(Exception):
    """An invariant failed: raised inside the state machine so that Hypothesis shrinks it.

    Attributes:
        invariant: which requirement.
        detail: what happened, for people.
    """

    def __init__(self, invariant: Invariant, detail: str) -> None:
        super().__init__(f"{invariant.name}: {detail}")
        self.invariant = invariant
        self.detail = detail


@functools.cache
def _violation_class(name: str) -> type[Violation]:
    # One class per invariant: Hypothesis tells failures apart by exception type.
    cls_name = "Violation_" + name.replace("-", "_")
    return type(cls_name, (Violation,), {"__module__": __name__})


def violation(name: str, detail: str) -> Violation:
    """The exception for invariant ``name`` with ``detail``."""
    return _violation_class(name)(INVARIANTS[name], detail)
