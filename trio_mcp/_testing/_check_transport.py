"""A public conformance check for transports, in the spirit of
``trio.testing.check_two_way_stream``: any :class:`~trio_mcp.transports.MessageStream`
implementation should pass it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Literal

import trio

from .. import _jsonrpc as rpc
from .._transports._stream import MessageStream
from .._types._base import Error
from ._check_common import (
    PairMaker,
    check_close_wakes_receiver,
    expect,
    expect_all,
    expect_invalid_json,
    run_check,
    wait_until_stalled,
)
from ._check_request_response import check_request_response

__all__ = ["PairMaker", "check_transport"]


def _samples(tag: str) -> list[rpc.Message]:
    # The responses' ids (3, 2) are none of the requests' (1, "id-..."): both sides send
    # these, and a response sharing a request's id could reach that request's sender before
    # the request left it (an HTTP client would take it for the answer).
    return [
        rpc.JsonRpcRequest(
            1, "tools/call", {"name": "echo", "arguments": {"text": f"{tag} ünïcödé ✓"}}
        ),
        rpc.JsonRpcRequest(f"id-{tag}", "ping", None),
        rpc.JsonRpcNotification("notifications/progress", {"progressToken": 1, "progress": 0.5}),
        rpc.JsonRpcNotification("notifications/initialized", None),
        rpc.ResultResponse(3, {"content": [{"type": "text", "text": "line\nbreak"}]}),
        rpc.ErrorResponse(2, Error(code=-32601, message="Method not found", data={"m": tag})),
        rpc.ErrorResponse(None, Error(code=-32700, message="Parse error")),
    ]


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

    To see a task blocked in ``receive``, or a flood stalled in ``send``, the
    checks wait until every task of the run is blocked
    (:func:`trio.testing.wait_all_tasks_blocked`, as trio's own stream checks
    do), never for a fixed time: a stall must last a few hundredths of a second
    of real time (the peer may be another process), and nothing waits on the
    clock, so ``autojump_clock`` runs them as they are.

    Raises:
        AssertionError: the first contract the transport breaks (a check that
            hangs for ``wait`` seconds breaks one too).
    """
    if profile == "request-response":
        await check_request_response(
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
        check_close_wakes_receiver,
        partial(_check_peer_close_after_messages, ordered=ordered),
    ]
    if send_raw is not None:
        checks.append(_check_invalid_input(send_raw))
    for check in checks:
        await run_check(check, maker, wait)
    if clogged_maker is not None:
        for clogged in (_check_backpressure, _check_cancelled_send_is_whole):
            await run_check(clogged, clogged_maker, wait)


async def _check_round_trip(a: MessageStream, b: MessageStream, *, ordered: bool = True) -> None:
    for sender, receiver, tag in ((a, b, "a"), (b, a, "b")):
        if ordered:
            for message in _samples(tag):
                await sender.send(message, related=1)
                await expect(receiver, message)
        else:
            for message in _samples(tag):
                await sender.send(message, related=1)
            await expect_all(receiver, _samples(tag), ordered=False)
    async with trio.open_nursery() as nursery:
        # both directions at once
        async def pump(sender: MessageStream, tag: str) -> None:
            for message in _samples(tag):
                await sender.send(message)

        nursery.start_soon(pump, a, "x")
        nursery.start_soon(pump, b, "y")
        await expect_all(b, _samples("x"), ordered=ordered)
        await expect_all(a, _samples("y"), ordered=ordered)


async def _check_concurrent_senders(a: MessageStream, b: MessageStream) -> None:
    tasks, per_task = 8, 20
    expected = sorted(
        repr(rpc.JsonRpcNotification("test/burst", {"task": t, "n": n, "pad": "x" * (100 * t)}))
        for t in range(tasks)
        for n in range(per_task)
    )
    received: list[Any] = []

    async def sender(t: int) -> None:
        for n in range(per_task):
            await a.send(
                rpc.JsonRpcNotification("test/burst", {"task": t, "n": n, "pad": "x" * (100 * t)})
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
            await expect(b, big)

    check.__name__ = "_check_large_message"
    return check


async def _check_cancelled_receive_loses_nothing(a: MessageStream, b: MessageStream) -> None:
    with trio.move_on_after(0.05):
        await b.receive()
        raise AssertionError("receive returned with nothing sent")
    message = rpc.JsonRpcNotification("after/cancel", {"ok": True})
    await a.send(message)
    await expect(b, message)


async def _check_close_semantics(a: MessageStream, b: MessageStream) -> None:
    await a.aclose()
    await a.aclose()  # idempotent
    for name, op in (
        ("send", lambda: a.send(rpc.JsonRpcNotification("x", None))),
        ("receive", a.receive),
    ):
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
                await b.send(rpc.JsonRpcNotification("into/the/void", None))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


async def _check_peer_close_after_messages(
    a: MessageStream, b: MessageStream, *, ordered: bool = True
) -> None:
    messages = _samples("tail")
    for message in messages:
        await a.send(message)
    await a.aclose()
    await expect_all(b, messages, ordered=ordered)
    try:
        await b.receive()
    except (trio.EndOfChannel, trio.BrokenResourceError):
        return
    raise AssertionError("messages sent before close must arrive, then the end")


def _check_invalid_input(
    send_raw: Callable[[MessageStream, bytes], Awaitable[None]],
) -> Callable[[MessageStream, MessageStream], Awaitable[None]]:
    async def check(a: MessageStream, b: MessageStream) -> None:
        await expect_invalid_json(send_raw, a, b)
        message = rpc.JsonRpcNotification("still/alive", None)
        await a.send(message)
        await expect(b, message)

    check.__name__ = "_check_invalid_input"
    return check


async def _check_backpressure(a: MessageStream, b: MessageStream) -> None:
    sent = 0

    async def flood() -> None:
        nonlocal sent
        while sent <= 10_000:
            await a.send(rpc.JsonRpcNotification("flood", {"n": sent, "pad": "x" * 4096}))
            sent += 1
        # Not waiting for the clock: under autojump_clock time stands still while this
        # task can run, so a transport that never blocks would hang the check instead.
        raise AssertionError(f"send must block while the peer does not read (sent {sent})")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flood)
        await wait_until_stalled(lambda: sent)
        first = await b.receive()
        if not isinstance(first, rpc.JsonRpcNotification) or first.params != {
            "n": 0,
            "pad": "x" * 4096,
        }:
            raise AssertionError(f"first flooded message arrived as {first!r}")
        nursery.cancel_scope.cancel()


async def _check_cancelled_send_is_whole(a: MessageStream, b: MessageStream) -> None:
    with trio.move_on_after(0.1):
        while True:
            await a.send(rpc.JsonRpcNotification("maybe", {"pad": "y" * 65536}))
    after = rpc.JsonRpcNotification("after", {"ok": True})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.send, after)
        while True:
            got = await b.receive()
            if got == after:
                break
            if got != rpc.JsonRpcNotification("maybe", {"pad": "y" * 65536}):
                raise AssertionError(f"a cancelled send left a broken message: {got!r:.200}")
