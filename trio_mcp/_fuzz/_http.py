"""The HTTP side of the fuzzer: raw Streamable HTTP, driven with httpx.

Every message is its own POST, with the headers the spec asks for (computed
from the body and the conversation, or deliberately wrong when a step says
so). Requests are posted by background tasks, so many can be in flight;
their answers (a JSON body, or an SSE stream) go to the checker as they
arrive. Notifications and responses are posted inline: the step ends when
the server has taken them (202) or refused them. Legacy sessions keep their
``Mcp-Session-Id``; ``GET`` streams, ``DELETE``, ``Last-Event-ID`` and
disconnects are steps of their own.

Only the target URL is ever contacted: no redirects, no proxies from the
environment.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import attrs
import httpx
import trio

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._http._headers import (
    MCP_METHOD,
    MCP_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    HeaderParam,
    encode_value,
    header_params,
    name_source,
    param_value_text,
)
from .._protocol._envelope import PROTOCOL_VERSION
from .._types._base import RequestId
from .._versions import MODERN_VERSIONS
from ._checker import Checker
from ._connection import Connection, Timing
from ._steps import Expect, HttpRequest, Send
from ._target import HttpTarget

__all__ = ["HttpConnection"]

_GET = ("get",)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: 2026-07-28: the HTTP status some errors must come with.
_STATUS_FOR_CODE: dict[int, int] = {
    ErrorCode.METHOD_NOT_FOUND: 404,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
    ErrorCode.HEADER_MISMATCH: 400,
}
_MAX_BODY = 16 * 1024 * 1024
_MAX_STREAMS = 64
#: (resume) How long a stream that gave an event id must stay silent, its answer still
#: owed, before the fuzzer disconnects: the server is busy, so the answer is not in flight.
_QUIET = 0.1


@attrs.frozen
class _SseEvent:
    """One SSE event: its message (``None`` for an event without data, such as a priming
    event), the last event id as of this event, and the ``retry`` it set (ms)."""

    item: rpc.Message | rpc.Batch | rpc.InvalidMessage | None
    last_id: str | None
    retry: int | None


class HttpConnection(Connection):
    """A conversation with a Streamable HTTP server (one legacy session, or modern
    requests). Create it with :meth:`start`; its tasks live in a task of the nursery
    given there, and end when the connection is closed."""

    def __init__(
        self, target: HttpTarget, checker: Checker, timing: Timing, client: httpx.AsyncClient
    ) -> None:
        super().__init__(checker, timing)
        self.target = target
        self.client = client
        self.session_id: str | None = None
        self.stale_sessions: list[str] = []
        self.last_event_id: str | None = None
        #: ``x-mcp-header`` parameters by tool name (set from the probe's catalogue).
        self.tools: dict[str, list[HeaderParam]] = {}
        #: The version a modern POST's header names when its _meta does not.
        self.modern_version = MODERN_VERSIONS[0]
        #: How many streams were left and resumed with ``Last-Event-ID`` (``resume``).
        self.resumptions = 0
        self._streams: dict[tuple[Any, ...], trio.CancelScope] = {}
        self._limit = trio.CapacityLimiter(_MAX_STREAMS)
        #: POSTs whose exchange is not over yet (their status may still be judged).
        self._posts_open = 0
        self._tasks: trio.Nursery | None = None
        self._done = trio.Event()
        self._stopped = trio.Event()

    @classmethod
    async def start(
        cls, nursery: trio.Nursery, target: HttpTarget, checker: Checker, timing: Timing
    ) -> HttpConnection:
        """A new connection whose tasks run in ``nursery`` (returns at once; nothing is
        sent yet)."""
        connection: HttpConnection = await nursery.start(cls._serve, target, checker, timing)
        return connection

    @classmethod
    async def _serve(
        cls,
        target: HttpTarget,
        checker: Checker,
        timing: Timing,
        *,
        task_status: trio.TaskStatus[HttpConnection] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        timeout = httpx.Timeout(timing.deadline + 5.0, read=None)
        async with httpx.AsyncClient(
            timeout=timeout, follow_redirects=False, trust_env=False
        ) as client:
            connection = cls(target, checker, timing, client)
            try:
                async with trio.open_nursery() as tasks:
                    connection._tasks = tasks
                    task_status.started(connection)
                    await connection._done.wait()
                    tasks.cancel_scope.cancel()
                await connection._end_session()
            finally:
                connection._stopped.set()

    def set_tools(self, tools: Any) -> None:
        """Learn which tool parameters are mirrored into ``Mcp-Param-*`` headers."""
        for tool in tools:
            try:
                params = header_params(tool.get("inputSchema") or {})
            except ValueError:
                continue
            if params:
                self.tools[tool["name"]] = params

    async def aclose(self) -> None:
        """Stop every request and stream; end the legacy session with ``DELETE`` (bounded);
        close the HTTP client. Shielded; idempotent."""
        self._closing = True
        self._done.set()
        # unbounded shield: waits for the runner to cancel its tasks and send its
        # DELETE (at most 2 s); it sets _stopped before its HTTP client closes
        with trio.CancelScope(shield=True):
            await self._stopped.wait()

    async def _end_session(self) -> None:
        if self.session_id is None:
            return
        with trio.move_on_after(2.0) as scope:
            scope.shield = True
            try:
                await self.client.delete(
                    self.target.url,
                    headers={**self.target.headers, MCP_SESSION_ID: self.session_id},
                )
            except httpx.HTTPError:
                pass

    # -- sending ----------------------------------------------------------------------------------

    def _substitute(self, value: str) -> str | None:
        if value == "$session":
            return self.session_id
        if value == "$stale-session":
            return self.stale_sessions[-1] if self.stale_sessions else "fuzz-no-stale-session"
        if value == "$last-event-id":
            return self.last_event_id
        return value

    def _headers(
        self, message: rpc.Message | rpc.Batch | rpc.InvalidMessage, http: HttpRequest | None
    ) -> tuple[dict[str, str], bool]:
        """The headers for a POST of ``message``, and whether it is a modern request."""
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **{k.lower(): v for k, v in self.target.headers.items()},
        }
        modern = False
        if isinstance(message, rpc.JsonRpcRequest | rpc.JsonRpcNotification):
            meta = message.params.get("_meta") if message.params else None
            version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
            if isinstance(version, str):
                modern = True
                headers[MCP_PROTOCOL_VERSION] = version
            elif self.checker.era == "modern":
                # The header is what makes a POST modern, even one whose _meta is broken.
                modern = True
                headers[MCP_PROTOCOL_VERSION] = self.modern_version
            elif self.checker.era == "legacy" and self.checker.version is not None:
                headers[MCP_PROTOCOL_VERSION] = self.checker.version
            if modern and isinstance(message, rpc.JsonRpcRequest):
                headers[MCP_METHOD] = message.method
                name = name_source(message.method, message.params)
                if name is not None:
                    headers[MCP_NAME] = encode_value(name)
                    self._param_headers(message, name, headers)
        elif self.checker.era == "legacy" and self.checker.version is not None:
            headers[MCP_PROTOCOL_VERSION] = self.checker.version
        if self.session_id is not None and not modern:
            headers[MCP_SESSION_ID] = self.session_id
        if http is not None:
            for name, value in http.headers.items():
                resolved = self._substitute(value) if value is not None else None
                if resolved is None:
                    headers.pop(name.lower(), None)
                else:
                    headers[name.lower()] = resolved
        return headers, modern

    def _param_headers(
        self, message: rpc.JsonRpcRequest, name: str, headers: dict[str, str]
    ) -> None:
        if message.method != "tools/call" or name not in self.tools or message.params is None:
            return
        arguments = message.params.get("arguments")
        for param in self.tools[name]:
            try:
                text = param_value_text(param.value_in(arguments))
            except ValueError:
                continue
            if text is not None:
                headers[param.header] = encode_value(text)

    async def _send(self, step: Send) -> None:
        seq = self._next_seq()
        self.sent.append((len(self.steps) - 1, seq))
        http = step.http
        if (
            http is not None
            and "$stale-session" in http.headers.values()
            and not (self.stale_sessions)
        ):
            # No session was deleted (a reproduction cut down without its DELETE): the
            # 404 owed to a terminated session is not owed to this made-up one.
            http = attrs.evolve(http, expect_status=())
        if http is not None and http.method != "POST":
            await self._bare(http, seq)
            return
        message = rpc.parse(step.data)
        headers, modern = self._headers(message, http)
        self.checker.on_send(step.data, step.expect, seq, trio.current_time())
        request_id = message.id if isinstance(message, rpc.JsonRpcRequest) else None
        post = _Post(
            body=step.data,
            headers=headers,
            seq=seq,
            message=message,
            modern=modern,
            expect=step.expect,
            http=http,
        )
        self._posts_open += 1
        if request_id is not None and self._tasks is not None:
            try:
                self._tasks.start_soon(self._post, post, request_id)
            except BaseException:
                self._posts_open -= 1
                raise
            await trio.lowlevel.checkpoint()
        else:
            with trio.move_on_after(self.timing.deadline):
                await self._post(post, None)

    async def _settle(self) -> None:
        # The status of a POST is judged when its response comes, also for a request whose
        # answer is optional (``may``), which settling would not otherwise wait for: an
        # exchange still open here is waited for (up to the deadline), or a reproduction
        # could end before the very response that showed the failure.
        with trio.move_on_after(self.timing.deadline):
            while self._posts_open and self.alive:
                await self._change.wait()
        await super()._settle()

    async def _post(self, post: _Post, request_id: RequestId | None) -> None:
        """Exchange one POST; counted in ``_posts_open`` by the caller, before it starts
        (a task started here may not have run yet when the next step settles)."""
        try:
            await self._exchange(post, request_id)
        finally:
            self._posts_open -= 1
            self._changed()

    async def _exchange(self, post: _Post, request_id: RequestId | None) -> None:
        key = ("post", type(request_id), request_id)
        async with self._limit:
            with trio.CancelScope() as scope:
                if request_id is not None:
                    self._streams[key] = scope
                try:
                    async with self.client.stream(
                        "POST", self.target.url, content=post.body, headers=post.headers
                    ) as response:
                        left_at = await self._answer(post, response)
                    # (Leaving the block closed the connection: a disconnect.)
                    if left_at is not None and request_id is not None:
                        await self._resume(post, request_id, *left_at)
                except httpx.ConnectError as exc:
                    self._lost(f"the server refused the connection: {exc}")
                except httpx.LocalProtocolError:
                    # We could not even send it (a header httpx refuses): nothing to judge.
                    if request_id is not None:
                        self.checker.give_up([request_id])
                except httpx.HTTPError:
                    pass  # a stream cut short: an answer that never came is judged as such
                finally:
                    if self._streams.get(key) is scope:
                        del self._streams[key]

    async def _answer(self, post: _Post, response: httpx.Response) -> tuple[str, int | None] | None:
        """Judge and deliver the answer to ``post``. Returns where to resume from (the last
        event id and the ``retry`` delay) when the step asked to leave the stream."""
        status = response.status_code
        ctype = response.headers.get("content-type", "").lower()
        message = post.message
        is_request = isinstance(message, rpc.JsonRpcRequest)
        session = response.headers.get(MCP_SESSION_ID)
        if (
            session
            and isinstance(message, rpc.JsonRpcRequest)
            and message.method == "initialize"
            and 200 <= status < 300
        ):
            self.session_id = session
        delivered: list[rpc.Message | rpc.Batch | rpc.InvalidMessage] = []
        if "text/event-stream" in ctype and 200 <= status < 300:
            self._judge_status(post, status, ctype, has_body=True)
            if (
                post.http is not None
                and post.http.resume
                and isinstance(message, rpc.JsonRpcRequest)
            ):
                return await self._read_until_quiet(post, status, response, message.id)
            async for item in self._events(response):
                delivered.append(item)
                self._deliver(item)
                self._judge_codes(post, status, item)
            return None
        body = await _read_limited(response)
        self._judge_status(post, status, ctype, has_body=bool(body.strip()))
        if body.strip():
            item = rpc.parse(body)
            if (
                isinstance(message, rpc.JsonRpcRequest)
                and isinstance(item, rpc.ErrorResponse)
                and item.id is None
            ):
                # The HTTP exchange says which request this answers; a request refused before
                # its body was read (a missing session, say) is answered with a null id.
                if status < 400:
                    self.checker.fail(
                        "response-id-matches-request",
                        f"{_what(message)} was answered with HTTP {status} and an error with "
                        "a null id, though the request's id was readable",
                        post.seq,
                    )
                item = rpc.ErrorResponse(message.id, item.error)
            refused_quietly = status >= 400 and (
                isinstance(item, rpc.InvalidMessage)
                or (
                    isinstance(
                        message, rpc.JsonRpcNotification | rpc.ResultResponse | rpc.ErrorResponse
                    )
                    and isinstance(item, rpc.ErrorResponse)
                    and item.id is None
                )
            )
            # (A refused notification MAY carry an error without an id: not an answer.)
            if not refused_quietly:
                delivered.append(item)
                # (An error with a null id in this body answers this POST, nothing else.)
                self._deliver(item, origin=post.seq)
                self._judge_codes(post, status, item)
        if is_request and not any(
            isinstance(item, rpc.ResultResponse | rpc.ErrorResponse) for item in delivered
        ):
            assert isinstance(message, rpc.JsonRpcRequest)
            self._unanswered(post, message, status)
        return None

    async def _read_until_quiet(
        self, post: _Post, status: int, response: httpx.Response, request_id: RequestId
    ) -> tuple[str, int | None] | None:
        """Read an SSE answer until it gave an event id and then nothing for a while, the
        answer still owed; returns where to resume from. ``None``: the stream ended first
        (the answer came, or never will on it), or it gave no event ids at all."""
        last_id: str | None = None
        retry: int | None = None
        quiet = min(_QUIET, self.timing.deadline / 4)
        async with aclosing(self._sse_events(response)) as events:
            while True:
                owed = bool(self.checker.outstanding((request_id,)))
                with trio.move_on_after(quiet if last_id is not None and owed else math.inf):
                    try:
                        event = await anext(events)
                    except StopAsyncIteration:
                        break
                    if event.retry is not None:
                        retry = event.retry
                    last_id = event.last_id
                    if event.item is not None:
                        self._deliver(event.item)
                        self._judge_codes(post, status, event.item)
                    continue
                assert last_id is not None
                return last_id, retry
        if self.checker.outstanding((request_id,)):
            # Ended without the answer (and without going quiet first): judged as usual.
            assert isinstance(post.message, rpc.JsonRpcRequest)
            self._unanswered(post, post.message, status)
        return None

    async def _resume(
        self, post: _Post, request_id: RequestId, last_id: str, retry: int | None
    ) -> None:
        """Resume the stream of ``request_id`` with ``GET`` and ``Last-Event-ID: last_id``
        after the ``retry`` delay (at most a deadline), and read it until the answer came.

        A 405 means the server offers no GET streams: nothing more is owed. Any other
        refusal, or a stream that ends without the answer, is a failure; a stream that
        stays silent is judged when the deadline passes.
        """
        self.resumptions += 1
        delay = min((retry or 0) / 1000, self.timing.deadline)
        self.checker.resuming(request_id, trio.current_time() + delay)
        await trio.sleep(delay)
        headers = self._get_headers()
        headers["last-event-id"] = last_id
        what = f"{_what(post.message)} (left its stream after event {last_id!r})"
        async with self.client.stream("GET", self.target.url, headers=headers) as response:
            status = response.status_code
            ctype = response.headers.get("content-type", "").lower()
            if status == 405:
                self.checker.give_up([request_id])
                return
            if status != 200 or "text/event-stream" not in ctype:
                self.checker.fail(
                    "http-disconnect-not-cancellation",
                    f"{what}: the GET with that Last-Event-ID got HTTP {status} "
                    f"({ctype or 'no content type'}), not the rest of the stream",
                    post.seq,
                )
                self.checker.give_up([request_id])
                return
            async for item in self._events(response):
                self._deliver(item)
                if not self.checker.outstanding((request_id,)):
                    return
        if self.checker.outstanding((request_id,)):
            self.checker.fail(
                "http-disconnect-not-cancellation",
                f"{what}: the resumed stream ended without the answer",
                post.seq,
            )
            self.checker.give_up([request_id])

    def _unanswered(self, post: _Post, request: rpc.JsonRpcRequest, status: int) -> None:
        """A request whose HTTP answer carried no JSON-RPC answer."""
        self.checker.give_up([request.id])
        expect = post.expect
        if status >= 400 and expect is not None and expect.error_codes:
            self.checker.fail(
                expect.error_invariant or "http-status",
                f"{request.method} (id {request.id!r}) got HTTP {status} with no JSON-RPC error "
                f"(expected error {' or '.join(str(c) for c in expect.error_codes)})",
                post.seq,
            )

    def _judge_status(self, post: _Post, status: int, ctype: str, *, has_body: bool) -> None:
        message = post.message
        what = _what(message)
        wanted = post.http.expect_status if post.http is not None else ()
        if wanted:
            if status not in wanted:
                self.checker.fail(
                    post.http.status_invariant if post.http is not None else "http-status",
                    f"{what} got HTTP {status}; expected {' or '.join(map(str, wanted))}",
                    post.seq,
                )
            return
        if status >= 500:
            self.checker.fail("http-no-server-error", f"{what} got HTTP {status}", post.seq)
            return
        if isinstance(message, rpc.JsonRpcRequest):
            if 200 <= status < 300 and (
                status == 202 or not ("application/json" in ctype or "text/event-stream" in ctype)
            ):
                self.checker.fail(
                    "http-status",
                    f"{what} got HTTP {status} with content type {ctype or 'none'!r}; a request "
                    "is answered with application/json or text/event-stream",
                    post.seq,
                )
        elif isinstance(
            message, rpc.JsonRpcNotification | rpc.ResultResponse | rpc.ErrorResponse
        ) and (200 <= status < 300 and (status != 202 or has_body)):
            self.checker.fail(
                "http-status",
                f"{what} got HTTP {status}"
                + (" with a body" if has_body else "")
                + "; an accepted notification or response gets 202 with no body",
                post.seq,
            )

    def _judge_codes(
        self, post: _Post, status: int, item: rpc.Message | rpc.Batch | rpc.InvalidMessage
    ) -> None:
        """2026-07-28: the HTTP status that goes with some JSON-RPC errors is fixed."""
        if not post.modern or not isinstance(item, rpc.ErrorResponse):
            return
        code = item.error.code
        wanted = _STATUS_FOR_CODE.get(code)
        if wanted is not None and status != wanted:
            self.checker.fail(
                "http-status",
                f"{_what(post.message)}: error {code} came with HTTP {status}, not {wanted}",
                post.seq,
            )

    def _deliver(
        self, item: rpc.Message | rpc.Batch | rpc.InvalidMessage, *, origin: int | None = None
    ) -> None:
        for answer in self._arrived(item, origin):
            if self._tasks is not None:
                self._tasks.start_soon(self._post_answer, answer)

    async def _post_answer(self, answer: rpc.Message) -> None:
        headers, _ = self._headers(answer, None)
        try:
            await self.client.post(self.target.url, content=rpc.dumps(answer), headers=headers)
        except httpx.HTTPError:
            pass

    async def _events(
        self, response: httpx.Response
    ) -> AsyncIterator[rpc.Message | rpc.Batch | rpc.InvalidMessage]:
        """The JSON-RPC messages of an SSE stream (events with data), as they come."""
        async with aclosing(self._sse_events(response)) as events:
            async for event in events:
                if event.item is not None:
                    yield event.item

    async def _sse_events(self, response: httpx.Response) -> AsyncGenerator[_SseEvent, None]:
        """Every event of an SSE stream, as it comes (those without data too)."""
        data: list[str] = []
        size = 0
        last_id: str | None = None
        retry: int | None = None
        seen = False
        async for line in _sse_lines(response):
            if not line:
                if data or seen:
                    item = rpc.parse("\n".join(data)) if data else None
                    yield _SseEvent(item, last_id, retry)
                data, size, retry, seen = [], 0, None, False
                continue
            if line.startswith(":"):
                continue
            seen = True
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "data":
                if value or data:
                    data.append(value)
                    size += len(value)
                if size > _MAX_BODY:
                    yield _SseEvent(
                        rpc.InvalidMessage(f"an SSE event larger than {_MAX_BODY} bytes", None),
                        last_id,
                        retry,
                    )
                    return
            elif field == "id" and "\0" not in value:
                last_id = self.last_event_id = value
            elif field == "retry" and value.isascii() and value.isdigit():
                retry = int(value)
        if data:
            yield _SseEvent(rpc.parse("\n".join(data)), last_id, retry)

    # -- GET and DELETE ---------------------------------------------------------------------------

    def _get_headers(self) -> dict[str, str]:
        """The headers of a GET (or DELETE) in this conversation."""
        headers = {**{k.lower(): v for k, v in self.target.headers.items()}}
        if self.session_id is not None:
            headers[MCP_SESSION_ID] = self.session_id
        if self.checker.version is not None:
            headers[MCP_PROTOCOL_VERSION] = self.checker.version
        headers["accept"] = "text/event-stream"
        return headers

    async def _bare(self, http: HttpRequest, seq: int) -> None:
        headers = self._get_headers()
        if http.method != "GET":
            del headers["accept"]
        for name, value in http.headers.items():
            resolved = self._substitute(value) if value is not None else None
            if resolved is None:
                headers.pop(name.lower(), None)
            else:
                headers[name.lower()] = resolved
        if http.method == "DELETE":
            with trio.move_on_after(self.timing.deadline):
                try:
                    response = await self.client.delete(self.target.url, headers=headers)
                except httpx.ConnectError as exc:
                    self._lost(f"the server refused the connection: {exc}")
                    return
                except httpx.HTTPError:
                    return
                self._judge_bare(http, response.status_code, "", seq)
                if 200 <= response.status_code < 300 and self.session_id is not None:
                    self.stale_sessions.append(self.session_id)
                    self.session_id = None
            return
        ready = trio.Event()
        if self._tasks is not None:
            self._tasks.start_soon(self._get, http, headers, seq, ready)
            with trio.move_on_after(self.timing.deadline):
                await ready.wait()

    async def _get(
        self, http: HttpRequest, headers: dict[str, str], seq: int, ready: trio.Event
    ) -> None:
        with trio.CancelScope() as scope:
            self._streams[_GET] = scope
            try:
                async with self.client.stream("GET", self.target.url, headers=headers) as response:
                    ctype = response.headers.get("content-type", "").lower()
                    self._judge_bare(http, response.status_code, ctype, seq)
                    ready.set()
                    if "text/event-stream" in ctype and response.status_code == 200:
                        async for item in self._events(response):
                            self._deliver(item)
            except httpx.ConnectError as exc:
                self._lost(f"the server refused the connection: {exc}")
            except httpx.HTTPError:
                pass
            finally:
                ready.set()
                if self._streams.get(_GET) is scope:
                    del self._streams[_GET]

    def _judge_bare(self, http: HttpRequest, status: int, ctype: str, seq: int) -> None:
        wanted = http.expect_status
        what = f"{http.method} {self.target.url}"
        if wanted and status not in wanted:
            self.checker.fail(
                http.status_invariant,
                f"{what} got HTTP {status}; expected {' or '.join(map(str, wanted))}",
                seq,
            )
        elif status >= 500:
            self.checker.fail("http-no-server-error", f"{what} got HTTP {status}", seq)
        if http.method == "GET" and status == 200 and "text/event-stream" not in ctype:
            self.checker.fail(
                "http-get-stream-or-405",
                f"GET got HTTP 200 with content type {ctype or 'none'!r}, not text/event-stream",
                seq,
            )

    async def _disconnect(self, id: RequestId) -> None:
        key = _GET if id == "$get" else ("post", type(id), id)
        scope = self._streams.get(key)
        if scope is not None:
            scope.cancel()
        if id != "$get":
            # Its stream is gone: no answer can come on it (a legacy server may still
            # replay it on a resumed stream, which the checker accepts).
            self.checker.give_up([id])
        await trio.lowlevel.checkpoint()


class _Post:
    __slots__ = ("body", "expect", "headers", "http", "message", "modern", "seq")

    def __init__(
        self,
        *,
        body: bytes,
        headers: dict[str, str],
        seq: int,
        message: rpc.Message | rpc.Batch | rpc.InvalidMessage,
        modern: bool,
        expect: Expect | None,
        http: HttpRequest | None,
    ) -> None:
        self.body = body
        self.headers = headers
        self.seq = seq
        self.message = message
        self.modern = modern
        self.expect = expect
        self.http = http


def _what(message: rpc.Message | rpc.Batch | rpc.InvalidMessage) -> str:
    if isinstance(message, rpc.JsonRpcRequest):
        return f"POST {message.method} (id {message.id!r})"
    if isinstance(message, rpc.JsonRpcNotification):
        return f"POST {message.method}"
    if isinstance(message, rpc.ResultResponse | rpc.ErrorResponse):
        return "POST of a response"
    if isinstance(message, rpc.Batch):
        return "POST of a batch"
    return "POST of an invalid message"


async def _sse_lines(response: httpx.Response) -> AsyncIterator[str]:
    """The lines of an SSE stream (see :func:`split_sse_lines`)."""
    async for line in split_sse_lines(response.aiter_text()):
        yield line


async def split_sse_lines(chunks: AsyncIterator[str]) -> AsyncIterator[str]:
    """Lines split where the SSE format says (CRLF, LF or CR) and nowhere else.

    httpx's ``aiter_lines`` also splits at U+2028, U+0085 and the other characters
    :meth:`str.splitlines` knows, which JSON may carry unescaped: a ``data:`` line
    holding one would be cut in two.
    """
    pending = ""
    async for chunk in chunks:
        pending += chunk
        # A CR at the very end may be the first half of a CRLF: keep it for later.
        held = "\r" if pending.endswith("\r") else ""
        *lines, pending = _LINE_BREAK.split(pending[: len(pending) - len(held)])
        pending += held
        for line in lines:
            yield line
    if pending:
        yield pending.removesuffix("\r")


async def _read_limited(response: httpx.Response) -> bytes:
    chunks = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > _MAX_BODY:
            break
        chunks.append(chunk)
    return b"".join(chunks)
