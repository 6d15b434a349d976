"""What one forwarded exchange costs between two workers of a fleet, hop by hop: a message
sent to another process's inbox and its answer sent back (the two hops a request forwarded
to the worker holding its session makes, without the HTTP around them), through
:class:`trio_mcp._fleet._inbox.Inbox` (coredis on Trio), against the floor of the same two
hops with raw sockets (``XADD`` and a blocking ``XREAD``, no client library), and the round
trip of one command (``PING``, and the inbox's send script alone) from Trio.

Rounds alternate the variants (the machine is shared: read medians, and the load average
printed with them). Needs ``redis-server``; starts it on a free port of 127.0.0.1.

    python benchmarks/inbox_bench.py [--exchanges 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_bench import free_port, wait_listening

WARMUP = 200


def summary(latencies_ms: list[float]) -> tuple[float, float]:
    """p50 and p99 (ms) of what followed the warm-up."""
    kept = sorted(latencies_ms[WARMUP:])
    return statistics.median(kept), kept[int(len(kept) * 0.99)]


# -- through the inbox ------------------------------------------------------------------------


async def inbox_side(url: str, role: str, exchanges: int, tag: str) -> None:
    """``role`` "answer": answer every message until cancelled (at most 60 s); "ask":
    send ``exchanges`` messages, one at a time, and print the p50/p99 of each one's answer
    and of the send alone."""
    import coredis
    import trio

    from trio_mcp._fleet._inbox import Inbox

    async with coredis.Redis.from_url(url) as redis:
        me = Inbox(redis, prefix=f"bench-{tag}:", worker_id=role)
        answered = trio.Event()

        async def answer(payload: bytes) -> None:
            await me.send("ask", "answer", payload)

        async def heard(payload: bytes) -> None:
            await trio.lowlevel.checkpoint()
            answered.set()

        me.on("ask", answer)
        me.on("answer", heard)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(me.run)
            await me.announce()
            if role == "answer":
                await trio.sleep(60)
                nursery.cancel_scope.cancel()
                return
            with trio.fail_after(10):
                while not await me.alive("answer"):
                    await trio.sleep(0.05)
            total, sends = [], []
            for _ in range(exchanges + WARMUP):
                answered = trio.Event()
                start = time.perf_counter()
                await me.send("answer", "ask", b"x" * 200)
                sends.append((time.perf_counter() - start) * 1000)
                with trio.fail_after(10):
                    await answered.wait()
                total.append((time.perf_counter() - start) * 1000)
            print(*summary(total), *summary(sends))
            nursery.cancel_scope.cancel()


# -- raw sockets ------------------------------------------------------------------------------


def command(*parts: bytes) -> bytes:
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def read_id(connection: socket.socket, stream: bytes) -> bytes:
    """The id of the one entry an ``XREAD COUNT 1`` answered (the entries are small)."""
    data = connection.recv(65536)
    start = data.index(b"$", data.index(stream) + len(stream))
    line = data.index(b"\r\n", start)
    return data[line + 2 : data.index(b"\r\n", line + 2)]


def raw_side(port: int, role: str, exchanges: int, tag: str) -> None:
    """The same exchanges with raw sockets: one connection to append, one to wait."""
    mine, theirs = (b"raw-a-", b"raw-b-") if role == "ask" else (b"raw-b-", b"raw-a-")
    mine, theirs = mine + tag.encode(), theirs + tag.encode()
    reading, writing = (socket.create_connection(("127.0.0.1", port)) for _ in range(2))
    for connection in (reading, writing):
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    last, total = b"0-0", []
    for _ in range(exchanges + WARMUP):
        start = time.perf_counter()
        if role == "ask":
            writing.sendall(command(b"XADD", theirs, b"*", b"p", b"x" * 200))
            writing.recv(100)
        reading.sendall(
            command(b"XREAD", b"BLOCK", b"10000", b"COUNT", b"1", b"STREAMS", mine, last)
        )
        last = read_id(reading, mine)
        if role == "answer":
            writing.sendall(command(b"XADD", theirs, b"*", b"p", b"x" * 200))
            writing.recv(100)
        total.append((time.perf_counter() - start) * 1000)
    if role == "ask":
        print(*summary(total))


# -- one command ------------------------------------------------------------------------------


async def one_command(url: str, count: int, tag: str) -> list[float]:
    """p50 of a PING and of the inbox's send script alone, from Trio through coredis."""
    import coredis

    from trio_mcp._fleet._inbox import Inbox

    async with coredis.Redis.from_url(url) as redis:
        me = Inbox(redis, prefix=f"bench-one-{tag}:", worker_id="me")
        await me.announce()
        found = []
        for run in (redis.ping, lambda: me.send("me", "k", b"x" * 200)):
            latencies = []
            for _ in range(count + WARMUP):
                start = time.perf_counter()
                await run()
                latencies.append((time.perf_counter() - start) * 1000)
            found.append(summary(latencies)[0])
        return found


def pair(args: list[str], exchanges: int) -> list[float]:
    """Run the answering side in the background and the asking side; its printed figures."""
    me = [sys.executable, __file__, "--side", *args, "--exchanges", str(exchanges)]
    answering = subprocess.Popen([*me, "--role", "answer"], stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        out = subprocess.run(
            [*me, "--role", "ask"], capture_output=True, text=True, timeout=120, check=True
        ).stdout
    finally:
        answering.terminate()
        answering.wait()
    return [float(x) for x in out.split()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exchanges", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--side", nargs=3, metavar=("KIND", "TARGET", "TAG"), help=argparse.SUPPRESS
    )
    parser.add_argument("--role", choices=("ask", "answer"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    import trio

    if args.side:
        kind, target, tag = args.side
        if kind == "raw":
            raw_side(int(target), args.role, args.exchanges, tag)
        else:
            trio.run(inbox_side, target, args.role, args.exchanges, tag)
        return 0
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server is not installed", file=sys.stderr)
        return 1
    port = free_port()
    redis = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", ""],
        cwd=tempfile.mkdtemp(),
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, redis)  # type: ignore[arg-type]
        url = f"redis://127.0.0.1:{port}/0"
        rows: dict[str, list[list[float]]] = {"inbox": [], "raw": [], "one": []}
        for n in range(args.rounds):
            rows["inbox"].append(pair(["inbox", url, f"i{n}"], args.exchanges))
            rows["raw"].append(pair(["raw", str(port), f"r{n}"], args.exchanges))
            rows["one"].append(trio.run(one_command, url, args.exchanges, f"o{n}"))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{os.cpu_count()} cores, load average {load}; medians of {args.rounds} rounds")

        def med(name: str, i: int) -> str:
            return f"{statistics.median(r[i] for r in rows[name]):.3f}"

        print(
            f"message and answer, through the inbox:  p50 {med('inbox', 0)} ms, p99 {med('inbox', 1)} ms"
        )
        print(f"  of which the send script's round trip: p50 {med('inbox', 2)} ms")
        print(
            f"message and answer, raw sockets:        p50 {med('raw', 0)} ms, p99 {med('raw', 1)} ms"
        )
        print(f"one PING from Trio (coredis):           p50 {med('one', 0)} ms")
        print(f"the send script alone (coredis):        p50 {med('one', 1)} ms")
    finally:
        redis.terminate()
        redis.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
