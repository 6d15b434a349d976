"""Where an HTTP call's time goes: the echo server under cProfile, driven by the load
generator of ``http_bench.py``, its own time added up by package, and exact counts per call
of the scheduler, spawn, cancel-scope and socket functions.

    python benchmarks/http_profile.py                 # 2,000 sequential modern-era calls
    python benchmarks/http_profile.py --era legacy --calls 5000

cProfile slows small functions more than large ones: read the shares as a guide and the
counts as exact. The figures behind docs/discussion/http-performance.md came from this.
"""

from __future__ import annotations

import argparse
import collections
import os
import pstats
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_bench as hb

PACKAGES = (
    ("h11", "h11 (HTTP parsing)"),
    ("hypercorn", "hypercorn (ASGI server)"),
    ("trio_mcp/_http/server/_http11", "trio_mcp httptools front end"),
    ("trio_mcp/_http", "trio_mcp HTTP layer"),
    ("trio_mcp", "trio_mcp MCP work"),
    ("site-packages/trio/", "trio (scheduler, sockets, scopes)"),
    ("outcome", "trio (scheduler, sockets, scopes)"),
    ("contextlib", "contextlib"),
    ("orjson", "json"),
    ("cattrs", "cattrs"),
    ("attr", "attrs"),
)
KERNEL = (
    "<method 'send' of '_socket.socket' objects>",
    "<method 'poll' of 'select.epoll' objects>",
)
STARTUP = ("compile", "marshal.loads", "__build_class__", "BufferedReader")
COUNTED = (
    "spawn_impl",
    "unrolled_run",
    "reschedule",
    "send_all",
    "receive_some",
    "protocol_send",
    "next_event",
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--era", choices=("modern", "legacy"), default="modern")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument(
        "--front-end", choices=("httptools", "hypercorn"), default=None, help="(serve's default)"
    )
    parser.add_argument(
        "--top", type=int, default=0, help="also list the N functions with the most own time"
    )
    args = parser.parse_args()
    if args.front_end:
        hb.use_front_ends([args.front_end])
    out = Path(tempfile.mkdtemp()) / "server.prof"
    port = hb.free_port()
    command, _ = hb.SERVERS["trio_mcp"]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(out),
            *[part.replace("{port}", str(port)) for part in command[1:]],
        ],
        env={**os.environ, "PYTHONPATH": str(hb.ROOT)},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        hb.wait_listening(port, process)
        hb.Engine(port).run([hb.caller(args.era, [args.warmup], [], [])], limit=120)
        hb.Engine(port).run([hb.caller(args.era, [args.calls], [], [])], limit=600)
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=60)
    calls = args.calls + args.warmup
    stats = pstats.Stats(str(out)).stats
    if args.top:
        ranked = sorted(stats.items(), key=lambda item: -item[1][2])[: args.top]
        for (path, line, name), (_, count, own, _cumulative, _) in ranked:
            where = (
                f"{path.split('site-packages/')[-1].split(str(hb.ROOT) + '/')[-1]}:{line} {name}"
            )
            print(f"{own / calls * 1e6:7.2f} µs {count / calls:6.2f}/call  {where}")
    shares: collections.Counter[str] = collections.Counter()
    for (path, line, name), (_, count, own, _cumulative, _) in stats.items():
        if name in COUNTED or (path.endswith("_run.py") and name == "__enter__"):
            print(f"{count / calls:6.2f}/call  {path.split('site-packages/')[-1]}:{line} {name}")
        if name in KERNEL or "importlib" in path or any(part in name for part in STARTUP):
            continue
        label = next((label for tag, label in PACKAGES if tag in path), "other")
        shares["C built-ins" if path == "~" else label] += own
    total = sum(shares.values())
    for label, own in shares.most_common():
        print(f"{own / total * 100:5.1f}%  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
