"""``trio-mcp fuzz`` and ``trio-mcp replay``: fuzz any MCP server from a shell, and replay
what failed."""

from __future__ import annotations

import argparse
import math
import shlex
import signal
import sys
from functools import partial
from pathlib import Path
from typing import Any, Literal

import orjson
import trio

from .._fuzz._identities import Identity, IdentityError, load_identities, parse_identity_options
from .._fuzz._invariants import CHECK_CLASSES, INVARIANTS, SECURITY_CLASSES, parse_checks
from .._fuzz._replay import replay_reproduction
from .._fuzz._report import FuzzReport
from .._fuzz._runner import DEFAULT_TIME_BUDGET, FuzzSettings, fuzz, write_reproductions
from .._fuzz._sarif import sarif_log
from .._fuzz._settings import (
    DEFAULT_CROSSTALK_CLIENTS,
    DEFAULT_LEAK_MEMORY_BOUND,
    DEFAULT_LEAK_REQUESTS,
    DEFAULT_MAX_BODY,
)
from .._fuzz._steps import iter_sent_lines, load_steps
from .._fuzz._target import HttpTarget, StdioTarget, Target
from .._util import open_nursery_unwrapped
from .._versions import SUPPORTED_VERSIONS
from ._errors import CliError
from ._target import Target as ConnectingTarget, add_server_options, parse_env, parse_headers

__all__ = ["add_fuzz_commands", "run_fuzz", "run_replay"]


def _target_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    add_server_options(
        parser, required=required, url_help="a Streamable HTTP server's MCP endpoint"
    )
    parser.add_argument(
        "--spec-dir",
        metavar="DIR",
        help="official schema-<version>.json files to validate results against "
        "(default: $TRIO_MCP_SPEC_DIR)",
    )


def add_fuzz_commands(commands: Any) -> None:
    """Register ``fuzz`` and ``replay`` on the ``trio-mcp`` parser's subcommands."""
    fuzz = commands.add_parser(
        "fuzz",
        help="attack a server with Hypothesis state machines and check its answers",
        description="Drive an MCP server with Hypothesis state machines (lifecycle, every "
        "tool/resource/prompt it offers, cancellation, malformed input...) and check each "
        "answer against the spec. Exit status 0 only when no requirement failed.",
    )
    _target_options(fuzz, required=False)
    fuzz.add_argument(
        "--protocol-version",
        metavar="V",
        choices=SUPPORTED_VERSIONS,
        help="fuzz this version only (default: every era the server speaks)",
    )
    fuzz.add_argument("--max-examples", type=int, default=100, metavar="N")
    fuzz.add_argument("--max-steps", type=int, default=20, metavar="N", help="rules per example")
    fuzz.add_argument("--seed", type=int, metavar="S", help="repeat a run (default: random)")
    fuzz.add_argument(
        "--deadline",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="every request must be answered within this (default 5)",
    )
    fuzz.add_argument(
        "--time-budget",
        type=float,
        default=DEFAULT_TIME_BUDGET,
        metavar="SECONDS",
        help=f"end the run after this long, with the examples reached so far (default "
        f"{DEFAULT_TIME_BUDGET:g}; 0: no limit)",
    )
    fuzz.add_argument(
        "--shrink-budget",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="after the first failure, seconds left to shrink (default 60)",
    )
    fuzz.add_argument(
        "--minimize-budget",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="seconds to replay and cut down the failures at the end (default 60)",
    )
    fuzz.add_argument(
        "--startup-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="stdio: extra time for a fresh server's first answers (default 10)",
    )
    fuzz.add_argument(
        "--cancel-wait",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="how long to watch for an answer to a cancelled request (default 0.5)",
    )
    fuzz.add_argument(
        "--max-message-size",
        type=int,
        default=1 << 20,
        metavar="BYTES",
        help="the largest message to send (default 1 MiB)",
    )
    fuzz.add_argument(
        "--process",
        choices=("per-example", "per-run"),
        default="per-example",
        help="stdio: a fresh server per example (default) or one for the whole run (one per "
        "era, when the server speaks both)",
    )
    fuzz.add_argument(
        "--skip-tool",
        action="append",
        default=[],
        metavar="NAME",
        help="never call this tool (a name or fnmatch pattern; repeatable)",
    )
    fuzz.add_argument(
        "--call-risky-tools",
        action="store_true",
        help="also call tools annotated openWorldHint or destructiveHint (not called by "
        "default: they may reach beyond the server or destroy things)",
    )
    fuzz.add_argument(
        "--identity",
        action="append",
        default=[],
        metavar="NAME:HEADER=VALUE",
        help="act as this principal too (repeatable; the options naming one NAME add up its "
        "headers): with two or more, check that none reaches another's sessions, streams or "
        "tasks (HTTP). The first one's headers go with every request",
    )
    fuzz.add_argument(
        "--identities",
        metavar="FILE",
        help="the identities of a JSON or TOML file ({identities: {NAME: {headers: {...}}}})",
    )
    fuzz.add_argument(
        "--crosstalk-clients",
        type=int,
        default=DEFAULT_CROSSTALK_CLIENTS,
        metavar="N",
        help=f"HTTP: clients at once, checking that every answer and notification reaches "
        f"its own request (default {DEFAULT_CROSSTALK_CLIENTS}; 0: no cross-talk scan)",
    )
    fuzz.add_argument(
        "--leak-requests",
        type=int,
        default=DEFAULT_LEAK_REQUESTS,
        metavar="N",
        help=f"requests at once, a third cancelled, in four bursts: all answered, memory "
        f"given back (default {DEFAULT_LEAK_REQUESTS}; 0: no leaks scan)",
    )
    fuzz.add_argument(
        "--leak-memory-bound",
        type=int,
        default=DEFAULT_LEAK_MEMORY_BOUND,
        metavar="BYTES",
        help=f"how much the server's memory may grow over the leaks scan (default "
        f"{DEFAULT_LEAK_MEMORY_BOUND // 2**20} MiB)",
    )
    fuzz.add_argument("--strict", action="store_true", help="SHOULD requirements fail too")
    fuzz.add_argument(
        "--no-verify", action="store_true", help="do not replay and minimize the failures"
    )
    fuzz.add_argument("--report", metavar="FILE", help="write a JSON summary here")
    fuzz.add_argument(
        "--checks",
        metavar="CLASSES",
        help="run only these check classes, comma-separated, of "
        + ", ".join(CHECK_CLASSES)
        + " (default: all)",
    )
    fuzz.add_argument(
        "--security",
        action="store_true",
        help="the security scan: the classes "
        + ",".join(SECURITY_CLASSES)
        + " (not protocol) within the usual time budget; with --checks, those instead",
    )
    fuzz.add_argument(
        "--format",
        choices=("text", "json", "sarif"),
        default="text",
        help="what to write to --output (default: text, the summary; json: the --report "
        "summary; sarif: SARIF 2.1.0 for code-scanning UIs)",
    )
    fuzz.add_argument(
        "--output",
        metavar="FILE",
        help="write the --format output here (default: stdout; with json or sarif the "
        "summary goes to stderr)",
    )
    fuzz.add_argument(
        "--max-body",
        type=int,
        default=DEFAULT_MAX_BODY,
        metavar="BYTES",
        help=f"http checks: the largest request body sent to probe the server's body limit "
        f"(default {DEFAULT_MAX_BODY // (1024 * 1024)} MiB)",
    )
    fuzz.add_argument(
        "--repro-dir",
        metavar="DIR",
        default="trio-mcp-fuzz",
        help="where to write each failure's reproduction (default ./trio-mcp-fuzz)",
    )
    fuzz.add_argument("--quiet", action="store_true", help="no progress line")
    fuzz.add_argument(
        "--progress-interval",
        type=float,
        metavar="SECONDS",
        help="seconds between progress lines (default 0.2 on a terminal, 10 otherwise)",
    )
    fuzz.add_argument(
        "--list-invariants", action="store_true", help="list the requirements checked and exit"
    )
    fuzz.set_defaults(timeout=0.0)

    replay = commands.add_parser(
        "replay",
        help="replay a fuzzing reproduction against a server and check it again",
        description="Send a reproduction's messages to a fresh server, as recorded, and "
        "show what it answers and which requirements fail. Exit status 1 when one does.",
    )
    replay.add_argument("file", help="a reproduction written by trio-mcp fuzz (.jsonl)")
    _target_options(replay, required=True)
    replay.add_argument(
        "--deadline", type=float, metavar="SECONDS", help="override the recorded deadline"
    )
    replay.add_argument("--strict", action="store_true", help="SHOULD requirements fail too")
    replay.add_argument(
        "--print-lines",
        action="store_true",
        help="only print the messages, one per line (to pipe into a server by hand)",
    )
    replay.set_defaults(timeout=0.0)


def _from_config(args: argparse.Namespace) -> None:
    """With ``--config``, set ``--stdio`` or ``--url`` (and ``--env``, ``--cwd``,
    ``--header``) from the server it names, as every connecting command reads it."""
    if getattr(args, "config", None) is None:
        if getattr(args, "server", None) is not None:
            raise CliError("--server names a server of a --config file")
        return
    chosen = ConnectingTarget.from_config(args)
    args.config = args.server = None
    if chosen.url is not None:
        args.url, args.stdio, args.env = chosen.url, None, []
        args.header = [f"{name}: {value}" for name, value in chosen.headers.items()]
    else:
        assert chosen.command is not None
        args.stdio, args.url, args.header = shlex.join(chosen.command), None, []
        args.env = [f"{name}={value}" for name, value in chosen.env.items()]
        args.cwd = chosen.cwd


def _target(
    args: argparse.Namespace, *, process: Literal["per-example", "per-run"] = "per-example"
) -> Target:
    """Raises :exc:`CliError` for a malformed ``--header`` or ``--env``."""
    if args.url:
        if args.url.lower().startswith(("ws://", "wss://")):
            raise CliError(
                "the fuzzer drives servers over stdio and HTTP, not WebSocket: fuzz the same "
                "server over --stdio or an http:// URL"
            )
        return HttpTarget(url=args.url, headers=parse_headers(args.header))
    env = parse_env(args.env)
    return StdioTarget(command=args.stdio, env=env or None, cwd=args.cwd, process=process)


def _identities(args: argparse.Namespace) -> tuple[Identity, ...]:
    """The identities of ``--identity`` and ``--identities``.

    Raises:
        CliError: a malformed option or file (naming what is wrong), one name in both,
            or a negative scan size.
    """
    if args.crosstalk_clients < 0 or args.leak_requests < 0 or args.leak_memory_bound < 0:
        raise CliError("--crosstalk-clients, --leak-requests and --leak-memory-bound are >= 0")
    try:
        identities = parse_identity_options(args.identity)
        if args.identities is not None:
            identities += load_identities(args.identities)
    except IdentityError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"--identities: {exc}") from None
    names = [identity.name for identity in identities]
    for name in names:
        if names.count(name) > 1:
            raise CliError(f"identity {name!r} is given both by --identity and in --identities")
    return identities


def _list_invariants() -> int:
    for invariant in INVARIANTS.values():
        cwe = f", CWE-{invariant.cwe}" if invariant.cwe is not None else ""
        print(f"{invariant.name}  [{invariant.level}, {invariant.check_class}{cwe}]")
        print(f"    {invariant.requirement}")
        print(f"    ({invariant.source})")
    return 0


async def run_fuzz(args: argparse.Namespace) -> int:
    """``trio-mcp fuzz``: returns the exit status (``FuzzError`` is for the caller)."""
    if args.list_invariants:
        return _list_invariants()
    _from_config(args)
    if not (args.stdio or args.url):
        print("trio-mcp: fuzz needs --stdio or --url", file=sys.stderr)
        return 2
    target = _target(args, process=args.process) if args.stdio else _target(args)
    checks = _checks(args)
    identities = _identities(args)
    stop = trio.Event()
    settings = FuzzSettings(
        protocol_version=args.protocol_version,
        max_examples=args.max_examples,
        max_steps=args.max_steps,
        seed=args.seed,
        deadline=args.deadline,
        cancel_wait=args.cancel_wait,
        startup_timeout=args.startup_timeout,
        time_budget=args.time_budget if args.time_budget > 0 else math.inf,
        shrink_budget=args.shrink_budget,
        minimize_budget=args.minimize_budget,
        max_message_size=args.max_message_size,
        spec_dir=args.spec_dir,
        strict=args.strict,
        skip_tools=args.skip_tool,
        call_risky_tools=args.call_risky_tools,
        verify=not args.no_verify,
        progress_interval=args.progress_interval,
        checks=checks,
        max_body=args.max_body,
        identities=identities,
        crosstalk_clients=args.crosstalk_clients,
        leak_requests=args.leak_requests,
        leak_memory_bound=args.leak_memory_bound,
    )
    one_run = partial(
        fuzz, target, settings, progress=None if args.quiet else sys.stderr, stop=stop
    )
    reports: list[FuzzReport] = []
    aborted = False
    # Ctrl-C arrives here as an event, not as a KeyboardInterrupt raised in whichever task
    # happens to be running: the first one stops the run gracefully (it keeps what it
    # found), a second one cancels it.
    with trio.open_signal_receiver(signal.SIGINT) as interrupts:
        async with open_nursery_unwrapped() as nursery:

            async def run() -> None:
                reports.append(await one_run())
                nursery.cancel_scope.cancel()

            async def watch() -> None:
                nonlocal aborted
                async for _ in interrupts:
                    if not stop.is_set():
                        print("\ntrio-mcp: stopping (Ctrl-C again to abort)", file=sys.stderr)
                        stop.set()
                    else:
                        aborted = True
                        nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            nursery.start_soon(watch)
    if aborted or not reports:
        print("trio-mcp: interrupted", file=sys.stderr)
        return 130
    report = reports[0]
    if report.failures:
        report = await write_reproductions(report, Path(args.repro_dir))
    # The summary goes to stdout, unless stdout carries the JSON or SARIF output.
    people = sys.stderr if args.format != "text" and args.output is None else sys.stdout
    summary = report.summary()
    for failure in report.failures:
        if failure.path:
            summary += f"\n\nreplay with: trio-mcp replay {failure.path} " + _target_flags(args)
    if args.format == "text" and args.output is not None:
        await trio.Path(args.output).write_text(summary + "\n")
    print(summary, file=people)
    if args.report:
        await trio.Path(args.report).write_bytes(_json(report.to_json()))
    if args.format != "text":
        data = _json(report.to_json() if args.format == "json" else sarif_log(report))
        if args.output is None:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        else:
            await trio.Path(args.output).write_bytes(data)
    if report.stopped == "stopped" and report.ok:
        return 130  # interrupted before its budget was spent: not a pass
    return 0 if report.ok else 1


def _json(value: dict[str, Any]) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"


def _checks(args: argparse.Namespace) -> tuple[str, ...]:
    """The check classes ``--checks`` and ``--security`` select.

    Raises:
        CliError: an unknown class, named.
    """
    if args.checks is None:
        return SECURITY_CLASSES if args.security else CHECK_CLASSES
    try:
        chosen = parse_checks(args.checks)
    except ValueError as exc:
        raise CliError(f"--checks: {exc}") from None
    return tuple(c for c in CHECK_CLASSES if c in chosen)


def _target_flags(args: argparse.Namespace) -> str:
    if args.url:
        return f"--url {shlex.quote(args.url)}"
    flags = f"--stdio {shlex.quote(args.stdio)}"
    for item in args.env:
        flags += f" --env {shlex.quote(item)}"
    return flags


async def run_replay(args: argparse.Namespace) -> int:
    """``trio-mcp replay``: returns the exit status."""
    data = await trio.Path(args.file).read_bytes()
    if args.print_lines:
        _, steps = load_steps(data)
        for line in iter_sent_lines(steps):
            sys.stdout.buffer.write(line + b"\n")
        sys.stdout.flush()
        return 0
    _from_config(args)
    target = _target(args)
    result = await replay_reproduction(data, target, deadline=args.deadline, spec_dir=args.spec_dir)
    _, steps = load_steps(data)
    for line in iter_sent_lines(steps):
        print("→ " + line.decode("utf-8", "backslashreplace"))
    for message in result.received:
        print("← " + orjson.dumps(message).decode())
    recorded = (result.header.get("violation") or {}).get("invariant")
    failed = False
    for finding in result.findings:
        failing = finding.invariant.level == "MUST" or args.strict
        failed = failed or failing
        kind = "FAILED" if failing else "warning"
        print(f"{kind} {finding.invariant.name} [{finding.invariant.level}]: {finding.detail}")
    if recorded:
        print(
            f"recorded violation {recorded}: "
            + ("reproduced" if result.reproduced else "did not reproduce")
        )
    return 1 if failed else 0
