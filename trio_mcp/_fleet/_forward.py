"""HTTP exchanges forwarded to the worker that holds their session, through the workers'
inboxes (see :mod:`._inbox`).

A request for a session held by worker A that lands on worker B is sent whole (method,
headers, body, the principal B named) to A's inbox; A serves it as if it had come to A
itself, with an ASGI ``send`` whose every message goes back to B's inbox, and B writes
those messages to its client: the status and headers, then the body (one JSON answer, or
an SSE stream, event by event). So everything A does for a session (routing to POST
streams, priming events, ids from the shared event store, resumption) holds on B
unchanged. B's client leaving is told to A (its ``receive`` then says
``http.disconnect``): A lets the stream go, and its events wait in the store. A looks
whether B still lives every :data:`LIVENESS_CHECK` seconds too (B may die without a word),
so a stream of a dead worker is let go and the client can open it again elsewhere.

Messages (kinds): ``fwd.request`` (B to A), ``fwd.send`` (A to B, one ASGI message each,
except that a response that is not an event stream sends its start with its body),
``fwd.leave`` (B to A: the client left). Each payload is a JSON head, a newline, and the
body's bytes.

Resource handling
-----------------

A forwarded exchange is served on A in the nursery the owner gives (the session
manager's), so none outlives the app; at most ``max_served`` at once (past that, 503). On
B the exchange is the request's own task; B holds at most :data:`FORWARD_BUFFER` messages
of it (a client reading more slowly than A writes loses its stream, and resumes it with
``Last-Event-ID``). Every Redis wait is bounded by :data:`~._sessions.REDIS_TIMEOUT`; B
checks every :data:`LIVENESS_CHECK` seconds of silence that A is still alive.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final, Protocol

import orjson
import trio

from .._errors import ErrorCode
from .._http.server._asgi import FORWARDED_PRINCIPAL
from .._http.server._exchange import HttpRequest, Scope
from ._inbox import InboxUnavailable
from ._sessions import REDIS_TIMEOUT

__all__ = ["Forwarder", "Inbox"]

log = logging.getLogger("trio_mcp.fleet")

#: Messages of one forwarded response a worker holds for its client.
FORWARD_BUFFER: Final = 256
#: Seconds of silence after which the forwarding worker checks that the owner lives.
LIVENESS_CHECK: Final = 2.0
#: Forwarded exchanges one worker serves at once.
MAX_SERVED: Final = 10_000
#: Seconds a client is told to wait when its session's worker went away mid-request.
OWNER_GONE_RETRY_AFTER: Final = 1

#: Request headers never forwarded: this worker checked them, and credentials are not to
#: rest in Redis (the owner gets the principal this worker named instead).
CREDENTIALS: Final = frozenset({b"authorization", b"proxy-authorization", b"cookie", b"dpop"})

REQUEST: Final = "fwd.request"
SEND: Final = "fwd.send"
LEAVE: Final = "fwd.leave"


class Inbox(Protocol):
    """What forwarding needs of a worker's inbox."""

    @property
    def worker_id(self) -> str: ...

    def on(self, kind: str, handler: Callable[[bytes], Awaitable[None]]) -> None: ...

    async def send(self, worker_id: str, kind: str, payload: bytes) -> bool: ...

    async def alive(self, worker_id: str) -> bool: ...


def _frame(head: dict[str, Any], body: bytes = b"") -> bytes:
    return orjson.dumps(head) + b"\n" + body


def _unframe(payload: bytes) -> tuple[dict[str, Any], bytes]:
    head, _, body = payload.partition(b"\n")
    parsed = orjson.loads(head)
    if not isinstance(parsed, dict):
        raise TypeError("a forwarded message's head is not an object")
    return parsed, body


class _Served:
    """An exchange this worker serves for another."""

    __slots__ = ("left", "origin")

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.left = trio.Event()


class Forwarder:
    """One worker's forwarding, both ways.

    Args:
        inbox: this worker's inbox.
        serve: serves a forwarded request on this worker (the app's session endpoint,
            which must not forward it again).
        nursery: where forwarded requests are served (the session manager's).
    """

    def __init__(
        self,
        inbox: Inbox,
        serve: Callable[[HttpRequest], Awaitable[None]],
        nursery: trio.Nursery,
        *,
        max_served: int = MAX_SERVED,
    ) -> None:
        self.inbox = inbox
        self._serve = serve
        self._nursery = nursery
        self.max_served = max_served
        #: correlation id -> the channel of a response this worker forwards to its client
        self._waiting: dict[str, trio.MemorySendChannel[tuple[dict[str, Any], bytes]]] = {}
        #: correlation id -> an exchange this worker serves for another
        self._served: dict[str, _Served] = {}
        #: worker id -> when (Trio time) it was last seen alive
        self._alive_at: dict[str, float] = {}
        inbox.on(REQUEST, self._on_request)
        inbox.on(SEND, self._on_send)
        inbox.on(LEAVE, self._on_leave)

    # -- the worker the request landed on ----------------------------------------------------

    async def forward(
        self, http: HttpRequest, body: bytes, owner: str, principal: str | None
    ) -> bool:
        """Have ``owner`` answer ``http`` (whose ``body`` was read), and write its answer.
        Blocks until the answer ended, the client left, or the owner went away.

        Returns ``False`` when the owner is gone before it took the request (nothing was
        sent to the client). When Redis does not take the request (it does not answer, or
        the owner's inbox is full), the client gets 503 with ``Retry-After``."""
        cid = secrets.token_urlsafe(12)
        send, receive = trio.open_memory_channel[tuple[dict[str, Any], bytes]](FORWARD_BUFFER)
        self._waiting[cid] = send
        head = {
            "c": cid,
            "f": self.inbox.worker_id,
            "m": http.method,
            "p": http.path,
            "h": [
                [k.decode("latin-1"), v.decode("latin-1")]
                for k, v in http.scope["headers"]
                if k.lower() not in CREDENTIALS
            ],
            "a": list(http.scope["client"]) if http.scope.get("client") else None,
            "u": principal,
        }
        try:
            try:
                with trio.fail_after(REDIS_TIMEOUT):
                    taken = await self.inbox.send(owner, REQUEST, _frame(head, body))
            except (InboxUnavailable, trio.TooSlowError) as exc:
                log.warning("could not forward a request to worker %s: %s", owner, exc)
                await http.respond_error(
                    503,
                    ErrorCode.INTERNAL_ERROR,
                    "Service Unavailable: the worker holding this session cannot be reached "
                    "through the fleet's shared state (Redis) now; try again",
                    headers=[(b"retry-after", b"%d" % OWNER_GONE_RETRY_AFTER)],
                )
                return True
            if not taken:
                return False
            with receive:
                await self._relay(http, receive, owner, cid)
            return True
        finally:
            self._waiting.pop(cid, None)
            send.close()

    async def _relay(
        self,
        http: HttpRequest,
        receive: trio.MemoryReceiveChannel[tuple[dict[str, Any], bytes]],
        owner: str,
        cid: str,
    ) -> None:
        started = ended = False
        client_left = False
        async with trio.open_nursery() as nursery:

            async def watch_client() -> None:
                nonlocal client_left
                await http.wait_disconnect()
                client_left = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch_client)
            while not ended:
                with trio.move_on_after(LIVENESS_CHECK) as silence:
                    try:
                        head, body = await receive.receive()
                    except trio.EndOfChannel:
                        break  # this worker fell too far behind: the client resumes
                if silence.cancelled_caught:
                    if await self._alive(owner):
                        continue
                    log.warning("worker %s went away mid-request", owner)
                    break
                if head.get("t") == "abort":
                    break  # the owner could not finish it
                try:
                    if head.get("t") in ("start", "whole"):
                        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in head["h"]]
                        await http.send(
                            {"type": "http.response.start", "status": head["s"], "headers": headers}
                        )
                        started = True
                    if head.get("t") in ("body", "whole"):
                        more = bool(head.get("more"))
                        await http.send(
                            {"type": "http.response.body", "body": body, "more_body": more}
                        )
                        ended = not more
                except Exception:  # noqa: BLE001 - the client is gone
                    client_left = True
                    break
            nursery.cancel_scope.cancel()
        if not ended:
            await self._tell_leave(owner, cid)
        if client_left:
            return
        if not started:
            await http.respond_error(
                503,
                ErrorCode.INTERNAL_ERROR,
                "Service Unavailable: the worker holding this session went away; try again",
                headers=[(b"retry-after", b"%d" % OWNER_GONE_RETRY_AFTER)],
            )
        elif not ended:
            # The stream ends here; its events are in the store for a resumption.
            await http.send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _alive(self, owner: str) -> bool:
        """Whether ``owner`` lives: asked at most once per :data:`LIVENESS_CHECK` for all
        the streams this worker carries from it (so idle streams cost Redis little)."""
        now = trio.current_time()
        checked = self._alive_at.get(owner)
        if checked is not None and now - checked < LIVENESS_CHECK:
            await trio.lowlevel.checkpoint()
            return True
        try:
            with trio.fail_after(REDIS_TIMEOUT):
                alive = await self.inbox.alive(owner)
        except Exception:  # noqa: BLE001 - Redis away: the owner cannot answer through it
            alive = False
        if alive:
            if len(self._alive_at) >= MAX_SERVED:
                self._alive_at.clear()
            self._alive_at[owner] = trio.current_time()
        else:
            self._alive_at.pop(owner, None)
        return alive

    async def _tell_leave(self, owner: str, cid: str) -> None:
        with trio.move_on_after(REDIS_TIMEOUT, shield=True):
            try:
                await self.inbox.send(owner, LEAVE, _frame({"c": cid}))
            except Exception as exc:  # noqa: BLE001 - the owner then finds out on its next write
                log.debug("could not tell %s that a client left: %r", owner, exc)

    async def _on_send(self, payload: bytes) -> None:
        await trio.lowlevel.checkpoint()
        head, body = _unframe(payload)
        cid = head.get("c")
        channel = self._waiting.get(cid) if isinstance(cid, str) else None
        if channel is None:
            return  # that exchange is over here (its owner hears it on its next write)
        try:
            channel.send_nowait((head, body))
        except trio.WouldBlock:
            log.warning("a forwarded stream fell behind its worker: ended (the client resumes)")
            channel.close()
            del self._waiting[cid]  # type: ignore[arg-type]
        except trio.BrokenResourceError:
            del self._waiting[cid]  # type: ignore[arg-type]

    # -- the worker that holds the session ---------------------------------------------------

    async def _on_request(self, payload: bytes) -> None:
        await trio.lowlevel.checkpoint()
        head, body = _unframe(payload)
        cid, origin = head["c"], head["f"]
        if not (isinstance(cid, str) and isinstance(origin, str)) or cid in self._served:
            log.warning("ignored a malformed forwarded request")
            return
        served = self._served[cid] = _Served(origin)
        self._nursery.start_soon(self._serve_one, cid, served, head, body)

    async def _on_leave(self, payload: bytes) -> None:
        await trio.lowlevel.checkpoint()
        head, _ = _unframe(payload)
        served = self._served.get(head.get("c"))  # type: ignore[arg-type]
        if served is not None:
            served.left.set()

    async def _serve_one(
        self, cid: str, served: _Served, head: dict[str, Any], body: bytes
    ) -> None:
        """Serve one forwarded request as if it had come here; its answer goes back."""
        read = False

        async def receive() -> MutableMapping[str, Any]:
            nonlocal read
            if not read:
                read = True
                await trio.lowlevel.checkpoint()
                return {"type": "http.request", "body": body, "more_body": False}
            # The client leaving is told; the forwarding worker dying is not: look.
            while not served.left.is_set():
                with trio.move_on_after(LIVENESS_CHECK):
                    await served.left.wait()
                if not served.left.is_set() and not await self._alive(served.origin):
                    served.left.set()
            await trio.lowlevel.checkpoint()
            return {"type": "http.disconnect"}

        held: dict[str, Any] | None = None  # a whole response's start, sent with its body
        ended = False

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal held, ended
            if served.left.is_set():
                raise trio.BrokenResourceError("the client left")
            if message["type"] == "http.response.start":
                headers = [
                    [k.decode("latin-1"), v.decode("latin-1")] for k, v in message["headers"]
                ]
                start = {"c": cid, "t": "start", "s": message["status"], "h": headers}
                if not _is_stream(message["headers"]):
                    held = start  # its body follows at once: one message for both
                    await trio.lowlevel.checkpoint()
                    return
                out = _frame(start)
            else:
                more = message.get("more_body", False)
                body = {"c": cid, "t": "body", "more": more}
                if held is not None:
                    body, held = {**held, "t": "whole", "more": more}, None
                out = _frame(body, message.get("body", b""))
                ended = not more
            with trio.fail_after(REDIS_TIMEOUT):
                delivered = await self.inbox.send(served.origin, SEND, out)
            if not delivered:
                served.left.set()
                raise trio.BrokenResourceError("the worker that forwarded the request is gone")

        try:
            if len(self._served) > self.max_served:
                await HttpRequest(_scope(head, None), receive, send).respond_error(
                    503,
                    ErrorCode.INTERNAL_ERROR,
                    "Service Unavailable: too many forwarded requests",
                    headers=[(b"retry-after", b"1")],
                )
                return
            await self._serve(HttpRequest(_scope(head, head.get("u")), receive, send))
        except Exception as exc:  # noqa: BLE001 - one exchange; the others go on
            log.warning("a forwarded request from %s failed: %r", served.origin, exc)
        finally:
            del self._served[cid]
            if not ended and not served.left.is_set():
                # It ended without its last message (failed, or cancelled at shutdown): say
                # so, or the forwarding worker would wait for it as long as this one lives.
                with trio.move_on_after(REDIS_TIMEOUT, shield=True):
                    try:
                        await self.inbox.send(served.origin, SEND, _frame({"c": cid, "t": "abort"}))
                    except Exception as exc:  # noqa: BLE001 - it finds out when this worker is gone
                        log.debug("could not tell %s a response broke off: %r", served.origin, exc)


def _is_stream(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a response with ``headers`` is an event stream (its start goes to the client
    at once; any other response's start waits for its body, to travel in one message)."""
    return any(
        name.lower() == b"content-type" and value.startswith(b"text/event-stream")
        for name, value in headers
    )


def _scope(head: dict[str, Any], principal: str | None) -> Scope:
    client = head.get("a")
    return {
        "type": "http",
        "method": head["m"],
        "path": head["p"],
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in head["h"]],
        "client": tuple(client) if client else None,
        FORWARDED_PRINCIPAL: principal,
    }
