"""What the transport checks share: the pair maker's type, receiving what was sent, running
one check against a fresh pair, and the close check that every profile makes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import TypeAlias

import trio
import trio.testing

from .. import _jsonrpc as rpc
from .._transports._stream import MessageStream

PairMaker: TypeAlias = Callable[
    [], AbstractAsyncContextManager[tuple[MessageStream, MessageStream]]
]
Check: TypeAlias = Callable[[MessageStream, MessageStream], Awaitable[None]]


async def expect(stream: MessageStream, expected: rpc.Message) -> None:
    got = await stream.receive()
    if got != expected:
        raise AssertionError(f"sent {expected!r}, received {got!r}")


async def expect_all(
    stream: MessageStream, expected: Sequence[rpc.Message], *, ordered: bool
) -> None:
    """Receive ``len(expected)`` messages: ``expected`` in order, or (``ordered=False``) the
    same messages, each exactly once, in any order."""
    if ordered:
        for message in expected:
            await expect(stream, message)
        return
    got = [await stream.receive() for _ in expected]
    if sorted(map(repr, got)) != sorted(map(repr, expected)):
        raise AssertionError(f"sent {list(expected)!r}, received {got!r}")


async def run_check(check: Check, maker: PairMaker, wait: float) -> None:
    """Run ``check`` on a fresh pair from ``maker``; a broken promise (or a hang of
    ``wait`` seconds) comes out as a plain :exc:`AssertionError`."""
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


async def check_close_wakes_receiver(a: MessageStream, b: MessageStream) -> None:
    outcome: list[BaseException] = []

    async def blocked_receive() -> None:
        try:
            await a.receive()
        except (trio.ClosedResourceError, trio.EndOfChannel, trio.BrokenResourceError) as exc:
            outcome.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(blocked_receive)
        # Blocked in receive (a real transport's I/O tasks too), as trio's stream checks wait.
        await trio.testing.wait_all_tasks_blocked()
        await a.aclose()
    if not outcome:
        raise AssertionError("closing a stream must wake a task blocked in receive")


#: How long every task must stay blocked, in real seconds, before a flood counts as
#: stalled. Tasks of this run are seen by :func:`trio.testing.wait_all_tasks_blocked`, but
#: the far end of a transport may be another process, or a socket's peer, still draining
#: what was sent: a short real cushion, bounded by the rounds of :func:`wait_until_stalled`.
STALL_CUSHION = 0.02


async def wait_until_stalled(count: Callable[[], int], *, limit: int = 10_000) -> int:
    """Wait until a flooding task stops making progress: ``count()`` unchanged from one
    moment when every task is blocked (:func:`trio.testing.wait_all_tasks_blocked`, as
    trio's own ``check_one_way_stream`` waits) to the next, for at most 25 rounds or until
    it passes ``limit``. Returns the count it stalled at. No clock is read, so it works the
    same under ``autojump_clock``.

    Raises:
        AssertionError: it never stalled.
    """
    stalled_at = -1
    for _ in range(25):
        await trio.testing.wait_all_tasks_blocked(STALL_CUSHION)
        if count() == stalled_at or count() > limit:
            break
        stalled_at = count()
    if count() != stalled_at:
        raise AssertionError(f"send must block while the peer does not read (sent {count()})")
    return stalled_at


async def expect_invalid_json(
    send_raw: Callable[[MessageStream, bytes], Awaitable[None]], a: MessageStream, b: MessageStream
) -> None:
    """Write a truncated JSON text raw on ``a``: ``b`` must receive it as an
    :class:`~trio_mcp.jsonrpc.InvalidMessage` whose reply is a -32700 parse error."""
    await send_raw(a, b'{"jsonrpc": "2.0", "id": 1, "method": ')
    got = await b.receive()
    if (
        not isinstance(got, rpc.InvalidMessage)
        or got.reply is None
        or got.reply.error.code != -32700
    ):
        raise AssertionError(f"invalid JSON must arrive as a -32700 InvalidMessage, got {got!r}")
