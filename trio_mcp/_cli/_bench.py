"""``trio-mcp bench``: a small load test of one tool of any server: calls a second and the
latency percentiles at N calls in flight, over one connection.

    trio-mcp bench echo text=hi --stdio 'python server.py' --concurrency 8 --calls 2000

The run ends after ``--calls`` calls or ``--duration`` seconds, whichever comes first; a
warm-up (``--warmup`` calls, not counted) goes first. A call answered with an error (a
JSON-RPC error, or a result with ``isError``) counts as an error, and its time is not in
the percentiles.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Mapping
from typing import Any

import attrs
import orjson
import trio

from .._client._client import Client
from .._errors import McpError
from ._arguments import parse_pairs, typed_arguments
from ._errors import CliError
from ._target import add_target_options, open_target

__all__ = ["MAX_CALLS", "BenchResult", "add_bench_command", "bench", "run_bench"]

#: The most calls one run makes (each call's latency is kept for the percentiles).
MAX_CALLS = 1_000_000


def add_bench_command(commands: Any) -> None:
    """Register ``bench`` on the ``trio-mcp`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "bench",
        help="load-test one tool: calls/s and p50/p99 at N calls in flight",
        description="Call one tool over and over, N calls in flight on one connection, and "
        "print calls a second and the latency percentiles.",
    )
    parser.add_argument("name", help="the tool to call")
    parser.add_argument("pairs", nargs="*", metavar="KEY=VALUE", help="its arguments")
    parser.add_argument("--concurrency", type=int, default=1, metavar="N", help="in flight (1)")
    parser.add_argument("--calls", type=int, default=1000, metavar="N", help="at most (1000)")
    parser.add_argument(
        "--duration", type=float, default=30.0, metavar="SECONDS", help="at most (30)"
    )
    parser.add_argument("--warmup", type=int, default=20, metavar="N", help="not counted (20)")
    add_target_options(parser)
    parser.set_defaults(timeout=0.0)  # bounded by --calls and --duration


@attrs.frozen(kw_only=True)
class BenchResult:
    """What a run measured."""

    calls: int
    errors: int
    seconds: float
    #: Latencies of the successful calls, in seconds, sorted.
    latencies: tuple[float, ...]

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0

    def percentile(self, fraction: float) -> float:
        """The latency at ``fraction`` (0.5: the median), nearest rank; NaN without any."""
        if not self.latencies:
            return math.nan
        rank = max(0, math.ceil(fraction * len(self.latencies)) - 1)
        return self.latencies[rank]

    def summary(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "calls_per_second": round(self.calls_per_second, 1),
            "p50_ms": round(self.percentile(0.5) * 1000, 3),
            "p99_ms": round(self.percentile(0.99) * 1000, 3),
        }


async def bench(
    client: Client,
    name: str,
    arguments: Mapping[str, Any],
    *,
    concurrency: int,
    calls: int,
    duration: float,
) -> BenchResult:
    """Call ``name`` up to ``calls`` times with ``concurrency`` in flight, for at most
    ``duration`` seconds (the calls in flight then are cancelled and not counted). Blocks
    for the run."""
    latencies: list[float] = []
    errors = 0
    started = 0

    async def worker() -> None:
        nonlocal errors, started
        while started < calls:
            started += 1
            begin = time.perf_counter()
            try:
                result = await client.call_tool(name, arguments)
            except McpError:
                errors += 1
                continue
            if result.is_error:
                errors += 1
            else:
                latencies.append(time.perf_counter() - begin)

    begin = time.perf_counter()
    with trio.move_on_after(duration):
        async with trio.open_nursery() as nursery:
            for _ in range(concurrency):
                nursery.start_soon(worker)
    seconds = time.perf_counter() - begin
    return BenchResult(
        calls=len(latencies) + errors,
        errors=errors,
        seconds=seconds,
        latencies=tuple(sorted(latencies)),
    )


async def run_bench(args: argparse.Namespace) -> int:
    """``trio-mcp bench``: returns 0, or 1 when a call failed."""
    for option in ("concurrency", "calls"):
        if getattr(args, option) < 1:
            raise CliError(f"--{option} must be 1 or more")
    if args.calls > MAX_CALLS or args.warmup > MAX_CALLS:
        raise CliError(f"--calls and --warmup are at most {MAX_CALLS:,}")
    if not args.duration > 0 or args.warmup < 0:
        raise CliError("--duration must be positive and --warmup 0 or more")
    async with open_target(args) as client:
        tools = await client.list_tools() if client.server_capabilities.tools is not None else []
        tool = next((t for t in tools if t.name == args.name), None)
        if tool is None:
            raise CliError(f"the server lists no tool {args.name!r}")
        arguments = typed_arguments(tool, parse_pairs(args.pairs)) if args.pairs else {}
        if args.warmup:
            await bench(
                client,
                args.name,
                arguments,
                concurrency=args.concurrency,
                calls=args.warmup,
                duration=args.duration,
            )
        result = await bench(
            client,
            args.name,
            arguments,
            concurrency=args.concurrency,
            calls=args.calls,
            duration=args.duration,
        )
    summary = result.summary()
    if args.json:
        print(
            orjson.dumps({"tool": args.name, "concurrency": args.concurrency, **summary}).decode()
        )
    else:
        print(
            f"{args.name}: {summary['calls']} calls in {summary['seconds']} s at "
            f"{args.concurrency} in flight: {summary['calls_per_second']} calls/s, "
            f"p50 {summary['p50_ms']} ms, p99 {summary['p99_ms']} ms, "
            f"{summary['errors']} errors"
        )
    return 1 if result.errors else 0
