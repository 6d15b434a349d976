"""A server of skills (the Skills extension, io.modelcontextprotocol/skills) over stdio:
every folder with a SKILL.md under examples/skills/, and one skill built in code.

Run it: ``python examples/skills_server.py`` (stdio), or list its skills with
``trio-mcp list-skills python examples/skills_server.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import trio_mcp
from trio_mcp import Server
from trio_mcp.skills import Skill

SKILLS = Path(__file__).parent / "skills"

server = Server("skills", version="1.0.0")

# Every folder holding a SKILL.md is a skill: skill://code-review/SKILL.md,
# skill://acme/refunds/SKILL.md (acme/ is an organizational prefix).
server.add_skills(SKILLS)

# A skill built in code: its files by path, SKILL.md among them.
server.add_skills(
    Skill.from_files(
        "release-notes",
        {
            "SKILL.md": (
                "---\n"
                "name: release-notes\n"
                "description: Write release notes from merged changes.\n"
                "---\n\n"
                "Group the changes as templates/notes.md shows.\n"
            ),
            "templates/notes.md": "## Added\n\n## Fixed\n",
        },
    )
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Serve the example skills (examples/skills/ and one built in code) over stdio."
    )
    parser.parse_args()
    trio_mcp.run(server)


if __name__ == "__main__":
    main()
