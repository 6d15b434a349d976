"""What the fuzzer does to a server, one step at a time, and the file format that records it.

A run of the state machine becomes a list of :class:`Step` objects; executing
the same list again against the same server replays it. A reproduction file
is that list as JSON lines, after a header line::

    {"trio_mcp_fuzz": 1, "transport": "stdio", "violation": {...}, ...}
    {"send": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", ...}, "expect": {...}}
    {"await": [1]}
    {"send_text": "{not json"}
    {"sleep": 0.05}

``send`` holds the exact JSON value that was written (one line on stdio, one
POST body over HTTP); bytes that are not JSON are kept as ``send_text`` or,
when they are not even UTF-8, ``send_base64``. ``expect`` says what the
answer must look like (see :class:`Expect`); the checker knows the rest from
the messages themselves.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, TypeAlias

import attrs
import orjson

from .._types._base import RequestId

__all__ = [
    "FORMAT_VERSION",
    "Answer",
    "Await",
    "Disconnect",
    "Expect",
    "HttpRequest",
    "Send",
    "Settle",
    "Sleep",
    "Step",
    "dump_steps",
    "load_steps",
    "step_from_json",
    "step_to_json",
]

#: The version of the reproduction file format.
FORMAT_VERSION = 1

Answer = Literal["must", "should", "may", "never"]


@attrs.frozen(kw_only=True)
class Expect:
    """What the answer to one sent message must look like.

    Attributes:
        answer: whether a response must come (``must``), should come
            (``should``: silence is a warning), may come, or must never come.
        answer_invariant: the invariant a missing answer violates.
        error_codes: when not empty, an error answer must carry one of these codes.
        error_invariant: the invariant a wrong error code violates (and a result, if
            ``result_ok`` is false).
        result_ok: whether a result (rather than an error) is acceptable.
        is_error_ok: with ``result_ok`` false, a result with ``isError: true`` (a tool
            execution error) counts as the error that was wanted.
        error_ok: whether an error is acceptable (false: only a result will do).
        output_schema: (tools/call) the tool's ``outputSchema``.
        echo_version: (initialize) the version the result must carry.
        empty_result: (ping) the result must be ``{}`` (``_meta`` aside).
        own_cursor: (lists) the request sends back a cursor the server returned.
        request_id: the id of a request our own parser cannot read (nested deeper
            than it goes) but the server may: its answer is then expected, not a stray.
    """

    answer: Answer = "must"
    answer_invariant: str = "request-answered"
    error_codes: tuple[int, ...] = ()
    error_invariant: str | None = None
    result_ok: bool = True
    is_error_ok: bool = False
    error_ok: bool = True
    output_schema: dict[str, Any] | None = None
    echo_version: str | None = None
    empty_result: bool = False
    own_cursor: bool = False
    request_id: str | int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field in attrs.fields(Expect):
            value = getattr(self, field.name)
            if value != field.default:
                out[field.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Expect:
        names = {field.name for field in attrs.fields(Expect)}
        kwargs = {key: value for key, value in data.items() if key in names}
        if "error_codes" in kwargs:
            kwargs["error_codes"] = tuple(kwargs["error_codes"])
        return cls(**kwargs)


@attrs.frozen(kw_only=True)
class HttpRequest:
    """How a message (or a bare GET/DELETE) goes over HTTP, when it is not the default.

    Header values may hold the placeholders ``$session`` (the current session
    id), ``$stale-session`` (one that was deleted) and ``$last-event-id``
    (the last SSE event id seen); the executor substitutes them.

    Attributes:
        method: ``POST`` (with the step's body), ``GET`` or ``DELETE``.
        headers: headers to send instead of the computed ones (a value of
            ``None`` removes that header).
        expect_status: acceptable HTTP statuses (empty: whatever the message implies).
        status_invariant: the invariant another status violates.
        resume: (a POST of a request) when its answer comes as an SSE stream that gives
            an event id and then goes quiet before the answer, disconnect there and
            resume with ``GET`` and ``Last-Event-ID``: the answer must come on the
            resumed stream (``http-disconnect-not-cancellation``).
    """

    method: Literal["POST", "GET", "DELETE"] = "POST"
    headers: dict[str, str | None] = attrs.field(factory=dict)
    expect_status: tuple[int, ...] = ()
    status_invariant: str = "http-status"
    resume: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method}
        if self.headers:
            out["headers"] = self.headers
        if self.expect_status:
            out["expect_status"] = list(self.expect_status)
            out["status_invariant"] = self.status_invariant
        if self.resume:
            out["resume"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HttpRequest:
        return cls(
            method=data.get("method", "POST"),
            headers=dict(data.get("headers") or {}),
            expect_status=tuple(data.get("expect_status") or ()),
            status_invariant=data.get("status_invariant", "http-status"),
            resume=bool(data.get("resume", False)),
        )


@attrs.frozen(kw_only=True)
class Send:
    """Send ``data`` (no trailing newline) as one message: a line on stdio, a POST body
    over HTTP (``http`` says how, or a GET/DELETE with no body)."""

    data: bytes
    expect: Expect | None = None
    http: HttpRequest | None = None


@attrs.frozen
class Await:
    """Wait until each request in ``ids`` has its answer (or the deadline passes)."""

    ids: tuple[RequestId, ...]


@attrs.frozen
class Sleep:
    """Wait ``seconds`` (bounded by the executor)."""

    seconds: float


@attrs.frozen
class Disconnect:
    """(HTTP) Close the response stream of request ``id``: the 2026-07-28 cancellation."""

    id: RequestId


@attrs.frozen
class Settle:
    """Wait for every outstanding answer, then for late answers to cancelled requests."""


Step: TypeAlias = Send | Await | Sleep | Disconnect | Settle


def step_to_json(step: Step) -> dict[str, Any]:
    """The JSON object of one step (one line of a reproduction file)."""
    if isinstance(step, Send):
        out: dict[str, Any] = {}
        try:
            value = orjson.loads(step.data)
            exact = orjson.dumps(value) == step.data
        except orjson.JSONDecodeError:
            exact = False
        if exact:
            out["send"] = value
        else:
            try:
                out["send_text"] = step.data.decode("utf-8")
            except UnicodeDecodeError:
                out["send_base64"] = base64.b64encode(step.data).decode("ascii")
        if step.expect is not None:
            out["expect"] = step.expect.to_json()
        if step.http is not None:
            out["http"] = step.http.to_json()
        return out
    if isinstance(step, Await):
        return {"await": list(step.ids)}
    if isinstance(step, Sleep):
        return {"sleep": step.seconds}
    if isinstance(step, Disconnect):
        return {"disconnect": step.id}
    return {"settle": True}


def step_from_json(data: Mapping[str, Any]) -> Step:
    """Read one step.

    Raises:
        ValueError: not a step this version of the format knows.
    """
    if "send" in data or "send_text" in data or "send_base64" in data:
        if "send" in data:
            raw = orjson.dumps(data["send"])
        elif "send_text" in data:
            raw = str(data["send_text"]).encode("utf-8", "surrogatepass")
        else:
            raw = base64.b64decode(str(data["send_base64"]))
        expect = Expect.from_json(data["expect"]) if data.get("expect") is not None else None
        http = HttpRequest.from_json(data["http"]) if data.get("http") is not None else None
        return Send(data=raw, expect=expect, http=http)
    if "await" in data:
        return Await(tuple(data["await"]))
    if "sleep" in data:
        return Sleep(float(data["sleep"]))
    if "disconnect" in data:
        return Disconnect(data["disconnect"])
    if "settle" in data:
        return Settle()
    raise ValueError(f"not a step: {dict(data)!r}")


def dump_steps(header: Mapping[str, Any], steps: Iterable[Step]) -> bytes:
    """A reproduction file: the header line, then one line per step."""
    lines = [orjson.dumps({"trio_mcp_fuzz": FORMAT_VERSION, **header})]
    lines.extend(orjson.dumps(step_to_json(step)) for step in steps)
    return b"\n".join(lines) + b"\n"


def load_steps(data: bytes) -> tuple[dict[str, Any], list[Step]]:
    """Read a reproduction file: ``(header, steps)``.

    Raises:
        ValueError: the file is not a reproduction (or from a newer format).
    """
    lines = [line for line in data.splitlines() if line.strip()]
    if not lines:
        raise ValueError("the file is empty")
    try:
        header = orjson.loads(lines[0])
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"line 1 is not JSON: {exc}") from None
    if not isinstance(header, dict) or "trio_mcp_fuzz" not in header:
        raise ValueError("line 1 is not a trio-mcp fuzz reproduction header")
    if header["trio_mcp_fuzz"] != FORMAT_VERSION:
        raise ValueError(f"reproduction format {header['trio_mcp_fuzz']!r} is not supported")
    steps = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"line {number} is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ValueError(f"line {number} is not a JSON object")  # noqa: TRY004 - a format error
        if "note" in value and len(value) == 1:
            continue
        steps.append(step_from_json(value))
    return header, steps


def iter_sent_lines(steps: Iterable[Step]) -> Iterator[bytes]:
    """Just the bytes sent, one per line: what to pipe into a stdio server by hand."""
    for step in steps:
        if isinstance(step, Send) and (step.http is None or step.http.method == "POST"):
            yield step.data
