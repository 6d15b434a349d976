"""trio_mcp's stdio echo server against the official SDK's low-level server and the Trio
floor, measured by the same neutral load generator (benchmarks/stdio_load.py) in one run.

Rounds are interleaved (every server once per round) and medians reported, because the
machine is shared and noisy. Ratios are against the SDK and against the floor.

    python benchmarks/stdio_bench.py [--rounds 3] [--depths 1,16,256] [--n 3000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SERVERS = {
    "trio_mcp": [sys.executable, str(ROOT / "examples" / "echo_server.py")],
    "sdk_lowlevel": [sys.executable, str(HERE / "servers" / "sdk_lowlevel_echo.py")],
    "floor": [sys.executable, str(HERE / "servers" / "floor_echo.py")],
}


def measure(label: str, command: list[str], depths: str, n: int) -> dict[str, Any]:
    run = subprocess.run(
        [
            sys.executable,
            str(HERE / "stdio_load.py"),
            "--label",
            label,
            "--depths",
            depths,
            "--n",
            str(n),
            "--",
            *command,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode != 0:
        raise RuntimeError(f"{label}: {run.stderr}")
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--depths", default="1,16,256")
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in SERVERS}
    for _ in range(args.rounds):
        for name, command in SERVERS.items():
            results[name].append(measure(name, command, args.depths, args.n))

    def median(name: str, key: str, depth: int | None = None) -> float:
        values = []
        for run in results[name]:
            if depth is None:
                values.append(run[key])
            else:
                values.append(next(p[key] for p in run["phases"] if p["depth"] == depth))
        return statistics.median(values)

    depths = [int(d) for d in args.depths.split(",")]
    table: dict[str, Any] = {}
    for name in SERVERS:
        table[name] = {
            "startup_ms": median(name, "startup_ms"),
            "rss_mb": median(name, "rss_mb"),
            **{f"d{d}_calls_per_s": median(name, "calls_per_s", d) for d in depths},
            **{f"d{d}_p50_ms": median(name, "p50_ms", d) for d in depths},
            **{f"d{d}_p99_ms": median(name, "p99_ms", d) for d in depths},
            **{f"d{d}_server_cpu_us": median(name, "server_cpu_us", d) for d in depths},
        }
    ours, sdk, floor = table["trio_mcp"], table["sdk_lowlevel"], table["floor"]
    ratios = {
        **{
            f"d{d}_rate_vs_sdk": round(ours[f"d{d}_calls_per_s"] / sdk[f"d{d}_calls_per_s"], 2)
            for d in depths
        },
        **{
            f"d{d}_rate_vs_floor": round(ours[f"d{d}_calls_per_s"] / floor[f"d{d}_calls_per_s"], 2)
            for d in depths
        },
        "startup_vs_sdk": round(ours["startup_ms"] / sdk["startup_ms"], 2),
        "rss_vs_sdk": round(ours["rss_mb"] / sdk["rss_mb"], 2),
    }
    if args.json:
        print(json.dumps({"rounds": args.rounds, "medians": table, "ratios": ratios}))
        return
    print(f"medians of {args.rounds} interleaved rounds")
    columns = (
        ["startup_ms", "rss_mb"]
        + [f"d{d}_calls_per_s" for d in depths]
        + ["d1_p50_ms", "d1_p99_ms", "d1_server_cpu_us"]
    )
    print(f"{'':14}" + "".join(f"{c:>18}" for c in columns))
    for name, row in table.items():
        print(f"{name:14}" + "".join(f"{row[c]:>18}" for c in columns))
    print("ratios (trio_mcp / other):")
    for key, value in ratios.items():
        print(f"  {key:24} {value}")


if __name__ == "__main__":
    main()
