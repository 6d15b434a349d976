"""A neutral load generator for any stdio MCP server: raw JSON-RPC, no MCP library.

Starts the server command given after ``--``, and measures:

- startup: spawn to the ``initialize`` result (ms);
- for each depth D (D requests kept in flight; D=1 is the sequential round trip):
  calls/s, latency p50/p99 (ms), server CPU µs per call (from /proc);
- the server's resident memory after the load (MB);
- how long it takes to exit after stdin closes (ms).

Prints one JSON line. Every phase is bounded by a request count and a time limit.

    python benchmarks/stdio_load.py --depths 1,16,256 -- python examples/echo_server.py
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import select
import subprocess
import sys
import time
from typing import Any

import orjson

TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def server_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Wire:
    """Newline-delimited JSON over the child's pipes, non-blocking reads."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.fd = process.stdout.fileno()
        fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def receive(self, timeout: float) -> list[Any]:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError("the server closed stdout")
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [orjson.loads(line) for line in lines if line.strip()]


def call(id: int, text: bytes) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}\n'
        % (id, text)
    )


def run_phase(
    wire: Wire, pid: int, first_id: int, depth: int, total: int, limit: float
) -> dict[str, float]:
    text = b"hello"
    sent_at: dict[int, float] = {}
    latencies: list[float] = []
    next_id = first_id
    cpu_before = server_cpu_seconds(pid)
    start = time.perf_counter()
    while len(sent_at) < depth and next_id - first_id < total:
        sent_at[next_id] = time.perf_counter()
        wire.send(call(next_id, text))
        next_id += 1
    while sent_at:
        messages = wire.receive(15.0)
        if not messages and time.perf_counter() - start > limit + 15:
            raise TimeoutError("the server stopped answering")
        burst = []
        for message in messages:
            began = sent_at.pop(message.get("id"), None)
            if began is None:
                continue
            latencies.append(time.perf_counter() - began)
            if message["result"]["content"][0]["text"] != "hello":
                raise ValueError(f"wrong answer {message}")
            if next_id - first_id < total and time.perf_counter() - start < limit:
                sent_at[next_id] = time.perf_counter()
                burst.append(call(next_id, text))
                next_id += 1
        if burst:
            wire.send(b"".join(burst))
    elapsed = time.perf_counter() - start
    calls = len(latencies)
    return {
        "depth": depth,
        "calls": calls,
        "calls_per_s": round(calls / elapsed, 1),
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
        "server_cpu_us": round((server_cpu_seconds(pid) - cpu_before) / calls * 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--label", default="")
    parser.add_argument("--depths", default="1,16,256")
    parser.add_argument("--n", type=int, default=3000, help="requests per phase")
    parser.add_argument("--max-seconds", type=float, default=8.0, help="per phase")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--protocol-version", default="2025-11-25")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    wire = Wire(process)
    wire.send(
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": args.protocol_version,
                    "capabilities": {},
                    "clientInfo": {"name": "stdio-load", "version": "1"},
                },
            }
        )
        + b"\n"
    )
    while not any(m.get("id") == 0 for m in wire.receive(60.0)):
        if time.perf_counter() - started > 60:
            raise TimeoutError("no initialize result")
    startup_ms = (time.perf_counter() - started) * 1000
    wire.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    report: dict[str, Any] = {"label": args.label, "startup_ms": round(startup_ms, 1), "phases": []}
    next_id = 1
    run_phase(wire, process.pid, next_id, 1, args.warmup, args.max_seconds)
    next_id += args.warmup
    for depth in (int(d) for d in args.depths.split(",")):
        report["phases"].append(
            run_phase(wire, process.pid, next_id, depth, args.n, args.max_seconds)
        )
        next_id += args.n
    report["rss_mb"] = round(server_rss_mb(process.pid), 1)
    closing = time.perf_counter()
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(timeout=10)
        report["exit_after_eof_ms"] = round((time.perf_counter() - closing) * 1000, 1)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        report["exit_after_eof_ms"] = None
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
