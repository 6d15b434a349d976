"""Skills across a process boundary: examples/skills_server.py as a child process over
stdio, our client listing and loading its skills, and the ``trio-mcp list-skills`` and
``get-skill`` commands (a file that fails verification is not printed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from trio_mcp import open_stdio_client
from trio_mcp.http import open_http_client
from trio_mcp.skills import SKILLS_EXTENSION, get_skill, list_skills, load_skill, read_skill_file

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "examples" / "skills_server.py")]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

pytestmark = pytest.mark.slow


async def test_a_skills_server_process_and_our_client() -> None:
    with trio.fail_after(60):
        async with open_stdio_client(
            SERVER,
            env={"PYTHONPATH": str(ROOT)},
            protocol_version="2026-07-28",
            stderr=lambda line: None,
        ) as client:
            entries = {entry.uri: entry for entry in await list_skills(client)}
            assert set(entries) == {
                "skill://acme/refunds/SKILL.md",
                "skill://code-review/SKILL.md",
                "skill://release-notes/SKILL.md",
            }
            review = entries["skill://code-review/SKILL.md"]
            assert review.frontmatter["metadata"] == {"version": "1.2"}
            assert await get_skill(client, review.uri) == review
            text = await load_skill(client, review)
            assert text == (ROOT / "examples/skills/code-review/SKILL.md").read_text()
            checklist = "skill://code-review/references/checklist.md"
            assert (
                await read_skill_file(client, review, checklist)
                == (ROOT / "examples/skills/code-review/references/checklist.md").read_bytes()
            )


async def test_the_everything_server_over_http_and_our_client() -> None:
    """A real process serving Streamable HTTP: its skill listed and loaded, verified, in
    the 2026-07-28 era; an initialize-era client is not told of the extension."""
    process = await trio.lowlevel.open_process(
        [sys.executable, str(ROOT / "examples" / "everything_server.py"), "--http", "0"],
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=ROOT,
    )
    try:
        assert process.stderr is not None
        seen = b""
        with trio.fail_after(30):
            while b"everything server on " not in seen or not seen.endswith(b"\n"):
                chunk = await process.stderr.receive_some()
                assert chunk, f"the server exited: {seen!r}"
                seen += chunk
        url = seen.decode().split("everything server on ", 1)[1].split()[0]
        with trio.fail_after(30):
            async with open_http_client(url, protocol_version="2026-07-28") as client:
                (entry,) = await list_skills(client)
                assert entry.uri == "skill://greeting/SKILL.md"
                assert "name: greeting" in await load_skill(client, entry)
            async with open_http_client(url, protocol_version="2025-11-25") as client:
                assert SKILLS_EXTENSION not in (client.server_capabilities.extensions or {})
    finally:
        process.terminate()
        with trio.move_on_after(30):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
        cwd=ROOT,
    )


STDIO = ("--stdio", f"{sys.executable} examples/skills_server.py")


def test_list_skills_and_get_skill() -> None:
    listing = cli("list-skills", *STDIO)
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.splitlines() == [
        "skill://acme/refunds/SKILL.md  refunds  Process customer refund requests per company "
        "policy.",
        "skill://code-review/SKILL.md  code-review  Review a change using the team's checklist.",
        "skill://release-notes/SKILL.md  release-notes  Write release notes from merged changes.",
    ]
    got = cli("get-skill", "skill://release-notes/SKILL.md", *STDIO)
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("---\nname: release-notes\n")
    template = cli(
        "get-skill", "skill://release-notes/SKILL.md", "--file", "templates/notes.md", *STDIO
    )
    assert template.stdout == "## Added\n\n## Fixed\n"
    entry = json.loads(cli("get-skill", "skill://release-notes/SKILL.md", "--json", *STDIO).stdout)
    assert entry["frontmatter"]["name"] == "release-notes"
    assert [r["uri"] for r in entry["resources"]] == [
        "skill://release-notes/SKILL.md",
        "skill://release-notes/templates/notes.md",
    ]
    assert json.loads(cli("list-skills", "--json", *STDIO).stdout)[1] == json.loads(
        cli("get-skill", "skill://code-review/SKILL.md", "--json", *STDIO).stdout
    )
    unknown = cli("get-skill", "skill://nope/SKILL.md", *STDIO)
    assert (unknown.returncode, unknown.stderr) == (
        1,
        "trio-mcp: error -32602: No skill is served at skill://nope/SKILL.md\n",
    )
    # An initialize-era connection is not told of the extension: nothing to list.
    legacy = cli("list-skills", *STDIO, "--protocol-version", "2025-11-25")
    assert (legacy.returncode, legacy.stdout) == (0, "")


TAMPERED = """
import trio_mcp
from trio_mcp import Server
from trio_mcp.skills import Skill

server = Server("tampered")
server.add_skills(Skill.from_files("pdf", {
    "SKILL.md": "---\\nname: pdf\\ndescription: Honest.\\n---\\n",
    "guide.md": "listed bytes\\n",
}))

@server.resource("skill://pdf/guide.md")
def guide() -> str:
    return "other bytes!\\n"

trio_mcp.run(server)
"""


def test_get_skill_does_not_print_a_file_that_fails_verification(tmp_path: Path) -> None:
    script = tmp_path / "tampered.py"
    script.write_text(TAMPERED)
    stdio = ("--stdio", f"{sys.executable} {script}")
    assert cli("get-skill", "skill://pdf/SKILL.md", *stdio).returncode == 0
    run = cli("get-skill", "skill://pdf/SKILL.md", "--file", "guide.md", *stdio)
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.startswith(
        "trio-mcp: not verified, not printed: skill://pdf/guide.md: digest sha256:"
    ), run.stderr
    assert "Traceback" not in run.stderr
