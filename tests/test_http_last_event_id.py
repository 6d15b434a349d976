"""``Last-Event-ID`` is the client's to write: whatever bytes it holds, resuming answers 400
(malformed), 410 (no stream of this session resumes from there) or the stream itself, and
never a 500 or a logged traceback. Driven through the real ASGI app, with no server between
the bytes and the app."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import orjson
import pytest
import trio
from http_support import ACCEPT, LEGACY, make_server
from hypothesis import given, settings, strategies as st

from trio_mcp.http import McpAsgiApp, open_asgi_app

Headers = list[tuple[bytes, bytes]]


async def asgi(
    app: McpAsgiApp, method: str, headers: Headers, body: bytes = b""
) -> tuple[int, bytes]:
    """One request to ``app``; the client leaves once the body was read (which ends an event
    stream). Returns the status and the body."""
    sent: list[MutableMapping[str, Any]] = []
    inbound = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> MutableMapping[str, Any]:
        await trio.lowlevel.checkpoint()
        return inbound.pop() if inbound else {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"accept", ACCEPT.encode()), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    with trio.fail_after(5):
        await app(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@asynccontextmanager
async def a_session() -> AsyncIterator[tuple[McpAsgiApp, Headers, str]]:
    """An app with one legacy session whose standalone stream was opened once (so that the
    store holds a stream of it); yields the app, the session's headers, and that stream's
    id."""
    server, _ = make_server()
    async with open_asgi_app(server) as app:
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        status, body = await asgi(
            app, "POST", [(b"content-type", b"application/json")], orjson.dumps(initialize)
        )
        assert status == 200, body
        assert app.manager is not None
        (session_id,) = app.manager.sessions
        headers = [
            (b"mcp-session-id", session_id.encode()),
            (b"mcp-protocol-version", LEGACY.encode()),
        ]
        status, body = await asgi(app, "GET", headers)
        assert status == 200
        event_id = body.split(b"id: ", 1)[1].split(b"\n", 1)[0].decode()  # the priming event
        stream_id, _, seq = event_id.rpartition("/")
        assert seq == "1", event_id
        yield app, headers, stream_id


class Errors(logging.Handler):
    """Collects the records of ERROR and above."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def resume(value: bytes) -> int:
    """The status of resuming, with ``value`` as ``Last-Event-ID``, a stream of a fresh
    session (a stream of which exists; ``{stream}`` in ``value`` is replaced by its id).
    Fails if anything was logged at ERROR."""
    errors = Errors()
    logger = logging.getLogger("trio_mcp")
    logger.addHandler(errors)
    try:
        async with a_session() as (app, headers, stream_id):
            value = value.replace(b"{stream}", stream_id.encode())
            status, body = await asgi(app, "GET", [*headers, (b"last-event-id", value)])
            assert app.manager is not None and len(app.manager.sessions) == 1  # it goes on
    finally:
        logger.removeHandler(errors)
    assert not errors.records, [r.getMessage() for r in errors.records]
    if status != 200:
        assert orjson.loads(body)["error"]["code"] == -32600
    return status


@pytest.mark.parametrize(
    ("value", "status"),
    [
        (b"{stream}/\xb2", 400),  # a superscript two: "\u00b2".isdigit(), but not for int()
        (b"{stream}/" + b"9" * 5000, 400),  # past int()'s 4300 digits (and our 128 chars)
        (b"{stream}/" + b"9" * 100, 410),  # within 128 characters, far past any id issued
        (b"{stream}/\xd9\xa3", 400),  # an Arabic-Indic digit, in UTF-8
        (b"{stream}/\xb9" + b"0" * 3, 400),
        (b"{stream}/1\x00", 400),
        (b"{stream}/0", 410),  # well-formed, but ours start at 1
        (b"{stream}/01", 410),
        (b"{stream}/2", 410),  # not issued yet
        (b"", 400),
        (b" \t ", 400),
        (b"{stream}/1", 200),  # resumes (the stream carries on, until the client leaves)
        (b" {stream}/1\t", 200),  # surrounding blanks are not part of a header value
    ],
)
async def test_last_event_ids(value: bytes, status: int) -> None:
    assert await resume(value) == status


_TAILS = st.one_of(
    st.binary(max_size=40),
    st.lists(
        st.sampled_from(
            [
                b"0",
                b"1",
                b"9",
                b"\xb2",
                b"\xb3",
                b"\xb9",
                b"\xbc",
                b"/",
                b" ",
                b"\t",
                b"-",
                b"\x00",
                b"\xff",
                b"+",
                b"_",
            ]
        ),
        max_size=30,
    ).map(b"".join),
    st.integers(17, 6000).map(lambda n: b"9" * n),
)


@settings(max_examples=150, deadline=None)
@given(st.data())
async def test_no_last_event_id_gets_a_500(data: st.DataObject) -> None:
    value = data.draw(
        st.one_of(
            st.binary(max_size=300),
            _TAILS.map(lambda tail: b"{stream}/" + tail),
            _TAILS.map(lambda tail: b"{stream}" + tail),
        ),
        label="Last-Event-ID",
    )
    status = await resume(value)
    assert status == 200 or 400 <= status < 500  # (which 4xx: test_last_event_ids)
