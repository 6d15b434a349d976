"""Client-side cost per call: trio_mcp's Client against the official SDK's ClientSession,
both calling the same minimal hand-written stdio server (benchmarks/servers/floor_echo.py).

Each client runs in its own process (run by this script, interleaved, several rounds);
its CPU time per sequential ``tools/call`` is measured with ``getrusage`` of that process
alone, so the server's work is not counted. Medians and the ratio are printed.

    python benchmarks/client_cost.py [--rounds 3] [--n 2000] [--handback-delay SECONDS]

``--handback-delay`` is trio_mcp's ``Session(handback_delay=...)``, passed to the client:
0 (the default) has the receive loop read every answer; ``0.01``
(``trio_mcp.session.HANDBACK_DELAY``) turns the handover on, where a sequential caller
reads its own answers (see "Who reads" in ``trio_mcp/_session/_reader.py``). Run it
both ways to see what the handover saves.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE / "servers" / "floor_echo.py")]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run_trio_mcp(n: int, protocol_version: str, handback_delay: float) -> dict[str, float]:
    from trio_mcp import open_stdio_client

    async with open_stdio_client(
        SERVER, protocol_version=protocol_version, grace=1, handback_delay=handback_delay
    ) as client:
        for _ in range(200):  # warm up: the tool list, hooks, caches
            await client.call_tool("echo", {"text": "hello"})
        cpu, wall = cpu_seconds(), time.perf_counter()
        for _ in range(n):
            result = await client.call_tool("echo", {"text": "hello"})
        cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
        assert result.content[0].text == "hello"  # type: ignore[union-attr]
    return {"client_cpu_us": cpu / n * 1e6, "calls_per_s": n / wall}


async def run_sdk(n: int, protocol_version: str) -> dict[str, float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    with open("/dev/null", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for _ in range(200):
                await session.call_tool("echo", {"text": "hello"})
            cpu, wall = cpu_seconds(), time.perf_counter()
            for _ in range(n):
                result = await session.call_tool("echo", {"text": "hello"})
            cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
            assert result.content[0].text == "hello"
    return {"client_cpu_us": cpu / n * 1e6, "calls_per_s": n / wall}


def child(impl: str, n: int, protocol_version: str, handback_delay: float) -> None:
    if impl == "trio_mcp":
        import trio

        report = trio.run(run_trio_mcp, n, protocol_version, handback_delay)
    else:
        import anyio

        report = anyio.run(run_sdk, n, protocol_version)
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--protocol-version", default="2025-11-25")
    parser.add_argument("--handback-delay", type=float, default=0.0)
    parser.add_argument("--child", choices=["trio_mcp", "sdk"], help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.n, args.protocol_version, args.handback_delay)
        return
    results: dict[str, list[dict[str, Any]]] = {"trio_mcp": [], "sdk": []}
    for _ in range(args.rounds):
        for impl in results:
            run = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    impl,
                    "--n",
                    str(args.n),
                    "--protocol-version",
                    args.protocol_version,
                    "--handback-delay",
                    str(args.handback_delay),
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if run.returncode != 0:
                raise RuntimeError(f"{impl}: {run.stderr}")
            results[impl].append(json.loads(run.stdout))
    medians = {
        impl: {key: round(statistics.median(r[key] for r in runs), 1) for key in runs[0]}
        for impl, runs in results.items()
    }
    ratio = round(medians["trio_mcp"]["client_cpu_us"] / medians["sdk"]["client_cpu_us"], 3)
    if args.json:
        print(json.dumps({"medians": medians, "cpu_ratio": ratio, "runs": results}))
        return
    print(
        f"client CPU per sequential call, median of {args.rounds} rounds x {args.n} calls"
        f" (trio_mcp handback_delay={args.handback_delay:g})"
    )
    for impl, row in medians.items():
        print(
            f"  {impl:10} {row['client_cpu_us']:8.1f} us/call   {row['calls_per_s']:8.1f} calls/s"
        )
    print(f"  trio_mcp / sdk = {ratio}")


if __name__ == "__main__":
    main()
