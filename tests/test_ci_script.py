"""``.ci/run`` runs the README's test command, and a step of it that fails ends the run.

Run against stand-ins: a copy of the script in a folder of its own, with every program it
calls replaced by a stub on ``PATH`` that records being called (``python3`` fails to make
the venv, or ``pytest`` fails), so the script's control flow is what is tested, not the
machine's tools. It once went on after a failed ``python3 -m venv`` (``set -e`` does not
stop inside an ``&&`` list): it installed the linters outside any venv and could have
passed with no test run at all.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / ".ci" / "run"

#: Programs ``.ci/run`` may call, each stubbed: records its name and arguments, exits 0.
STUBBED = ("redis-server", "chromium", "dot", "node", "npm", "apt-get", "pip", "ruff", "mypy")
#: What CI requires instead of skipping: each set to 1 for the tests.
REQUIRED = (
    "TRIO_MCP_REQUIRE_NPM",
    "TRIO_MCP_REQUIRE_CONFORMANCE",
    "TRIO_MCP_REQUIRE_REDIS",
    "TRIO_MCP_REQUIRE_DOCS",
    "TRIO_MCP_REQUIRE_OIDC",
    "TRIO_MCP_REQUIRE_SPEC",
    "TRIO_MCP_REQUIRE_WHEEL",
)


def readme_test_command() -> str:
    text = (ROOT / "README.md").read_text()
    (command,) = [
        line.strip()
        for line in text.splitlines()
        if line.startswith("    ") and line.strip().endswith("&& python -m pytest")
    ]
    return command


def test_ci_runs_the_readmes_test_command_as_written() -> None:
    command = readme_test_command()
    lines = CI.read_text().splitlines()
    assert any(line == command or line.startswith(command + " ||") for line in lines), command


def run_ci(tmp_path: Path, *, venv_fails: bool, tests_fail: bool) -> tuple[int, list[str]]:
    """Run a copy of ``.ci/run`` with stubs; its exit status and the calls the stubs saw."""
    project = tmp_path / "project"
    (project / ".ci").mkdir(parents=True)
    shutil.copy(CI, project / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    log.touch()
    for name in STUBBED:
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n')
        stub.chmod(0o755)
    # python3 makes the venv (a bin/activate that puts the stubs first) unless told to fail;
    # "python -m pytest" inside the venv is the stub "python".
    python3 = bin_dir / "python3"
    python3.write_text(
        "#!/bin/sh\n"
        f'echo "python3 $*" >> "{log}"\n'
        + ("exit 1\n" if venv_fails else "")
        + f'mkdir -p "$3/bin" && echo "PATH={bin_dir}:$PATH" > "$3/bin/activate"\n'
    )
    python = bin_dir / "python"
    required = " ".join(f"{name}=${name}" for name in REQUIRED)
    python.write_text(
        f'#!/bin/sh\necho "python $* {required}" >> "{log}"\n' + ("exit 1\n" if tests_fail else "")
    )
    for program in (python3, python):
        program.chmod(0o755)
    run = subprocess.run(
        ["/bin/bash", str(project / ".ci" / "run")],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    return run.returncode, log.read_text().splitlines()


def programs(calls: list[str]) -> list[str]:
    return [call.split()[0] for call in calls]


def test_a_venv_that_cannot_be_made_ends_the_run(tmp_path: Path) -> None:
    status, calls = run_ci(tmp_path, venv_fails=True, tests_fail=False)
    assert status != 0
    assert programs(calls)[-1] == "python3", calls  # nothing after it: no pip, ruff, mypy
    assert "pip" not in programs(calls)


def test_failing_tests_end_the_run_before_the_linters(tmp_path: Path) -> None:
    status, calls = run_ci(tmp_path, venv_fails=False, tests_fail=True)
    assert status != 0
    assert any(call.startswith("python -m pytest ") for call in calls), calls
    assert not {"ruff", "mypy"} & set(programs(calls)), calls


def test_a_clean_run_tests_then_lints_and_type_checks(tmp_path: Path) -> None:
    status, calls = run_ci(tmp_path, venv_fails=False, tests_fail=False)
    assert status == 0, calls
    order = [p for p in programs(calls) if p in ("python", "ruff", "mypy")]
    assert order == ["python", "ruff", "ruff", "mypy"], calls
    assert re.fullmatch(r"pip install -e \.\[test\]", calls[programs(calls).index("pip")]), calls
    (tests,) = [call for call in calls if call.startswith("python -m pytest ")]
    assert tests.split()[3:] == [f"{name}=1" for name in REQUIRED], tests
