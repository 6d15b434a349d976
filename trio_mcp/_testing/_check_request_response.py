"""The request-response profile of :func:`~trio_mcp.testing.check_transport`: for
transports where one side only ever answers (stateless Streamable HTTP)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import trio

from .. import _jsonrpc as rpc
from .._transports._stream import MessageStream
from .._types._base import Error
from ._check_common import (
    Check,
    PairMaker,
    check_close_wakes_receiver,
    expect,
    expect_invalid_json,
    run_check,
    wait_until_stalled,
)

__all__ = ["check_request_response"]


async def check_request_response(
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
        check_close_wakes_receiver,
        _swapped(check_close_wakes_receiver),
        _rr_responder_close,
    ]
    if send_raw is not None:
        checks.append(_rr_invalid_input(send_raw))
    runs = [(maker, check) for check in checks]
    if clogged_maker is not None:
        runs += [(clogged_maker, _rr_backpressure), (clogged_maker, _rr_cancelled_send_is_whole)]
    for make, check in runs:
        await run_check(check, make, wait)


def _swapped(check: Check) -> Check:
    async def swapped(a: MessageStream, b: MessageStream) -> None:
        await check(b, a)

    swapped.__name__ = f"{check.__name__}_other_side"
    return swapped


def _requests(tag: str) -> list[rpc.JsonRpcRequest]:
    return [
        rpc.JsonRpcRequest(
            f"{tag}-1", "tools/call", {"name": "echo", "arguments": {"text": f"{tag} ünï\nline"}}
        ),
        rpc.JsonRpcRequest(2, "ping", None),
        rpc.JsonRpcRequest(
            f"{tag}-3", "resources/read", {"uri": "test://x", "_meta": {"k": [1, None]}}
        ),
    ]


def _answer(request: rpc.JsonRpcRequest, *, error: bool = False) -> rpc.Message:
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
    pending: list[rpc.JsonRpcRequest] = []
    for _ in range(count):
        request = await b.receive()
        if type(request) is not rpc.JsonRpcRequest:
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
        await expect(b, request)
        progress = [
            rpc.JsonRpcNotification(
                "notifications/progress", {"progressToken": index, "progress": p}
            )
            for p in (0.25, 0.5)
        ]
        answer = _answer(request, error=index == 1)

        async def respond(request: rpc.JsonRpcRequest, messages: list[rpc.Message]) -> None:
            for message in messages:
                await b.send(message, related=request.id)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(respond, request, [*progress, answer])
            for message in [*progress, answer]:
                await expect(a, message)
    await _expect_nothing(a, "after every answer")


async def _rr_concurrent_requests(a: MessageStream, b: MessageStream) -> None:
    tasks, per_task = 8, 20
    requests = {
        f"c{t}-{n}": rpc.JsonRpcRequest(f"c{t}-{n}", "test/burst", {"n": n, "pad": "x" * (100 * t)})
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
        big = rpc.JsonRpcRequest(
            "big", "tools/call", {"name": "x", "arguments": {"t": "é" * (size // 2)}}
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(a.send, big)
            await expect(b, big)
            nursery.start_soon(partial(b.send, _answer(big), related=big.id))
            await expect(a, _answer(big))

    check.__name__ = "_rr_large_messages"
    return check


async def _rr_cancelled_receive_loses_nothing(a: MessageStream, b: MessageStream) -> None:
    for side in (a, b):
        with trio.move_on_after(0.05):
            await side.receive()
            raise AssertionError("receive returned with nothing sent")
    request = rpc.JsonRpcRequest("after-cancel", "ping", None)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.send, request)
        nursery.start_soon(_answer_requests, b, 1)
        await expect(a, _answer(request))


async def _rr_own_close(a: MessageStream, b: MessageStream) -> None:
    await a.aclose()
    await a.aclose()  # idempotent
    message = rpc.JsonRpcRequest("closed", "ping", None)
    for op in (lambda: a.send(message), a.receive):
        try:
            await op()
        except trio.ClosedResourceError:
            pass
        else:
            raise AssertionError("a closed stream must raise ClosedResourceError")


async def _rr_responder_close(a: MessageStream, b: MessageStream) -> None:
    first, second = (
        rpc.JsonRpcRequest("answered", "ping", None),
        rpc.JsonRpcRequest("orphan", "ping", None),
    )
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
        await expect_invalid_json(send_raw, a, b)
        request = rpc.JsonRpcRequest("still-alive", "ping", None)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(a.send, request)
            nursery.start_soon(_answer_requests, b, 1)
            await expect(a, _answer(request))

    check.__name__ = "_rr_invalid_input"
    return check


async def _rr_backpressure(a: MessageStream, b: MessageStream) -> None:
    sent = 0

    async def flood() -> None:
        nonlocal sent
        while True:
            await a.send(rpc.JsonRpcRequest(f"f{sent}", "flood", {"n": sent, "pad": "x" * 4096}))
            sent += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flood)
        nursery.start_soon(_answer_requests, b, 1 << 30)
        await wait_until_stalled(lambda: sent)
        first = await a.receive()
        n = int(str(getattr(first, "id", "f-1"))[1:])
        expected = rpc.JsonRpcRequest(f"f{n}", "flood", {"n": n, "pad": "x" * 4096})
        if not 0 <= n < sent or first != _answer(expected):
            raise AssertionError(f"a flooded request's answer arrived as {first!r:.200}")
        nursery.cancel_scope.cancel()


async def _rr_cancelled_send_is_whole(a: MessageStream, b: MessageStream) -> None:
    pad = {"pad": "y" * 65536}
    sent = 0
    with trio.move_on_after(0.1):
        while True:
            await a.send(rpc.JsonRpcRequest(f"maybe-{sent}", "maybe", pad))
            sent += 1
    after = rpc.JsonRpcRequest("after", "after", {"ok": True})
    async with trio.open_nursery() as nursery:

        async def respond() -> None:
            while True:
                request = await b.receive()
                if not isinstance(request, rpc.JsonRpcRequest) or (
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
            if not n.startswith("maybe-") or got != _answer(rpc.JsonRpcRequest(n, "maybe", pad)):
                raise AssertionError(f"a broken answer arrived: {got!r:.200}")
        nursery.cancel_scope.cancel()
