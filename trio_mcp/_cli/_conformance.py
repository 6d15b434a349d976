"""``trio-mcp conformance``: the official conformance harness against any server or client,
with one summary, so a Python user checks an implementation without learning npm.

    trio-mcp conformance server http://127.0.0.1:8000/mcp --requirements 2026-07-28
    trio-mcp conformance client --suite all -- python my_client.py

The harness and Node are installed with npm into a cache folder on first use
(``--cache``, default ``$TRIO_MCP_CONFORMANCE_HOME`` or ``~/.cache/trio-mcp-conformance``).
A run passes when the harness exits 0 and no check failed or warned (a warning fails like
a failure, as the SDK tier assessments count it).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import tempfile
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import trio

from ._errors import CliError
from ._harness import HARNESS_VERSION, HarnessUnavailable, default_home, install_harness

__all__ = ["add_conformance_command", "run_conformance"]


def add_conformance_command(commands: Any) -> None:
    """Register ``conformance`` on the ``trio-mcp`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "conformance",
        help="run the official MCP conformance suite against a server or a client",
        description=(
            "Run the official MCP conformance harness (installed with npm on first use) "
            "against a Streamable HTTP server (`server URL`) or a client command (`client -- "
            "CMD ...`: the harness starts a mock server per scenario and runs CMD with its URL "
            "as the last argument). Prints each failing check and one summary line; exits 1 "
            "when a check failed or warned."
        ),
    )
    parser.add_argument("mode", choices=["server", "client"], help="what is tested")
    parser.add_argument("target", nargs="*", help="server: its URL; client: -- CMD ARGS...")
    parser.add_argument(
        "--stdio",
        metavar="'CMD ARGS'",
        help="server: a stdio server instead of a URL, served to the harness over Streamable "
        "HTTP through the bridge (what the bridge does not forward is reported as failing)",
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--requirements",
        metavar="REVISION",
        help="exactly the scenarios that revision requires, at its wire (e.g. 2026-07-28)",
    )
    chosen.add_argument(
        "--suite",
        metavar="NAME",
        help="active (the harness's default), all (with pending and draft), draft, pending",
    )
    chosen.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--spec-version", metavar="REVISION", help="the wire to run at")
    parser.add_argument(
        "--cache", type=Path, default=None, help="where the harness and Node are installed"
    )
    parser.add_argument(
        "--harness-version", default=HARNESS_VERSION, help=f"(default {HARNESS_VERSION})"
    )
    parser.add_argument("-o", "--output", type=Path, help="keep the harness's results here")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the harness's output")
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        help="give up after this many seconds in all (1800; 0: never)",
    )


async def run_conformance(args: argparse.Namespace) -> int:
    """Install the harness if needed, run it, summarise. Blocks for the whole run;
    cancelling it kills the harness (and, through it, the client commands it started)."""
    if args.stdio is not None:
        if args.mode != "server" or args.target:
            raise CliError("--stdio names the server under test: give no URL, mode server")
        return await _through_the_bridge(args)
    return await _run_harness(args, _target(args))


async def _through_the_bridge(args: argparse.Namespace) -> int:
    """The stdio server, served on a free port of 127.0.0.1 through a proxy, for the run."""
    from .._client._stdio import open_stdio_client
    from ..http import serve
    from ._proxy import proxy_server

    async with open_stdio_client(shlex.split(args.stdio)) as client:
        server = await proxy_server(client)
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve, server, port=0))
            status = await _run_harness(args, ["--url", f"http://127.0.0.1:{port}/mcp"])
            nursery.cancel_scope.cancel()
    return status


async def _run_harness(args: argparse.Namespace, target: list[str]) -> int:
    try:
        harness = await trio.to_thread.run_sync(
            install_harness, args.cache or default_home(), args.harness_version
        )
    except HarnessUnavailable as exc:
        raise CliError(f"cannot install the conformance harness: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="trio-mcp-conformance-") as scratch:
        output = args.output or Path(scratch)
        output.mkdir(parents=True, exist_ok=True)
        command = [*harness, args.mode, *target, "-o", str(output)]
        if args.requirements:
            command += ["--requirements", args.requirements]
        if args.suite:
            command += ["--suite", args.suite]
        if args.spec_version:
            command += ["--spec-version", args.spec_version]
        # The harness runs one --scenario at a time: one run for each.
        runs = [[*command, "--scenario", name] for name in args.scenario or []] or [command]
        status, log = 0, ""
        for run in runs:
            done = await trio.run_process(
                run, capture_stdout=True, capture_stderr=True, check=False
            )
            log += (done.stdout + done.stderr).decode(errors="replace")
            status = status or done.returncode
        if args.verbose:
            print(log)
        return _summarise(log, status, output, args.harness_version)


def _target(args: argparse.Namespace) -> list[str]:
    if args.mode == "server":
        if len(args.target) != 1 or not re.match(r"https?://", args.target[0]):
            raise CliError("conformance server takes one http:// or https:// URL")
        return ["--url", args.target[0]]
    if not args.target:
        raise CliError("conformance client takes the client's command: -- CMD ARGS...")
    return ["--command", shlex.join(args.target)]


def _summarise(log: str, status: int, output: Path, version: str) -> int:
    """Print each failing or warning check and one summary line; the exit status."""
    scenarios: set[str] = set()
    counts: Counter[str] = Counter()
    for path in sorted(output.glob("**/checks.json")):
        try:
            checks = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", path.parent.name)
        scenarios.add(scenario)
        for check in checks if isinstance(checks, list) else []:
            state = str(check.get("status"))
            counts[state] += 1
            if state in ("FAILURE", "WARNING"):
                detail = " ".join(str(check.get("errorMessage") or "").split())[:300]
                print(f"{state}  {scenario}  {check.get('id')}: {detail}")
    if not scenarios:
        tail = "\n".join(log.strip().splitlines()[-20:])
        raise CliError(f"the harness ran no scenario (exit status {status}):\n{tail}")
    failed, warned = counts["FAILURE"], counts["WARNING"]
    if status != 0 and not failed and not warned:
        # No check says why (a client that exited with an error, a timeout): the harness does.
        print("\n".join(log.strip().splitlines()[-12:]))
    verdict = "passed" if status == 0 and not failed and not warned else "FAILED"
    print(
        f"conformance {verdict}: {len(scenarios)} scenarios, {counts['SUCCESS']} checks "
        f"passed, {failed} failed, {warned} warnings (harness {version}, "
        f"exit status {status})"
    )
    return 0 if verdict == "passed" else 1
