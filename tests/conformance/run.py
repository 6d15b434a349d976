#!/usr/bin/env python3
"""Run the official MCP conformance suite against trio_mcp's fixtures.

    python tests/conformance/run.py server            # every server scenario, both spec versions
    python tests/conformance/run.py client            # every client scenario
    python tests/conformance/run.py all               # both
    python tests/conformance/run.py server --spec-version 2026-07-28 --scenario caching -v
    python tests/conformance/run.py all --set requirements=2026-07-28 --set suite=all

``--set`` runs whole sets the way the SDK tier assessments do, one harness run per set
and mode instead of one per scenario: ``requirements=REV`` (exactly the scenarios revision
REV requires, frozen at its release, at its wire) or ``suite=all`` (pending and draft
scenarios too). A set passes when the harness exits 0 and no check failed or warned, the
scenarios it does not score included; it prints ``set <mode> <set>: S scenarios, P checks
passed, F failed, W warnings, U unscored failing`` and writes ``sets.json``.

Server mode starts ``examples/conformance_server.py`` once on a free port of
127.0.0.1 and runs every scenario ``conformance list --server`` gives for
each spec version against it, several at a time. Client mode runs
``examples/conformance_client.py`` under the harness's mock servers.

The harness (``@modelcontextprotocol/conformance`` and ``node@22``) is
installed with npm into ``$TRIO_MCP_CONFORMANCE_HOME`` (default
``~/.cache/trio-mcp-conformance``) on first use and reused after.

Extension scenarios (listed as ``[extension]``, never under a spec version)
run once each, without ``--spec-version``. Scenarios of older revisions only (the
2025-03-26 authorization back-compat ones) run once at their own revision. No scenario
is excused.

Prints one line per scenario run, then per mode and spec version (or
``extension``) ``<mode> <version>: P checks passed, F failed (R runs, B
failing)``, then ``conformance: P passed, F failed`` (checks), and last, per
mode, each scenario counted once whatever the number of versions it ran at:
``<mode> scenarios: N of M passed, F failed, E excused, X not run`` (M is every
scenario ``conformance list`` names). The same counts
are written to ``counts.json`` in the output folder. Exit status: 0 all passed, 1 failures or warnings (a warning fails the gate too),
2 usage error, 4 the harness could not be installed (npm or the registry
unreachable).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from trio_mcp._cli._harness import (
    HARNESS_VERSION,
    HarnessUnavailable,
    default_home,
    install_harness,
)

SPEC_VERSIONS = ("2025-11-25", "2026-07-28")
ROOT = Path(__file__).resolve().parents[2]
#: Scenario name prefixes not run (none: every server scenario runs, tasks-* included, and
#: every client one, auth/* included; the harness lists no server-side auth/* scenario, and
#: the server's authorization is tested against oidc-provider in tests/test_auth_oidc.py).
SERVER_SKIP_PREFIXES: tuple[str, ...] = ()
CLIENT_SKIP_PREFIXES: tuple[str, ...] = ()


EXTENSION = "extension"


def list_scenarios(harness: list[str], mode: str, version: str | None = None) -> list[str]:
    """The scenarios ``conformance list`` names for ``mode`` (every one when ``version`` is
    None, extension scenarios included; else those of that spec version, which never
    include an extension scenario)."""
    return [name for name, _ in list_tagged(harness, mode, version)]


def list_tagged(
    harness: list[str], mode: str, version: str | None = None
) -> list[tuple[str, list[str]]]:
    """``(name, tags)`` for each scenario listed: tags are the spec versions the scenario
    applies to, or ``["extension"]`` for an extension scenario."""
    command = [*harness, "list", f"--{mode}"]
    if version is not None:
        command += ["--spec-version", version]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    listed = []
    for line in out.splitlines():
        if not line.startswith("  - "):
            continue
        name, _, rest = line[4:].strip().partition(" ")
        tags = rest.strip().strip("[]").split(",") if rest.strip() else []
        listed.append((name, [tag.strip() for tag in tags if tag.strip()]))
    if not listed:
        raise RuntimeError(f"`conformance list --{mode}` listed nothing:\n{out[-2000:]}")
    return listed


def excused(mode: str, name: str) -> bool:
    """Scenarios not run (see SERVER_SKIP_PREFIXES: none today)."""
    return name.startswith(SERVER_SKIP_PREFIXES if mode == "server" else CLIENT_SKIP_PREFIXES)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(python: str, logs: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = open(logs / "server.log", "wb")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(
        [python, str(ROOT / "examples" / "conformance_server.py"), "--port", str(port)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the conformance server exited; see {logs / 'server.log'}")
        try:
            urllib.request.urlopen(url, timeout=2)
        except urllib.error.HTTPError:
            return process, url  # it answers (405 for a plain GET)
        except OSError:
            time.sleep(0.2)
        else:
            return process, url
    process.kill()
    raise RuntimeError("the conformance server did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def run_scenario(
    harness: list[str], mode: str, target: str, name: str, version: str, out: Path, limit: int
) -> dict[str, object]:
    """Run one scenario; ``version`` is a spec version, or ``"extension"`` for an extension
    scenario, which the harness runs only without ``--spec-version`` (at the version the
    harness picks for it)."""
    directory = out / mode / version / name.replace("/", "__")
    directory.mkdir(parents=True, exist_ok=True)
    if mode == "server":
        command = [*harness, "server", "--url", target]
    else:
        command = [*harness, "client", "--command", target, "--timeout", str((limit - 10) * 1000)]
    command += ["--scenario", name, "-o", str(directory)]
    if version != EXTENSION:
        command += ["--spec-version", version]
    notes: list[str] = []
    try:
        done = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=limit, check=False
        )
        log = done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        log = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        notes.append(f"timed out after {limit} s")
    (directory / "harness.log").write_text(log)
    files = sorted(directory.glob("**/checks.json"))
    checks = json.loads(files[-1].read_text()) if files else []
    if not files and not notes:
        notes.append("no checks.json")
    if mode == "client":
        if "CLIENT TIMED OUT" in log:
            notes.append("client timed out")
        if "CLIENT EXITED WITH ERROR" in log:
            notes.append("client exited with an error")
    passed = sum(c.get("status") == "SUCCESS" for c in checks)
    failed = sum(c.get("status") == "FAILURE" for c in checks)
    warnings = sum(c.get("status") == "WARNING" for c in checks)
    if notes and not failed:
        failed = 1
    problems = [
        f"{c.get('id')}: {c.get('status')}: {(c.get('errorMessage') or '')[:300]}"
        for c in checks
        if c.get("status") in ("FAILURE", "WARNING")
    ]
    return {
        "mode": mode,
        "version": version,
        "scenario": name,
        "passed": passed,
        "failed": failed,
        "warnings": warnings,
        "notes": notes,
        "problems": problems,
    }


SET_KINDS = ("requirements", "suite")


def run_set(
    harness: list[str], mode: str, target: str, kind: str, value: str, out: Path, limit: int
) -> dict[str, object]:
    """One harness run of a whole set (``--requirements REV`` or ``--suite NAME``)."""
    directory = out / "sets" / mode / f"{kind}-{value}"
    directory.mkdir(parents=True, exist_ok=True)
    if mode == "server":
        command = [*harness, "server", "--url", target]
    else:
        # The set's scenarios run in parallel: on a loaded machine a client may need more
        # than the harness's default 30 s per scenario.
        command = [*harness, "client", "--command", target, "--timeout", str(limit * 1000 // 4)]
    command += [f"--{kind}", value, "-o", str(directory)]
    try:
        done = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=limit, check=False
        )
        log, status = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired:
        log, status = f"timed out after {limit} s", -1
    (directory / "harness.log").write_text(log)
    statuses = [
        check.get("status")
        for path in directory.glob("**/checks.json")
        for check in json.loads(path.read_text())
    ]
    scenarios = unscored = 0
    for line in log.splitlines():
        found = re.search(r"\((\d+) scenarios\)", line)
        if line.startswith("Running") and found:
            scenarios = int(found.group(1))
        found = re.search(r"(\d+) failing", line)
        if line.startswith("Not scored") and found:
            unscored = int(found.group(1))
    return {
        "mode": mode,
        "set": f"{kind}={value}",
        "exit": status,
        "scenarios": scenarios,
        "passed": statuses.count("SUCCESS"),
        "failed": statuses.count("FAILURE"),
        "warnings": statuses.count("WARNING"),
        "unscored_failing": unscored,
        "tail": log.splitlines()[-40:],
    }


def run_sets(
    harness: list[str], modes: list[str], sets: list[str], python: str, out: Path, limit: int
) -> int:
    results = []
    for mode in modes:
        server = None
        if mode == "server":
            server, target = start_server(python, out)
        else:
            target = f"{python} {ROOT / 'examples' / 'conformance_client.py'}"
        try:
            for wanted in sets:
                kind, _, value = wanted.partition("=")
                result = run_set(harness, mode, target, kind, value, out, limit)
                results.append(result)
                print(
                    f"set {mode} {result['set']}: {result['scenarios']} scenarios, "
                    f"{result['passed']} checks passed, {result['failed']} failed, "
                    f"{result['warnings']} warnings, {result['unscored_failing']} unscored "
                    f"failing (exit {result['exit']})",
                    flush=True,
                )
                if not set_passed(result):
                    print("\n".join(str(line) for line in result["tail"]), flush=True)  # type: ignore[attr-defined]
        finally:
            if server is not None:
                stop(server)
    (out / "sets.json").write_text(json.dumps(results, indent=1))
    return 0 if all(set_passed(r) for r in results) else 1


def set_passed(result: dict[str, object]) -> bool:
    return (
        result["exit"] == 0
        and result["failed"] == 0
        and result["warnings"] == 0
        and result["unscored_failing"] == 0
        and int(result["scenarios"]) > 0  # type: ignore[call-overload]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["server", "client", "all"])
    parser.add_argument("--spec-version", action="append", choices=SPEC_VERSIONS)
    parser.add_argument("--scenario", action="append", help="only these (repeatable)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("CONFORMANCE_JOBS", 6)))
    parser.add_argument("--timeout", type=int, default=90, help="seconds per scenario")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("-o", "--output", type=Path, default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument(
        "--set",
        action="append",
        metavar="KIND=VALUE",
        help="run a whole set: requirements=REV or suite=NAME (repeatable)",
    )
    args = parser.parse_args()
    for wanted in args.set or []:
        kind, equals, value = wanted.partition("=")
        if kind not in SET_KINDS or not equals or not value:
            parser.error(f"--set takes requirements=REV or suite=NAME, not {wanted!r}")

    try:
        harness = install_harness(default_home())
    except HarnessUnavailable as exc:
        print(f"conformance: cannot install the harness: {exc}", file=sys.stderr)
        return 4
    versions = args.spec_version or list(SPEC_VERSIONS)
    modes = ["server", "client"] if args.mode == "all" else [args.mode]
    out = args.output or Path(tempfile.mkdtemp(prefix="trio-mcp-conformance-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"harness {HARNESS_VERSION}; results in {out}", flush=True)
    if args.set:
        return run_sets(harness, modes, args.set, args.python, out, args.timeout * 10)

    results: list[dict[str, object]] = []
    catalogue: dict[str, list[str]] = {}
    for mode in modes:
        if mode == "client" and not (ROOT / "examples" / "conformance_client.py").exists():
            print("client: examples/conformance_client.py is missing", flush=True)
            results.append(
                {"mode": "client", "version": "-", "scenario": "(fixture missing)",
                 "passed": 0, "failed": 1, "warnings": 0, "notes": ["no fixture"], "problems": []}
            )  # fmt: skip
            continue
        listed = list_tagged(harness, mode)
        jobs = []
        for version in versions:
            for name in list_scenarios(harness, mode, version):
                if not excused(mode, name) and (not args.scenario or name in args.scenario):
                    jobs.append((name, version))
        for name, tags in listed:
            wanted = not args.scenario or name in args.scenario
            if EXTENSION in tags and not excused(mode, name) and wanted:
                jobs.append((name, EXTENSION))
            older = tags and not set(tags) & {*SPEC_VERSIONS, EXTENSION}
            if older and not args.spec_version and not excused(mode, name) and wanted:
                jobs.append((name, tags[-1]))  # only at older revisions: run at its own
        catalogue[mode] = [name for name, _ in listed]
        server = None
        if mode == "server":
            server, target = start_server(args.python, out)
        else:
            target = f"{args.python} {ROOT / 'examples' / 'conformance_client.py'}"
        started = time.monotonic()
        try:
            with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
                futures = [
                    pool.submit(run_scenario, harness, mode, target, n, v, out, args.timeout)
                    for n, v in jobs
                ]
                for future in futures:
                    result = future.result()
                    results.append(result)
                    report(result, args.verbose)
        finally:
            if server is not None:
                stop(server)
        print(f"{mode}: {len(jobs)} scenarios in {time.monotonic() - started:.0f} s", flush=True)

    total_passed = total_failed = 0
    extra = sorted({str(r["version"]) for r in results} - {*versions, EXTENSION, "-"})
    for mode in modes:
        for version in [*versions, *extra, EXTENSION]:
            rows = [r for r in results if r["mode"] == mode and r["version"] in (version, "-")]
            passed = sum(int(r["passed"]) for r in rows)  # type: ignore[call-overload]
            failed = sum(int(r["failed"]) for r in rows)  # type: ignore[call-overload]
            bad = sum(1 for r in rows if r["failed"])
            print(
                f"{mode} {version}: {passed} checks passed, {failed} failed "
                f"({len(rows)} runs, {bad} failing)"
            )
            total_passed += passed
            total_failed += failed
    counts = {mode: scenario_counts(mode, catalogue.get(mode, []), results) for mode in modes}
    (out / "summary.json").write_text(json.dumps(results, indent=1))
    (out / "counts.json").write_text(json.dumps(counts, indent=1))
    print(f"conformance: {total_passed} passed, {total_failed} failed")
    for mode in modes:
        c = counts[mode]
        print(
            f"{mode} scenarios: {c['passed']} of {c['listed']} passed, {c['failed']} failed, "
            f"{c['excused']} excused, {c['not_run']} not run"
        )
    warned = sum(int(r["warnings"]) for r in results)  # type: ignore[call-overload]
    if warned:
        print(f"conformance: {warned} warnings (they fail the gate like failures)")
    return 1 if total_failed or warned else 0


def scenario_counts(
    mode: str, listed: list[str], results: list[dict[str, object]]
) -> dict[str, object]:
    """Each scenario counted once, whatever the number of spec versions it ran at: passed
    when every run of it passed."""
    runs: dict[str, list[dict[str, object]]] = {}
    for r in results:
        if r["mode"] == mode:
            runs.setdefault(str(r["scenario"]), []).append(r)
    ran = [name for name in listed if name in runs]
    # A warning fails the gate like a failure (as the tier assessments count it).
    failed = sorted(name for name in ran if any(r["failed"] or r["warnings"] for r in runs[name]))
    missing = [name for name in runs if name not in listed]  # e.g. "(fixture missing)"
    excused_names = [name for name in listed if excused(mode, name)]
    return {
        "listed": len(listed),
        "run": len(ran),
        "passed": len(ran) - len(failed),
        "failed": len(failed) + len(missing),
        "failing": failed + missing,
        "excused": len(excused_names),
        "not_run": len(listed) - len(ran) - len(excused_names),
    }


def report(result: dict[str, object], verbose: bool) -> None:
    status = "FAIL" if result["failed"] else ("WARN" if result["warnings"] else "PASS")
    notes = f"  [{'; '.join(result['notes'])}]" if result["notes"] else ""  # type: ignore[arg-type]
    print(
        f"{status}  {result['mode']} {result['version']} {result['scenario']}: "
        f"{result['passed']} passed, {result['failed']} failed, "
        f"{result['warnings']} warnings{notes}",
        flush=True,
    )
    if status == "FAIL" or verbose:
        for problem in result["problems"][:8]:  # type: ignore[index]
            print(f"      {problem}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
