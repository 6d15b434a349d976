"""A public conformance check for transports, in the spirit of
``trio.testing.check_two_way_stream``: any :class:`~trio_mcp.transports.MessageStream`
implementation should pass it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any, Literal, TypeAlias

import trio

from .. import _jsonrpc as rpc
from .._transports._stream import MessageStream
from .._types._base import Error

PairMaker: TypeAlias = Callable[
    [], AbstractAsyncContextManager[tuple[MessageStream, MessageStream]]
]

__all__ = ["PairMaker", "check_transport"]


def _samples(tag: str) -> list[rpc.Message]:
    return [
        rpc.Request(1, "tools/call", {"name": "echo", "arguments": {"text": f"{tag} ünïcödé ✓"}}),
        rpc.Request(f"id-{tag}", "ping", None),
        rpc.Notification("notifications/progress", {"progressToken": 1, "progress": 0.5}),
        rpc.Notification("notifications/initialized", None),
        rpc.ResultResponse(1, {"content": [{"type": "text", "text": "line\nbreak"}]}),
        rpc.ErrorResponse(2, Error(code=-32601, message="Method not found", data={"m": tag})),
        rpc.ErrorResponse(None, Error(code=-32700, message="Parse error")),
    ]


async def _expect(stream: MessageStream, expected: rpc.Message) -> None:
    got = await stream.receive()
    if got != expected:
        raise AssertionError(f"sent {expected!r}, received {got!r}")


async def _expect_all(
    stream: MessageStream, expected: Sequence[rpc.Message], *, ordered: bool
) -> None:
    """Receive ``len(expected)`` messages: ``expected`` in order, or (``ordered=False``) the
    same messages, each exactly once, in any order."""
    if ordered:
        for message in expected:
            await _expect(stream, message)
        return
    got = [await stream.receive() for _ in expected]
    if sorted(map(repr, got)) != sorted(map(repr, expected)):
        raise AssertionError(f"sent {list(expected)!r}, received {got!r}")


async def check_transport(
    maker: PairMaker,
    clogged_maker: PairMaker | None = None,
    *,
    large_message_bytes: int = 1 << 20,
    wait: float = 10.0,
    send_raw: Callable[[MessageStream, bytes], Awaitable[None]] | None = None,
    profile: Literal["stream", "http", "request-response"] = "stream",
) -> None:
    """Check that the streams ``maker`` yields behave as
    :class:`~trio_mcp.transports.MessageStream` promises.

    Args:
        maker: ``async with maker() as (a, b)`` gives two connected streams;
            the context manager owns whatever runs them (servers, processes).
        clogged_maker: the same, but with no buffering, so a ``send`` blocks
            until the peer receives (checks backpressure and cancelled sends).
        large_message_bytes: the size of the large message to pass intact.
        wait: a bound, in seconds, on each check, so a broken transport fails
            instead of hanging.
        send_raw: how to put raw bytes on ``a``'s wire, to check that invalid
            input arrives as :class:`~trio_mcp.jsonrpc.InvalidMessage` and the
            stream goes on (skipped if ``None``).
        profile: ``"stream"`` (the default) for a transport that is one ordered
            pipe each way (stdio, WebSocket, HTTP+SSE): messages arrive in the
            order they were sent. ``"http"`` for Streamable HTTP, where each
            message travels on an HTTP request of its own (and the server's on
            several streams), so separate sends have no order between them:
            a batch of sends must arrive intact, each message exactly once, in
            any order. One task's sends that each wait until the peer took the
            message (notifications, every send under backpressure) still
            arrive in order, and every other check is the same.
            ``"request-response"`` for a transport on which ``a`` only sends
            requests and ``b`` only answers them (Streamable HTTP of
            2026-07-28, where each request is an exchange of its own and the
            server sends nothing unsolicited): see below.

    The ``"request-response"`` profile checks that

    * each request arrives whole at ``b``, and ``a`` receives exactly its
      answer (a result, or an error with data), after the notifications
      ``b`` sent ``related`` to it, in order; nothing arrives twice;
    * 160 requests from 8 tasks at once, answered out of order, each get
      their own answer, once;
    * a large request and a large answer pass intact;
    * a cancelled ``receive`` (on either side) loses nothing;
    * ``aclose`` is idempotent, makes that side's ``send`` and ``receive``
      raise :exc:`trio.ClosedResourceError`, and wakes a task blocked in its
      ``receive`` (on either side);
    * when ``b`` closes, the answers it sent first still reach ``a``, and a
      request it never answered gets an error answer, or ``a`` sees the end
      of the stream (:exc:`trio.EndOfChannel` or
      :exc:`trio.BrokenResourceError`): never silence;
    * with ``send_raw`` (raw bytes on ``a``'s wire): ``b`` gets a -32700
      :class:`~trio_mcp.jsonrpc.InvalidMessage`, and requests go on;
    * with ``clogged_maker``: a requester that never reads its answers
      cannot send without limit, and a cancelled ``send`` sends a whole
      request or nothing.

    It skips what such a transport does not carry, so passing it says
    nothing about these: notifications and responses sent by ``a`` and
    requests sent by ``b`` (2026-07-28 HTTP has no client notifications,
    cancelling is closing the request, and the server sends no requests);
    anything ``b`` sends that is not related to a request; any order between
    the messages of separate requests; and what ``b`` sees when ``a``
    closes (there is no connection to end: ``a`` abandons its requests in
    flight, which may never reach ``b``). A duplex transport passes it too.

    The checks wait briefly for a few things (a task to block, a flood to
    stall): about a second in all on a real clock, nothing under
    ``autojump_clock``.

    Raises:
        AssertionError: the first contract the transport breaks (a check that
            hangs for ``wait`` seconds breaks one too).
    """
    if profile == "request-response":
        await _check_request_response(
            maker,
            clogged_maker,
            large_message_bytes=large_message_bytes,
            wait=wait,
            send_raw=send_raw,
        )
        return
    ordered = profile == "stream"
    checks: list[Callable[[MessageStream, MessageStream], Awaitable[None]]] = [
        partial(_check_round_trip, ordered=ordered),
        _check_concurrent_senders,
        _check_large_message(large_message_bytes),
        _check_cancelled_receive_loses_nothing,
        _check_close_semantics,
        _check_close_wakes_receiver,
        partial(_check_peer_close_after_messages, ordered=ordered),
    ]
    if send_raw is not None:
        checks.append(_check_invalid_input(send_raw))
    for check in checks:
        await _run(check, maker, wait)
    if clogged_maker is not None:
        for clogged in (_check_backpressure, _check_cancelled_send_is_whole):
            await _run(clogged, clogged_maker, wait)


async def _run(
    check: Callable[[MessageStream, MessageStream], Awaitable[None]], maker: PairMaker, wait: float
) -> None:
    try:
        with trio.fail_after(wait):
            async with maker() as (a, b):
                await check(a, b)
    except BaseExceptionGroup as group:
        # A check's own nursery wraps what failed in it: report the broken promise itself.
        broken: BaseException | None = group.subgroup(AssertionError)
        if broken is None:
            raise
        while isinstance(broken, BaseExceptionGroup):
            broken = broken.exceptions[0]
        raise broken from group
    except trio.TooSlowError:
        # A message that never arrives, an end never reported: the transport hangs.
        function = check.func if isinstance(check, partial) else check
        name = function.__name__.removeprefix("_check_").replace("_", " ")
        raise AssertionError(
            f"check {name!r} did not finish within {wait} s: the transport hangs"
        ) from None


async def _check_round_trip(a: MessageStream, b: MessageStream, *, ordered: bool = True) -> None:
    for sender, receiver, tag in ((a, b, "a"), (b, a, "b")):
        if ordered:
            for message in _samples(tag):
                await sender.send(message, related=1)
                await _expect(receiver, message)
        else:
            for message in _samples(tag):
                await sender.send(message, related=1)
            await _expect_all(receiver, _samples(tag), ordered=False)
    async with trio.open_nursery() as nursery:
        # both directions at once
        async def pump(sender: MessageStream, tag: str) -> None:
            for message in _samples(tag):
                await sender.send(message)

        nursery.start_soon(pump, a, "x")
        nursery.start_soon(pump, b, "y")
        await _expect_all(b, _samples("x"), ordered=ordered)
        await _expect_all(a, _samples("y"), ordered=ordered)


async def _check_concurrent_senders(a: MessageStream, b: MessageStream) -> None:
    tasks, per_task = 8, 20
    expected = sorted(
        repr(rpc.Notification("test/burst", {"task": t, "n": n, "pad": "x" * (100 * t)}))
        for t in range(tasks)
        for n in range(per_task)
    )
    received: list[Any] = []

    async def sender(t: int) -> None:
        for n in range(per_task):
            await a.send(
                rpc.Notification("test/burst", {"task": t, "n": n, "pad": "x" * (100 * t)})
            )

    async with trio.open_nursery() as nursery:
        for t in range(tasks):
            nursery.start_soon(sender, t)
        for _ in range(tasks * per_task):
            received.append(await b.receive())
    if sorted(repr(m) for m in received) != expected:
        raise AssertionError("concurrent sends lost, split or corrupted messages")
    for t in range(tasks):
        order = [m.params["n"] for m in received if m.params["task"] == t]
        if order != sorted(order):
            raise AssertionError(f"one task's sends arrived out of order: {order}")


def _check_large_message(size: int) -> Callable[[MessageStream, MessageStream], Awaitable[None]]:
    async def check(a: MessageStream, b: MessageStream) -> None:
        big = rpc.ResultResponse(7, {"content": [{"type": "text", "text": "é" * (size // 2)}]})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(a.send, big)
            await _expect(b, big)

    check.__name__ = "_check_large_message"
    return check


async def _check_cancelled_receive_loses_nothing(a: MessageStream, b: MessageStream) -> None:
    with trio.move_on_after(0.05):
        await b.receive()
        raise AssertionError("receive returned with nothing sent")
    message = rpc.Notification("after/cancel", {"ok": True})
    await a.send(message)
    await _expect(b, message)


async def _check_close_semantics(a: MessageStream, b: MessageStream) -> None:
    await a.aclose()
    await a.aclose()  # idempotent
    for name, op in (("send", lambda: a.send(rpc.Notification("x", None))), ("receive", a.receive)):
        try:
            await op()
        except trio.ClosedResourceError:
            pass
        except Exception as exc:
            raise AssertionError(
                f"{name} on a closed stream must raise ClosedResourceError, not {exc!r}"
            ) from exc
        else:
            raise AssertionError(f"{name} on a closed stream must raise ClosedResourceError")
    # The peer sees the end: receive ends, and sending never hangs.
    try:
        got = await b.receive()
    except (trio.EndOfChannel, trio.BrokenResourceError):
        pass
    else:
        raise AssertionError(f"after the peer closed, received {got!r}")
    try:
        await b.receive()
    except (trio.EndOfChannel, trio.BrokenResourceError):
        pass
    else:
        raise AssertionError("the end of the stream must be reported again on a later receive")
    with trio.move_on_after(1):
        try:
            for _ in range(10):
                await b.send(rpc.Notification("into/the/void", None))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


async def _check_close_wakes_receiver(a: MessageStream, b: MessageStream) -> None:
    outcome: list[BaseException] = []

    async def blocked_receive() -> None:
        try:
            await a.receive()
        except (trio.ClosedResourceError, trio.EndOfChannel, trio.BrokenResourceError) as exc:
            outcome.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(blocked_receive)
        await trio.sleep(0.05)  # let it block (real transports have I/O tasks of their own)
        await a.aclose()
    if not outcome:
        raise AssertionError("closing a stream must wake a task blocked in receive")


async def _check_peer_close_after_messages(
    a: MessageStream, b: MessageStream, *, ordered: bool = True
) -> None:
    messages = _samples("tail")
    for message in messages:
        await a.send(message)
    await a.aclose()
    await _expect_all(b, messages, ordered=ordered)
    try:
        await b.receive()
    except (trio.EndOfChannel, trio.BrokenResourceError):
        return
    raise AssertionError("messages sent before close must arrive, then the end")


def _check_invalid_input(
    send_raw: Callable[[MessageStream, bytes], Awaitable[None]],
) -> Callable[[MessageStream, MessageStream], Awaitable[None]]:
    async def check(a: MessageStream, b: MessageStream) -> None:
        await send_raw(a, b'{"jsonrpc": "2.0", "id": 1, "method": ')
        got = await b.receive()
        if (
            not isinstance(got, rpc.InvalidMessage)
            or got.reply is None
            or got.reply.error.code != -32700
        ):
            raise AssertionError(
                f"invalid JSON must arrive as a -32700 InvalidMessage, got {got!r}"
            )
        message = rpc.Notification("still/alive", None)
        await a.send(message)
        await _expect(b, message)

    check.__name__ = "_check_invalid_input"
    return check


async def _check_backpressure(a: MessageStream, b: MessageStream) -> None:
    sent = 0

    async def flood() -> None:
        nonlocal sent
        while sent <= 10_000:
            await a.send(rpc.Notification("flood", {"n": sent, "pad": "x" * 4096}))
            sent += 1
        # Not waiting for the clock: under autojump_clock time stands still while this
        # task can run, so a transport that never blocks would hang the check instead.
        raise AssertionError(f"send must block while the peer does not read (sent {sent})")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flood)
        await trio.sleep(0.2)
        stalled_at = sent
        await trio.sleep(0.2)
        if sent != stalled_at or sent > 10_000:
            raise AssertionError(f"send must block while the peer does not read (sent {sent})")
        first = await b.receive()
        if not isinstance(first, rpc.Notification) or first.params != {"n": 0, "pad": "x" * 4096}:
            raise AssertionError(f"first flooded message arrived as {first!r}")
        nursery.cancel_scope.cancel()


async def _check_cancelled_send_is_whole(a: MessageStream, b: MessageStream) -> None:
    with trio.move_on_after(0.1):
        while True:
            await a.send(rpc.Notification("maybe", {"pad": "y" * 65536}))
    after = rpc.Notification("after", {"ok": True})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.send, after)
        while True:
            got = await b.receive()
            if got == after:
                break
            if got != rpc.Notification("maybe", {"pad": "y" * 65536}):
                raise AssertionError(f"a cancelled send left a broken message: {got!r:.200}")


# -- the request-response profile -----------------------------------------------------------

Check: TypeAlias = Callable[[MessageStream, MessageStream], Awaitable[None]]


async def _check_request_response(
    maker: PairMaker,
    clogged_maker: PairMaker | None,
    *,
    large_message_bytes: int,
    wait: float,
    send_raw: Callable[[MessageStream, bytes], Awaitable[None]] | None,
) -> None:
    checks: list[Check] = [
        _rr_round_trip,
        _rr_concurrent_requests,
        _rr_large_messages(large_message_bytes),
        _rr_cancelled_receive_loses_nothing,
        _rr_own_close,
        _swapped(_rr_own_close),
        _check_close_wakes_receiver,
        _swapped(_check_close_wakes_receiver),
        _rr_responder_close,
    ]
    if send_raw is not None:
        checks.append(_rr_invalid_input(send_raw))
    runs = [(maker, check) for check in checks]
    if clogged_maker is not None:
        runs += [(clogged_maker, _rr_backpressure), (clogged_maker, _rr_cancelled_send_is_whole)]
    for make, check in runs:
        try:
            with trio.fail_after(wait):
                async with make() as (a, b):
                    await check(a, b)
        except BaseExceptionGroup as group:
            # The checks' nurseries (and the maker's) wrap what failed: raise the
            # AssertionError itself, as documented.
            failures = group.subgroup(AssertionError)
            if failures is None:
                raise
            first: BaseException = failures
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from group


def _swapped(check: Check) -> Check:
    async def swapped(a: MessageStream, b: MessageStream) -> None:
        await check(b, a)

    swapped.__name__ = f"{check.__name__}_other_side"
    return swapped


def _requests(tag: str) -> list[rpc.Request]:
    return [
        rpc.Request(
            f"{tag}-1", "tools/call", {"name": "echo", "arguments": {"text": f"{tag} ünï\nline"}}
        ),
        rpc.Request(2, "ping", None),
        rpc.Request(f"{tag}-3", "resources/read", {"uri": "test://x", "_meta": {"k": [1, None]}}),
    ]


def _answer(request: rpc.Request, *, error: bool = False) -> rpc.Message:
    """An answer that says which request it answers."""
    if error:
        data = {"method": request.method, "params": request.params}
        return rpc.ErrorResponse(request.id, Error(code=-32602, message="nope", data=data))
    return rpc.ResultResponse(request.id, {"method": request.method, "echo": request.params})


async def _expect_nothing(stream: MessageStream, after: str) -> None:
    with trio.move_on_after(0.05):
        got = await stream.receive()
        raise AssertionError(f"{after}, one more message arrived: {got!r}")


async def _answer_requests(
    b: MessageStream, count: int, *, group: int = 1, seen: set[Any] | None = None
) -> None:
    """Receive ``count`` requests on ``b`` and answer each, ``group`` at a time in the
    reverse order of their arrival."""
    pending: list[rpc.Request] = []
    for _ in range(count):
        request = await b.receive()
        if type(request) is not rpc.Request:
            raise AssertionError(f"expected a request, received {request!r}")
        if seen is not None:
            if request.id in seen:
                raise AssertionError(f"request {request.id!r} arrived twice")
            seen.add(request.id)
        pending.append(request)
        if len(pending) == group:
            for waiting in reversed(pending):
                await b.send(_answer(waiting), related=waiting.id)
            pending.clear()
    for waiting in reversed(pending):
        await b.send(_answer(waiting), related=waiting.id)


async def _rr_round_trip(a: MessageStream, b: MessageStream) -> None:
    for index, request in enumerate(_requests("rt")):
        await a.send(request)
        await _expect(b, request)
        progress = [
            rpc.Notification("notifications/progress", {"progressToken": index, "progress": p})
            for p in (0.25, 0.5)
        ]
        answer = _answer(request, error=index == 1)

        async def respond(request: rpc.Request, messages: list[rpc.Message]) -> None:
            for message in messages:
                await b.send(message, related=request.id)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(respond, request, [*progress, answer])
            for message in [*progress, answer]:
                await _expect(a, message)
    await _expect_nothing(a, "after every answer")


async def _rr_concurrent_requests(a: MessageStream, b: MessageStream) -> None:
    tasks, per_task = 8, 20
    requests = {
        f"c{t}-{n}": rpc.Request(f"c{t}-{n}", "test/burst", {"n": n, "pad": "x" * (100 * t)})
        for t in range(tasks)
        for n in range(per_task)
    }
    answered: set[Any] = set()

    async def requester(t: int) -> None:
        for n in range(per_task):
            await a.send(requests[f"c{t}-{n}"])

    async with trio.open_nursery() as nursery:
        for t in range(tasks):
            nursery.start_soon(requester, t)
        nursery.start_soon(partial(_answer_requests, b, len(requests), group=tasks, seen=set()))
        for _ in range(len(requests)):
            got = await a.receive()
            request = requests.get(getattr(got, "id", None))  # type: ignore[arg-type]
            if request is None or got != _answer(request):
                raise AssertionError(f"an answer no request asked for: {got!r:.200}")
            if request.id in answered:
                raise AssertionError(f"request {request.id!r} was answered twice")
            answered.add(request.id)
    await _expect_nothing(a, "after every answer")


def _rr_large_messages(size: int) -> Check:
    async def check(a: MessageStream, b: MessageStream) -> None:
        big = rpc.Request("big", "tools/call", {"name": "x", "arguments": {"t": "é" * (size // 2)}})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(a.send, big)
            await _expect(b, big)
            nursery.start_soon(partial(b.send, _answer(big), related=big.id))
            await _expect(a, _answer(big))

    check.__name__ = "_rr_large_messages"
    return check


async def _rr_cancelled_receive_loses_nothing(a: MessageStream, b: MessageStream) -> None:
    for side in (a, b):
        with trio.move_on_after(0.05):
            await side.receive()
            raise AssertionError("receive returned with nothing sent")
    request = rpc.Request("after-cancel", "ping", None)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.send, request)
        nursery.start_soon(_answer_requests, b, 1)
        await _expect(a, _answer(request))


async def _rr_own_close(a: MessageStream, b: MessageStream) -> None:
    await a.aclose()
    await a.aclose()  # idempotent
    message = rpc.Request("closed", "ping", None)
    for op in (lambda: a.send(message), a.receive):
        try:
            await op()
        except trio.ClosedResourceError:
            pass
        else:
            raise AssertionError("a closed stream must raise ClosedResourceError")


async def _rr_responder_close(a: MessageStream, b: MessageStream) -> None:
    first, second = rpc.Request("answered", "ping", None), rpc.Request("orphan", "ping", None)
    await a.send(first)
    await a.send(second)
    got = {repr(await b.receive()), repr(await b.receive())}
    if got != {repr(first), repr(second)}:
        raise AssertionError(f"sent {first!r} and {second!r}, received {got!r}")
    await b.send(_answer(first), related=first.id)
    await b.aclose()
    answered = orphan_told = False
    while not (answered and orphan_told):
        try:
            message = await a.receive()
        except (trio.EndOfChannel, trio.BrokenResourceError):
            if not answered:
                raise AssertionError("an answer sent before close was lost") from None
            return
        if message == _answer(first):
            answered = True
        elif type(message) is rpc.ErrorResponse and message.id == second.id:
            orphan_told = True
        else:
            raise AssertionError(f"after the responder closed, received {message!r}")


def _rr_invalid_input(send_raw: Callable[[MessageStream, bytes], Awaitable[None]]) -> Check:
    async def check(a: MessageStream, b: MessageStream) -> None:
        await send_raw(a, b'{"jsonrpc": "2.0", "id": 1, "method": ')
        got = await b.receive()
        if (
            not isinstance(got, rpc.InvalidMessage)
            or got.reply is None
            or got.reply.error.code != -32700
        ):
            raise AssertionError(
                f"invalid JSON must arrive as a -32700 InvalidMessage, got {got!r}"
            )
        request = rpc.Request("still-alive", "ping", None)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(a.send, request)
            nursery.start_soon(_answer_requests, b, 1)
            await _expect(a, _answer(request))

    check.__name__ = "_rr_invalid_input"
    return check


async def _rr_backpressure(a: MessageStream, b: MessageStream) -> None:
    sent = 0

    async def flood() -> None:
        nonlocal sent
        while True:
            await a.send(rpc.Request(f"f{sent}", "flood", {"n": sent, "pad": "x" * 4096}))
            sent += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flood)
        nursery.start_soon(_answer_requests, b, 1 << 30)
        await trio.sleep(0.2)
        stalled_at = sent
        await trio.sleep(0.2)
        if sent != stalled_at or sent > 10_000:
            raise AssertionError(
                f"send must block while answers are not read (sent {sent} requests)"
            )
        first = await a.receive()
        n = int(str(getattr(first, "id", "f-1"))[1:])
        expected = rpc.Request(f"f{n}", "flood", {"n": n, "pad": "x" * 4096})
        if not 0 <= n < sent or first != _answer(expected):
            raise AssertionError(f"a flooded request's answer arrived as {first!r:.200}")
        nursery.cancel_scope.cancel()


async def _rr_cancelled_send_is_whole(a: MessageStream, b: MessageStream) -> None:
    pad = {"pad": "y" * 65536}
    sent = 0
    with trio.move_on_after(0.1):
        while True:
            await a.send(rpc.Request(f"maybe-{sent}", "maybe", pad))
            sent += 1
    after = rpc.Request("after", "after", {"ok": True})
    async with trio.open_nursery() as nursery:

        async def respond() -> None:
            while True:
                request = await b.receive()
                if not isinstance(request, rpc.Request) or (
                    request != after and (request.method != "maybe" or request.params != pad)
                ):
                    raise AssertionError(
                        f"a cancelled send left a broken request: {request!r:.200}"
                    )
                await b.send(_answer(request), related=request.id)

        nursery.start_soon(respond)
        nursery.start_soon(a.send, after)
        while True:
            got = await a.receive()
            if got == _answer(after):
                break
            n = str(getattr(got, "id", ""))
            if not n.startswith("maybe-") or got != _answer(rpc.Request(n, "maybe", pad)):
                raise AssertionError(f"a broken answer arrived: {got!r:.200}")
        nursery.cancel_scope.cancel()
