"""Single Streamable HTTP exchanges for the security scans: one POST, GET or DELETE as a
chosen identity, its answer read in full (a JSON body, or an SSE stream until the answer
to the request came or a read window ran out).

The state machine's HTTP connection (:mod:`._http`) keeps one conversation going; the
scans instead cross conversations on purpose (Bob's request with Alice's session id), so
they say every header themselves. Only the target URL is contacted: no redirects, no
proxies from the environment.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any, Final, cast

import attrs
import httpx
import orjson
import trio

from .._http._headers import (
    LAST_EVENT_ID,
    MCP_METHOD,
    MCP_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    encode_value,
    name_source,
)
from ._http import split_sse_lines
from ._messages import CLIENT_INFO, Speaker

__all__ = ["CANCEL_AFTER", "Exchange", "Wire", "scan_client"]

#: The most bytes of one answer kept (a larger one is cut there).
MAX_ANSWER_BYTES: Final = 4 * 1024 * 1024
#: Seconds a scan lets a request it cancels run first: the server has read it and its
#: handler runs when the cancellation (or the dropped stream) reaches it.
CANCEL_AFTER: Final = 0.02


def scan_client(deadline: float | None) -> httpx.AsyncClient:
    """An httpx client for the scans: no redirects, no proxies from the environment,
    ``deadline`` seconds per operation (``None``: the caller's cancel scopes bound them),
    as many connections as the scans open at once."""
    return httpx.AsyncClient(
        trust_env=False,
        follow_redirects=False,
        timeout=httpx.Timeout(deadline),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
    )


JsonObject = dict[str, Any]


@attrs.frozen(kw_only=True)
class Exchange:
    """What one HTTP request got back.

    Attributes:
        status: the HTTP status (0: no answer within the window, or the connection failed).
        session_id: the ``Mcp-Session-Id`` the answer carried.
        messages: the JSON-RPC messages of the body or stream that parsed as objects.
        event_ids: the SSE event ids seen, in order.
    """

    status: int
    session_id: str | None = None
    messages: tuple[JsonObject, ...] = ()
    event_ids: tuple[str, ...] = ()

    def answer(self, id: object) -> JsonObject | None:
        """The response for request ``id``, if it came."""
        for message in self.messages:
            if "method" not in message and message.get("id") == id:
                return message
        return None

    @property
    def accepted(self) -> bool:
        return 200 <= self.status < 300


class Wire:
    """Exchanges with one Streamable HTTP endpoint, each with the headers it is given.

    Args:
        client: the httpx client to send with (the caller owns it).
        url: the MCP endpoint.
        era: ``"modern"`` (each request carries the envelope and the 2026-07-28 headers)
            or ``"legacy"`` (sessions; ``version`` is the negotiated one).
        version: the protocol version spoken.
        window: the most seconds one exchange reads its answer for.
    """

    def __init__(
        self, client: httpx.AsyncClient, url: str, era: str, version: str, *, window: float
    ) -> None:
        self.client = client
        self.url = url
        self.era = era
        self.version = version
        self.window = window
        self.speaker = Speaker(era, version)

    def request(
        self, id: object, method: str, params: JsonObject | None = None, **meta: Any
    ) -> JsonObject:
        """A request of this era (``meta`` goes into ``_meta``, after the envelope)."""
        return self.speaker.request(id, method, params, **meta)  # type: ignore[arg-type]

    def headers(
        self,
        identity: Mapping[str, str],
        message: JsonObject | None = None,
        *,
        session: str | None = None,
        last_event_id: str | None = None,
    ) -> dict[str, str]:
        """The headers of an exchange as ``identity`` (its own headers), in this era."""
        headers = {"accept": "application/json, text/event-stream"}
        headers.update({name.lower(): value for name, value in identity.items()})
        headers[MCP_PROTOCOL_VERSION] = self.version
        if message is not None and self.era == "modern" and "method" in message:
            headers[MCP_METHOD] = message["method"]
            name = name_source(message["method"], message.get("params"))
            if name is not None:
                headers[MCP_NAME] = encode_value(name)
        if session is not None:
            headers[MCP_SESSION_ID] = session
        if last_event_id is not None:
            headers[LAST_EVENT_ID] = last_event_id
        return headers

    async def post(
        self,
        message: JsonObject,
        identity: Mapping[str, str],
        *,
        session: str | None = None,
        window: float | None = None,
    ) -> Exchange:
        """POST ``message`` as ``identity``; blocks until its answer came, the body ended,
        or the read window (``window``, default the wire's) ran out: then the stream is
        closed (a request still running is abandoned, which a 2026-07-28 server takes for
        its cancellation) and what came is kept."""
        headers = self.headers(identity, message, session=session)
        headers["content-type"] = "application/json"
        body = orjson.dumps(message)
        return await self._exchange("POST", headers, body, message.get("id"), window=window)

    async def get(
        self,
        identity: Mapping[str, str],
        *,
        session: str | None = None,
        last_event_id: str | None = None,
        window: float | None = None,
    ) -> Exchange:
        """GET the endpoint's stream as ``identity`` and read it for ``window`` seconds."""
        headers = self.headers(identity, session=session, last_event_id=last_event_id)
        headers["accept"] = "text/event-stream"
        return await self._exchange("GET", headers, None, None, window=window)

    async def delete(self, identity: Mapping[str, str], *, session: str) -> Exchange:
        """DELETE session ``session`` as ``identity``."""
        headers = self.headers(identity, session=session)
        return await self._exchange("DELETE", headers, None, None)

    async def initialize(self, identity: Mapping[str, str]) -> str | None:
        """Open a legacy session as ``identity`` (initialize, then initialized): its id, or
        ``None`` when the server opened none."""
        hello = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": self.version,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
        }
        first = await self.post(hello, identity)
        if first.session_id is None or first.answer("init") is None:
            return None
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.post(done, identity, session=first.session_id)
        return first.session_id

    async def _exchange(
        self,
        method: str,
        headers: dict[str, str],
        body: bytes | None,
        id: object,
        *,
        window: float | None = None,
    ) -> Exchange:
        status = 0
        session: str | None = None
        messages: list[JsonObject] = []
        event_ids: list[str] = []
        with trio.move_on_after(self.window if window is None else window):
            try:
                async with self.client.stream(method, self.url, headers=headers, content=body) as r:
                    status = r.status_code
                    session = r.headers.get(MCP_SESSION_ID)
                    ctype = r.headers.get("content-type", "")
                    if ctype.startswith("text/event-stream"):
                        await _read_events(r, id, messages, event_ids)
                    else:
                        data = await _read_limited(r)
                        _add_json(data, messages)
            except httpx.HTTPError:
                pass
        return Exchange(
            status=status,
            session_id=session,
            messages=tuple(messages),
            event_ids=tuple(event_ids),
        )


async def _read_events(
    response: httpx.Response, id: object, messages: list[JsonObject], event_ids: list[str]
) -> None:
    """Read SSE events into ``messages`` until the answer to ``id`` came (forever when
    ``id`` is ``None``: the caller's window ends it)."""
    data: list[str] = []
    size = 0
    lines = cast("AsyncGenerator[str, None]", split_sse_lines(response.aiter_text()))
    async with aclosing(lines):
        async for line in lines:
            if line.startswith(":"):
                continue
            if line:
                field, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if field == "data":
                    data.append(value)
                    size += len(value)
                elif field == "id":
                    event_ids.append(value)
                if size <= MAX_ANSWER_BYTES:
                    continue
            if data:
                _add_json("\n".join(data).encode(), messages)
                data, size = [], 0
                if id is not None and any(
                    m.get("id") == id and "method" not in m for m in messages
                ):
                    return


async def _read_limited(response: httpx.Response) -> bytes:
    chunks = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _add_json(data: bytes, messages: list[JsonObject]) -> None:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    items = value if isinstance(value, list) else [value]
    messages.extend(item for item in items if isinstance(item, dict))
