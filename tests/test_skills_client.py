"""The Skills extension (SEP-2640), client side: entries are listed and fetched without
reading a file, and every file is verified against the entry before use (size, digest,
frontmatter, listed at all); each mismatch is an error that names the file."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from trio.testing import assert_checkpoints

from trio_mcp import Context, ErrorCode, McpError, ProtocolError, Server
from trio_mcp.skills import (
    SKILLS_EXTENSION,
    Skill,
    SkillEntry,
    SkillVerificationError,
    get_skill,
    list_skills,
    load_skill,
    read_skill_file,
    skill_digest,
)
from trio_mcp.testing import connect

MODERN = "2026-07-28"
URI = "skill://pdf/SKILL.md"
GUIDE = "skill://pdf/guide.md"
SKILL_MD = "---\nname: pdf\ndescription: Work with PDFs.\nversion: 2\n---\n\n# PDF\n"
GUIDE_MD = "# Guide\n"


def entry_for(files: dict[str, str], **changes: Any) -> dict[str, Any]:
    """The honest entry of ``files`` (URI -> text), with ``changes`` applied."""
    entry = {
        "uri": URI,
        "frontmatter": {"name": "pdf", "description": "Work with PDFs.", "version": 2},
        "resources": [
            {"uri": uri, "digest": skill_digest(text.encode()), "size": len(text.encode())}
            for uri, text in files.items()
        ],
    }
    return entry | changes


def hand_made(
    served: dict[str, str], entries: list[dict[str, Any]], reads: list[str] | None = None
) -> Server:
    """A server that declares the extension and answers with ``entries`` as they are,
    serving ``served`` (URI -> text); each read is recorded in ``reads``."""
    server = Server("hand-made", extensions={SKILLS_EXTENSION: {}}, resources=True)

    def reader(uri: str, text: str) -> Callable[[], str]:
        def read() -> str:
            if reads is not None:
                reads.append(uri)
            return text

        return read

    for uri, text in served.items():
        server.resource(uri, mime_type="text/markdown")(reader(uri, text))

    @server.method("skills/list")
    async def list_(ctx: Context, params: Any) -> dict[str, Any]:
        return {"skills": entries, "ttlMs": 0, "cacheScope": "public"}

    @server.method("skills/get")
    async def get(ctx: Context, params: Any) -> dict[str, Any]:
        for entry in entries:
            if entry["uri"] == params["uri"]:
                return {"skill": entry, "ttlMs": 0, "cacheScope": "public"}
        raise McpError("No skill", code=ErrorCode.INVALID_PARAMS)

    return server


FILES = {URI: SKILL_MD, GUIDE: GUIDE_MD}


async def test_listing_and_getting_read_no_file() -> None:
    reads: list[str] = []
    server = hand_made(FILES, [entry_for(FILES)], reads)
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        assert (entry.name, entry.description, entry.size) == (
            "pdf",
            "Work with PDFs.",
            len(SKILL_MD) + len(GUIDE_MD),
        )
        assert await get_skill(client, URI) == entry
        assert reads == []
        assert await load_skill(client, entry) == SKILL_MD
        assert reads == [URI]  # SKILL.md alone, when loaded
        assert await read_skill_file(client, entry, GUIDE) == GUIDE_MD.encode()
        assert reads == [URI, GUIDE]
        with pytest.raises(McpError) as error:
            await get_skill(client, "skill://other/SKILL.md")
        assert error.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize(
    ("served", "reason"),
    [
        # same size, other bytes: the digest catches it
        ({URI: SKILL_MD.replace("PDF", "FDP"), GUIDE: GUIDE_MD}, "digest sha256:"),
        (
            {URI: SKILL_MD + "more\n", GUIDE: GUIDE_MD},
            f"{len(SKILL_MD) + 5} bytes read, the entry lists {len(SKILL_MD)}",
        ),
    ],
)
async def test_a_skill_md_that_differs_from_its_entry_is_refused(
    served: dict[str, str], reason: str
) -> None:
    server = hand_made(served, [entry_for(FILES)])
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        with pytest.raises(SkillVerificationError, match=re.escape(f"{URI}: {reason}")) as error:
            await load_skill(client, entry)
        assert error.value.uri == URI


async def test_a_supporting_file_that_differs_is_refused_naming_it() -> None:
    served = {URI: SKILL_MD, GUIDE: "# Ignore the guide\n"}
    server = hand_made(served, [entry_for(FILES)])
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        await load_skill(client, entry)
        with pytest.raises(SkillVerificationError, match=re.escape(GUIDE)) as error:
            await read_skill_file(client, entry, GUIDE)
        assert error.value.uri == GUIDE


@pytest.mark.parametrize(
    ("frontmatter", "field"),
    [
        ({"name": "pdf", "description": "Other words.", "version": 2}, "description"),
        ({"name": "pdf", "description": "Work with PDFs."}, "version"),
        ({"name": "pdf", "description": "Work with PDFs.", "version": "2"}, "version"),
        ({"name": "pdf", "description": "Work with PDFs.", "version": True}, "version"),
    ],
)
async def test_a_frontmatter_that_differs_from_the_entry_is_refused(
    frontmatter: dict[str, Any], field: str
) -> None:
    server = hand_made(FILES, [entry_for(FILES, frontmatter=frontmatter)])
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        with pytest.raises(SkillVerificationError, match=f"the frontmatter's '{field}' differs"):
            await load_skill(client, entry)


async def test_numbers_compare_as_json_numbers() -> None:
    # A server in another language may write 2.0 as 2: one number either way.
    frontmatter = {"name": "pdf", "description": "Work with PDFs.", "version": 2.0}
    server = hand_made(FILES, [entry_for(FILES, frontmatter=frontmatter)])
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        assert await load_skill(client, entry) == SKILL_MD


async def test_an_unlisted_file_is_refused_without_reading_it() -> None:
    reads: list[str] = []
    served = {**FILES, "skill://pdf/new.md": "added later\n"}
    server = hand_made(served, [entry_for(FILES)], reads)
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        with pytest.raises(SkillVerificationError, match="not listed in the skill's entry"):
            await read_skill_file(client, entry, "skill://pdf/new.md")
        assert reads == []


async def test_an_entry_over_the_limits_is_refused_before_any_read() -> None:
    reads: list[str] = []
    many = entry_for(FILES)
    many["resources"] = many["resources"] * 257  # 514 entries
    big = entry_for(FILES)
    big["resources"][1]["size"] = 16 * 1024 * 1024
    for listed, reason in [
        (many, "514 files, more than the limit of 512"),
        (big, "more than the limit of 16777216"),
    ]:
        server = hand_made(FILES, [listed], reads)
        async with connect(server, protocol_version=MODERN) as client:
            (entry,) = await list_skills(client)
            with pytest.raises(SkillVerificationError, match=reason):
                await load_skill(client, entry)
            # A host may accept more than the SEP's limits.
            if listed is many:
                assert await load_skill(client, entry, max_files=600) == SKILL_MD
    assert reads == [URI]


async def test_a_dynamic_skill_is_refused_unless_allowed() -> None:
    server = hand_made(FILES, [entry_for(FILES, resources="dynamic")])
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        assert entry.resources == "dynamic"
        with pytest.raises(SkillVerificationError, match="dynamic"):
            await load_skill(client, entry)
        assert await load_skill(client, entry, allow_dynamic=True) == SKILL_MD


async def test_a_uri_that_does_not_end_in_the_name_is_refused() -> None:
    entry = entry_for(FILES, frontmatter={"name": "other", "description": "x", "version": 2})
    async with connect(hand_made(FILES, [entry]), protocol_version=MODERN) as client:
        (listed,) = await list_skills(client)
        with pytest.raises(SkillVerificationError, match="does not end in the skill's name"):
            await load_skill(client, listed)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"resources": None}, "skills[0].resources"),
        ({"resources": "static"}, "skills[0].resources"),
        ({"frontmatter": {"name": "pdf"}}, "skills[0].frontmatter.description"),
        ({"uri": 3}, "skills[0].uri"),
        ({"resources": [{"uri": URI, "digest": "md5:00", "size": 1}]}, "resources[0].digest"),
        (
            {"resources": [{"uri": URI, "digest": skill_digest(b""), "size": -1}]},
            "resources[0].size",
        ),
    ],
)
async def test_a_malformed_entry_is_a_protocol_error_naming_the_field(
    change: dict[str, Any], field: str
) -> None:
    async with connect(
        hand_made(FILES, [entry_for(FILES, **change)]), protocol_version=MODERN
    ) as client:
        with pytest.raises(ProtocolError, match=re.escape(field)):
            await list_skills(client)


async def test_a_listing_past_the_limit_or_looping_is_refused() -> None:
    server = hand_made(FILES, [entry_for(FILES)] * 3)
    async with connect(server, protocol_version=MODERN) as client:
        with pytest.raises(ProtocolError, match="more than 2 skills listed"):
            await list_skills(client, limit=2)
    looping = hand_made(FILES, [])

    @looping.method("skills/list")
    async def again(ctx: Context, params: Any) -> dict[str, Any]:
        return {"skills": [], "nextCursor": "same", "ttlMs": 0, "cacheScope": "public"}

    async with connect(looping, protocol_version=MODERN) as client:
        with pytest.raises(ProtocolError, match="repeated cursor"):
            await list_skills(client)


async def test_a_server_without_the_extension_is_not_asked() -> None:
    server = Server("plain", resources=True)
    for version in (MODERN, "2025-11-25"):
        async with connect(server, protocol_version=version) as client:
            with pytest.raises(
                McpError, match=r"does not declare the io\.modelcontextprotocol/skills"
            ) as error:
                await list_skills(client)
            assert error.value.code == ErrorCode.METHOD_NOT_FOUND


async def test_our_server_and_client_agree() -> None:
    # Every file of every skill our server serves verifies, blobs included.
    server = Server("ours")
    server.add_skills(
        Skill.from_files(
            "pdf",
            {
                "SKILL.md": '---\nname: pdf\ndescription: "Quoted: yes"\nmetadata:\n  v: 1\n---\n',
                "logo.png": b"\x89PNG\x00\xff",
            },
        )
    )
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        assert isinstance(entry, SkillEntry)
        await load_skill(client, entry)
        assert await read_skill_file(client, entry, "skill://pdf/logo.png") == b"\x89PNG\x00\xff"


async def test_every_refusal_is_a_checkpoint() -> None:
    # Refused before any request is sent, each call still checkpoints (Trio's rule).
    many = entry_for(FILES)
    many["resources"] = many["resources"] * 257
    server = hand_made(FILES, [many])
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        with assert_checkpoints(), pytest.raises(SkillVerificationError):
            await load_skill(client, entry)
        with assert_checkpoints(), pytest.raises(SkillVerificationError):
            await read_skill_file(client, entry, "skill://pdf/unlisted.md")
    async with connect(Server("plain", resources=True), protocol_version=MODERN) as client:
        with assert_checkpoints(), pytest.raises(McpError):
            await list_skills(client)
        with assert_checkpoints(), pytest.raises(McpError):
            await get_skill(client, URI)
