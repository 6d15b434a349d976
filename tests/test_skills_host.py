"""Skills in a host: the catalog holds the skills each server's policy allows, keyed by
server and URI (a shared name replaces nothing), no file is read to build it, and a
skill is loaded from its own server only, verified."""

from __future__ import annotations

from typing import Any

import pytest
from trio.testing import assert_checkpoints

from trio_mcp import Server
from trio_mcp.client import ClientOptions
from trio_mcp.host import ConfigError, InProcessServerConfig, ServerPolicy, open_host, parse_policy
from trio_mcp.skills import (
    HostedSkill,
    Skill,
    SkillEntry,
    SkillVerificationError,
    host_skills,
    load_hosted_skill,
    read_hosted_skill_file,
    skill_catalog,
)

MODERN = ClientOptions(protocol_version="2026-07-28")


def skill(path: str, description: str, **files: str) -> Skill:
    name = path.rsplit("/", 1)[-1]
    head = f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"
    return Skill.from_files(path, {"SKILL.md": head, **files})


def server_with(*skills: Skill) -> Server:
    server = Server("skills")
    server.add_skills(list(skills))
    return server


async def test_the_host_hands_the_model_the_skills_the_policy_allows() -> None:
    docs = server_with(
        skill("pdf", "PDFs from docs.", **{"guide.md": "# Guide\n"}),
        skill("deploy", "Runs scripts."),
        skill("team-a/review", "Review, team A."),
        skill("team-b/review", "Review, team B."),
    )
    other = server_with(skill("pdf", "PDFs from elsewhere."))
    servers = {
        "docs": InProcessServerConfig(server=docs, policy=ServerPolicy(blocked_skills=["deploy"])),
        "other": InProcessServerConfig(
            server=other, policy=ServerPolicy(allowed_skills=["skill://pdf/*"])
        ),
        "plain": InProcessServerConfig(server=Server("plain", tools=True)),
    }
    async with open_host(servers, client_options=MODERN) as host:
        await host.wait_settled()
        found = await host_skills(host)
        assert found.failed == {}
        assert [s.key for s in found.skills] == [
            ("docs", "skill://pdf/SKILL.md"),
            ("docs", "skill://team-a/review/SKILL.md"),
            ("docs", "skill://team-b/review/SKILL.md"),
            ("other", "skill://pdf/SKILL.md"),
        ]
        assert skill_catalog(found.skills) == [
            {
                "name": "docs/pdf",
                "description": "PDFs from docs.",
                "server": "docs",
                "uri": "skill://pdf/SKILL.md",
            },
            {
                "name": "docs/team-a/review",
                "description": "Review, team A.",
                "server": "docs",
                "uri": "skill://team-a/review/SKILL.md",
            },
            {
                "name": "docs/team-b/review",
                "description": "Review, team B.",
                "server": "docs",
                "uri": "skill://team-b/review/SKILL.md",
            },
            {
                "name": "other/pdf",
                "description": "PDFs from elsewhere.",
                "server": "other",
                "uri": "skill://pdf/SKILL.md",
            },
        ]
        docs_pdf, *_, other_pdf = found.skills
        # Same URI, two servers: each loads from its own.
        assert "PDFs from docs." in await load_hosted_skill(host, docs_pdf)
        assert "PDFs from elsewhere." in await load_hosted_skill(host, other_pdf)
        # load_skill's limits reach it by name.
        with pytest.raises(SkillVerificationError, match=r"more than the limit of 8$"):
            await load_hosted_skill(host, docs_pdf, max_bytes=8)
        assert await read_hosted_skill_file(host, docs_pdf, "skill://pdf/guide.md") == b"# Guide\n"
        # The other server's entry does not list guide.md: never read from there.
        with pytest.raises(SkillVerificationError, match="not listed"):
            await read_hosted_skill_file(host, other_pdf, "skill://pdf/guide.md")
        # A skill the policy blocks is not loaded even when asked for by hand.
        blocked = HostedSkill(
            "docs",
            SkillEntry(
                uri="skill://deploy/SKILL.md",
                frontmatter={"name": "deploy", "description": "x"},
                resources=(),
            ),
        )
        with (
            assert_checkpoints(),
            pytest.raises(PermissionError, match=r"does not allow skill skill://deploy/SKILL\.md"),
        ):
            await load_hosted_skill(host, blocked)


def test_the_skill_policy_keys_are_parsed_strictly() -> None:
    policy = parse_policy({"allowedSkills": ["pdf", "skill://acme/*"], "blockedSkills": []})
    assert policy.allows_skill("pdf", "skill://pdf/SKILL.md")
    assert policy.allows_skill("refunds", "skill://acme/refunds/SKILL.md")
    assert not policy.allows_skill("deploy", "skill://deploy/SKILL.md")
    with pytest.raises(ConfigError, match="allowedSkills"):
        parse_policy({"allowedSkills": "pdf"})
    with pytest.raises(ConfigError, match="blockedSkills"):
        parse_policy({"blockedSkills": [3]})


async def test_a_host_without_skill_servers_lists_none_and_checkpoints() -> None:
    servers = {"plain": InProcessServerConfig(server=Server("plain", tools=True))}
    async with open_host(servers, client_options=MODERN) as host:
        await host.wait_settled()
        with assert_checkpoints():
            found = await host_skills(host)
        assert found.skills == []


async def test_a_server_whose_listing_fails_is_reported_not_fatal() -> None:
    broken = Server("broken")
    broken.add_skills(skill("pdf", "fine"))

    @broken.method("skills/list")
    async def list_(ctx: Any, params: Any) -> dict[str, Any]:
        return {"skills": [{"uri": "skill://x/SKILL.md"}]}  # no frontmatter, no resources

    servers = {
        "broken": InProcessServerConfig(server=broken),
        "good": InProcessServerConfig(server=server_with(skill("pdf", "good"))),
    }
    async with open_host(servers, client_options=MODERN) as host:
        await host.wait_settled()
        found = await host_skills(host)
        assert [s.key for s in found.skills] == [("good", "skill://pdf/SKILL.md")]
        assert "skills[0].frontmatter" in str(found.failed["broken"])
