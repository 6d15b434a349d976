"""A fleet on Redis against one process: calls/s, p50/p99 and server CPU per call for the
echo server alone, as one worker of a fleet, and as 2 and 4 workers sharing one port
(``serve(workers=N, state=...)``), and the Redis commands each call costs (from Redis's own
``INFO commandstats``), on this machine, in one run.

Only the 2026-07-28 era: the initialize era's sessions do not cross workers yet. Needs
``redis-server``; starts it on a free port of 127.0.0.1.

    python benchmarks/fleet_bench.py [--calls 2000] [--rounds 3]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_bench import cell, free_port, phase, wait_listening

ROOT = Path(__file__).resolve().parent.parent
ECHO = [sys.executable, str(ROOT / "examples" / "echo_server.py"), "--http", "{port}"]

#: name -> extra arguments of the echo server ({redis}: the Redis URL)
CONFIGS: dict[str, list[str]] = {
    "1 process": [],
    "1 worker + Redis": ["--redis", "{redis}"],
    "2 workers + Redis": ["--workers", "2", "--redis", "{redis}"],
    "4 workers + Redis": ["--workers", "4", "--redis", "{redis}"],
}


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


def run_config(
    name: str, redis_url: str, redis_port: int, args: argparse.Namespace
) -> dict[str, Any]:
    port = free_port()
    command = [part.replace("{port}", str(port)) for part in ECHO]
    command += [part.replace("{redis}", redis_url) for part in CONFIGS[name]]
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,
    )
    try:
        wait_listening(port, process)
        time.sleep(0.5)  # workers and lifespans settle
        phase(process.pid, port, "modern", 1, args.warmup)
        result: dict[str, Any] = {}
        for connections in (1, 8, 32):
            before = redis_commands(redis_port)
            result[f"c{connections}"] = phase(process.pid, port, "modern", connections, args.calls)
            done = args.calls - result[f"c{connections}"]["errors"]
            result[f"c{connections}"]["redis_per_call"] = (
                redis_commands(redis_port) - before
            ) / max(1, done)
        return result
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000, help="calls per phase")
    parser.add_argument("--warmup", type=int, default=200)
    args = parser.parse_args()
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
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name in CONFIGS}
        for _ in range(args.rounds):
            for name in CONFIGS:
                rows[name].append(run_config(name, url, redis_port, args))
        print(f"{os.cpu_count()} cores; {args.calls} calls a phase, {args.rounds} rounds (median)")
        print(f"{'':<20}" + "".join(f"{f'{c} conn':>32}" for c in (1, 8, 32)))
        print(f"{'':<20}" + "".join(f"{'calls/s  p50/p99 ms  Redis/call':>32}" for _ in range(3)))
        for name, results in rows.items():
            line = f"{name:<20}"
            for c in ("c1", "c8", "c32"):
                rate = cell([r[c]["calls_per_s"] for r in results])
                p50 = cell([r[c]["p50_ms"] for r in results], "{:.2f}").split()[0]
                p99 = cell([r[c]["p99_ms"] for r in results], "{:.2f}").split()[0]
                per = cell([r[c]["redis_per_call"] for r in results], "{:.2f}").split()[0]
                line += f"{rate.split()[0]:>13} {p50:>6}/{p99:<6} {per:>5}"
            print(line)
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
