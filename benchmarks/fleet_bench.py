"""A fleet on Redis against one process: calls/s, p50/p99 and server CPU per call for the
echo server alone, as one worker of a fleet, and as 2 and 4 workers sharing one port
(``serve(workers=N, state=...)``), and the Redis commands each call costs (from Redis's own
``INFO commandstats``), on this machine, in one run.

``--era modern`` (the default): 2026-07-28, stateless calls. ``--era legacy``: the
initialize era over Streamable HTTP (2025-11-25): each connection opens a session and calls
on it, so every call reaches the worker holding its session; it also measures, per session
opened, the Redis commands it costs and the bytes it leaves in Redis while idle
(``MEMORY USAGE`` of every key, before and after ``--sessions`` sessions). ``--spread``
(legacy) adds two single-worker processes sharing Redis, each session opened on one and
called on the other: what forwarding a session's requests between workers costs (without
forwarding, those calls get 404 and the row says so). It also runs one HTTP+SSE
(2024-11-05) session, its calls POSTed to the worker holding its stream and then to another
one, which forwards them (``--sse-calls``).

Needs ``redis-server``; starts it on a free port of 127.0.0.1.

    python benchmarks/fleet_bench.py [--calls 2000] [--rounds 3]
    python benchmarks/fleet_bench.py --era legacy [--spread] [--sessions 500]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_bench import Engine, Worker, calls, cell, free_port, opener, phase, wait_listening

ROOT = Path(__file__).resolve().parent.parent
ECHO = [sys.executable, str(ROOT / "examples" / "echo_server.py"), "--http", "{port}"]

#: name -> extra arguments of the echo server ({redis}: the Redis URL)
CONFIGS: dict[str, list[str]] = {
    "1 process": [],
    "1 worker + Redis": ["--redis", "{redis}"],
    "2 workers + Redis": ["--workers", "2", "--redis", "{redis}"],
    "4 workers + Redis": ["--workers", "4", "--redis", "{redis}"],
}
#: Two single-worker processes sharing Redis, each session opened on one, called on the other.
SPREAD = "2 processes, spread"


def redis_call(port: int, *args: str) -> Any:
    """One command to the Redis on ``port``, its decoded reply (RESP2)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        command = b"*%d\r\n" % len(args) + b"".join(
            b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args
        )
        s.sendall(command)
        reader = s.makefile("rb")
        return _reply(reader)


def _reply(reader: Any) -> Any:
    line = reader.readline().rstrip(b"\r\n")
    kind, rest = line[:1], line[1:]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        size = int(rest)
        return None if size < 0 else reader.read(size + 2)[:-2]
    if kind == b"*":
        return [_reply(reader) for _ in range(int(rest))]
    raise RuntimeError(f"unexpected reply {line!r}")


def redis_bytes(port: int) -> int:
    """``MEMORY USAGE`` of every key in the Redis on ``port``, summed."""
    total, cursor = 0, "0"
    while True:
        cursor_bytes, keys = redis_call(port, "SCAN", cursor, "COUNT", "1000")
        for key in keys:
            total += redis_call(port, "MEMORY", "USAGE", key.decode()) or 0
        cursor = cursor_bytes.decode()
        if cursor == "0":
            return total


def redis_commands(port: int) -> int:
    """Commands the Redis on ``port`` has run so far (``INFO commandstats``, less INFO's)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n")
        data = b""
        while b"\r\n" not in data:
            data += s.recv(65536)
        header, _, rest = data.partition(b"\r\n")
        size = int(header[1:])
        while len(rest) < size + 2:
            rest += s.recv(65536)
    total = 0
    for line in rest[:size].decode().splitlines():
        if line.startswith("cmdstat_") and not line.startswith("cmdstat_info:"):
            total += int(line.split("calls=")[1].split(",")[0])
    return total


def start(extra: list[str], redis_url: str) -> tuple[subprocess.Popen[bytes], int]:
    """An echo server with ``extra`` arguments, listening; its process and port."""
    port = free_port()
    command = [part.replace("{port}", str(port)) for part in ECHO]
    command += [part.replace("{redis}", redis_url) for part in extra]
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,
    )
    wait_listening(port, process)
    return process, port


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_config(
    name: str, redis_url: str, redis_port: int, args: argparse.Namespace
) -> dict[str, Any]:
    if name == SPREAD:
        return run_spread(redis_url, redis_port, args)
    process, port = start(CONFIGS[name], redis_url)
    try:
        time.sleep(0.5)  # workers and lifespans settle
        phase(process.pid, port, args.era, 1, args.warmup)
        result: dict[str, Any] = {}
        for connections in (1, 8, 32):
            before = redis_commands(redis_port)
            result[f"c{connections}"] = phase(process.pid, port, args.era, connections, args.calls)
            done = args.calls - result[f"c{connections}"]["errors"]
            result[f"c{connections}"]["redis_per_call"] = (
                redis_commands(redis_port) - before
            ) / max(1, done)
        if args.era == "legacy" and name != "1 process":
            result.update(session_costs(port, redis_port, args.sessions))
        return result
    finally:
        stop(process)


def session_costs(port: int, redis_port: int, sessions: int) -> dict[str, float]:
    """Redis commands per session opened, and bytes in Redis per idle session."""
    commands, size = redis_commands(redis_port), redis_bytes(redis_port)
    opened: list[dict[str, str]] = []
    errors: list[Any] = []
    Engine(port).run([opener([sessions], opened, errors)])
    time.sleep(0.5)
    n = max(1, len(opened))
    return {
        "redis_per_session": (redis_commands(redis_port) - commands) / n,
        "redis_bytes_per_session": (redis_bytes(redis_port) - size) / n,
    }


def spread_caller(
    sessions: list[dict[str, str]], budget: list[int], latencies: list[float], errors: list[Any]
) -> Worker:
    """Calls in sessions opened elsewhere, one at a time, taking a session each."""
    yield from calls("legacy", sessions.pop(), budget, latencies, errors)


def run_spread(redis_url: str, redis_port: int, args: argparse.Namespace) -> dict[str, Any]:
    """Sessions opened on one process, called on another (both sharing Redis)."""
    first, first_port = start(["--redis", "{redis}"], redis_url)
    second, second_port = start(["--redis", "{redis}"], redis_url)
    try:
        time.sleep(0.5)
        result: dict[str, Any] = {}
        for connections in (1, 8, 32):
            sessions: list[dict[str, str]] = []
            Engine(first_port).run([opener([connections], sessions, [])])
            budget, latencies, errors = [args.calls], [], []  # type: ignore[var-annotated]
            before = redis_commands(redis_port)
            started = time.perf_counter()
            Engine(second_port).run(
                [spread_caller(sessions, budget, latencies, errors) for _ in range(connections)]
            )
            elapsed = time.perf_counter() - started
            done = len(latencies)
            latencies.sort()
            result[f"c{connections}"] = {
                "calls_per_s": done / elapsed if done else 0.0,
                "p50_ms": latencies[done // 2] * 1000 if done else float("nan"),
                "p99_ms": latencies[min(done - 1, int(done * 0.99))] * 1000
                if done
                else float("nan"),
                "errors": args.calls - done,
                "first_error": errors[0] if errors else None,
                "redis_per_call": (redis_commands(redis_port) - before) / max(1, done),
            }
        return result
    finally:
        stop(first)
        stop(second)


async def sse_calls(stream_base: str, post_base: str, calls: int) -> dict[str, float]:
    """Sequential calls in one HTTP+SSE (2024-11-05) session whose stream is on
    ``stream_base``, POSTed to ``post_base``: calls/s and p50/p99 from each POST to its
    answer on the stream."""
    import httpx
    import trio

    answered: dict[int, trio.Event] = {}
    latencies: list[float] = []
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("GET", stream_base + "/sse") as stream,
        trio.open_nursery() as nursery,
    ):
        endpoint: list[str] = []
        got_endpoint = trio.Event()

        async def read() -> None:
            event = ""
            async for line in stream.aiter_lines():
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data = line[5:].strip()
                    if event == "endpoint":
                        endpoint.append(data)
                        got_endpoint.set()
                    else:
                        message = orjson.loads(data)
                        if "id" in message and message["id"] in answered:
                            answered[message["id"]].set()
                    event = ""

        nursery.start_soon(read)
        await got_endpoint.wait()
        url = post_base + endpoint[0]

        async def call(rid: int, body: dict[str, Any]) -> None:
            answered[rid] = trio.Event()
            r = await client.post(url, json={"jsonrpc": "2.0", "id": rid, **body})
            if r.status_code != 202:
                raise RuntimeError(f"POST answered {r.status_code}: {r.text[:200]}")
            with trio.fail_after(30):
                await answered[rid].wait()

        init = {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "fleet_bench", "version": "1"},
        }
        await call(0, {"method": "initialize", "params": init})
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await client.post(url, json=note)
        echo = {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
        started = time.perf_counter()
        for rid in range(1, calls + 1):
            t0 = time.perf_counter()
            await call(rid, echo)
            latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - started
        nursery.cancel_scope.cancel()
    latencies.sort()
    return {
        "calls_per_s": calls / elapsed,
        "p50_ms": latencies[calls // 2] * 1000,
        "p99_ms": latencies[min(calls - 1, int(calls * 0.99))] * 1000,
    }


def run_sse(redis_url: str, redis_port: int, args: argparse.Namespace) -> dict[str, Any]:
    """One HTTP+SSE session on a worker: its calls POSTed there, then through another."""
    import trio

    first, first_port = start(["--redis", "{redis}"], redis_url)
    second, second_port = start(["--redis", "{redis}"], redis_url)
    try:
        time.sleep(0.5)
        a, b = f"http://127.0.0.1:{first_port}", f"http://127.0.0.1:{second_port}"
        result: dict[str, Any] = {}
        for name, post_base in (("local", a), ("forwarded", b)):
            before = redis_commands(redis_port)
            result[name] = trio.run(sse_calls, a, post_base, args.sse_calls)
            result[name]["redis_per_call"] = (redis_commands(redis_port) - before) / (
                args.sse_calls + 2
            )
        return result
    finally:
        stop(first)
        stop(second)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000, help="calls per phase")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--era", choices=("modern", "legacy"), default="modern")
    parser.add_argument(
        "--spread", action="store_true", help="legacy: also call sessions on another worker"
    )
    parser.add_argument(
        "--sessions", type=int, default=500, help="legacy: sessions opened to cost them"
    )
    parser.add_argument(
        "--sse-calls",
        type=int,
        default=500,
        help="legacy: sequential calls in an HTTP+SSE session, POSTed to its worker, then "
        "to another (0: none)",
    )
    parser.add_argument(
        "--sse-only", action="store_true", help="legacy: only the HTTP+SSE calls (--sse-calls)"
    )
    args = parser.parse_args()
    if args.sse_only and not (args.era == "legacy" and args.sse_calls):
        parser.error("--sse-only measures HTTP+SSE calls: give --era legacy and --sse-calls N")
    if args.spread and args.era != "legacy":
        parser.error("--spread measures initialize-era sessions: give --era legacy")
    names = [] if args.sse_only else [*CONFIGS, *([SPREAD] if args.spread else [])]
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server is not installed", file=sys.stderr)
        return 1
    redis_port = free_port()
    folder = tempfile.mkdtemp()
    redis = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(redis_port), "--dir", folder, "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_listening(redis_port, redis)  # type: ignore[arg-type]
        url = f"redis://127.0.0.1:{redis_port}/0"
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for _ in range(args.rounds):
            for name in names:
                rows[name].append(run_config(name, url, redis_port, args))
        print(
            f"{os.cpu_count()} cores; era {args.era}; {args.calls} calls a phase, "
            f"{args.rounds} rounds (median)"
        )
        if not args.sse_only:
            print(f"{'':<20}" + "".join(f"{f'{c} conn':>32}" for c in (1, 8, 32)))
            print(
                f"{'':<20}" + "".join(f"{'calls/s  p50/p99 ms  Redis/call':>32}" for _ in range(3))
            )
        for name, results in rows.items():
            line = f"{name:<20}"
            for c in ("c1", "c8", "c32"):
                rate = cell([r[c]["calls_per_s"] for r in results])
                p50 = cell([r[c]["p50_ms"] for r in results], "{:.2f}").split()[0]
                p99 = cell([r[c]["p99_ms"] for r in results], "{:.2f}").split()[0]
                per = cell([r[c]["redis_per_call"] for r in results], "{:.2f}").split()[0]
                line += f"{rate.split()[0]:>13} {p50:>6}/{p99:<6} {per:>5}"
            print(line)
            first_error = results[-1]["c1"].get("first_error")
            if first_error is not None:
                print(f"{'':<20}errors, e.g. {first_error}")
            if "redis_per_session" in results[0]:
                per = cell([r["redis_per_session"] for r in results], "{:.1f}").split()[0]
                size = cell([r["redis_bytes_per_session"] for r in results]).split()[0]
                print(f"{'':<20}per session opened: {per} Redis commands, {size} bytes in Redis")
        if args.era == "legacy" and args.sse_calls:
            sse = [run_sse(url, redis_port, args) for _ in range(args.rounds)]
            print(f"HTTP+SSE (2024-11-05), {args.sse_calls} sequential calls in one session:")
            for name in ("local", "forwarded"):
                rate = cell([r[name]["calls_per_s"] for r in sse]).split()[0]
                p50 = cell([r[name]["p50_ms"] for r in sse], "{:.2f}").split()[0]
                p99 = cell([r[name]["p99_ms"] for r in sse], "{:.2f}").split()[0]
                per = cell([r[name]["redis_per_call"] for r in sse], "{:.2f}").split()[0]
                print(
                    f"  POSTs {name:<10} {rate:>6} calls/s  p50/p99 {p50}/{p99} ms  {per} Redis/call"
                )
        if args.sse_only:
            return 0
        base = {c: [r[c]["calls_per_s"] for r in rows["1 process"]] for c in ("c8", "c32")}
        for name in ("2 workers + Redis", "4 workers + Redis"):
            for c in ("c8", "c32"):
                ours = [r[c]["calls_per_s"] for r in rows[name]]
                ratio = sorted(ours)[len(ours) // 2] / sorted(base[c])[len(base[c]) // 2]
                print(f"{name} vs 1 process ({c}): {ratio:.2f}x")
    finally:
        redis.kill()
        redis.wait()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
