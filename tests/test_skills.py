"""The Skills extension (SEP-2640), server side and format: skills built from files and
folders (every refusal names its rule), and the answers to ``skills/list``, ``skills/get``
and ``resources/directory/read`` in both eras."""

from __future__ import annotations

import ast
import base64
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML: mkdocs's, in the test extra

import trio_mcp
from trio_mcp import ErrorCode, McpError, Server
from trio_mcp.skills import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SKILLS_EXTENSION,
    DynamicSkill,
    Skill,
    SkillEntry,
    SkillFormatError,
    check_skill_name,
    list_skills,
    load_skill,
    read_frontmatter,
    read_skill_file,
    skill_digest,
    skills_from_directory,
)
from trio_mcp.testing import connect

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def skill_md(name: str, description: str = "Does a thing.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n"


def make(path: str = "demo", **files: str | bytes) -> Skill:
    name = path.rsplit("/", 1)[-1]
    return Skill.from_files(path, {"SKILL.md": skill_md(name), **files})


# -- names and frontmatter -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("", "1 to 64 characters"),
        ("a" * 65, "1 to 64 characters"),
        ("PDF", "only lowercase letters, digits and hyphens"),
        ("pdf_tools", "only lowercase letters, digits and hyphens"),
        ("-pdf", "must not start or end with a hyphen"),
        ("pdf-", "must not start or end with a hyphen"),
        ("pdf--tools", "must not contain two hyphens in a row"),
    ],
)
def test_a_name_against_the_rules_is_refused_naming_the_rule(name: str, rule: str) -> None:
    with pytest.raises(SkillFormatError, match=rule):
        check_skill_name(name)
    if name:
        with pytest.raises(SkillFormatError, match=rule):
            make(f"acme/{name}")  # the path's last segment is the name


def test_names_within_the_rules_pass() -> None:
    for name in ("a", "pdf-processing", "v2", "a" * 64):
        assert check_skill_name(name) == name


def test_the_frontmatter_name_must_be_the_directory_name() -> None:
    with pytest.raises(SkillFormatError, match="must equal the skill's directory name 'demo'"):
        Skill.from_files("demo", {"SKILL.md": skill_md("other")})


def test_the_frontmatter_reads_as_yaml_would() -> None:
    text = (
        "---\n"
        "name: pdf\n"
        "description: 'It''s: quoted'\n"
        'license: "Apache-2.0"\n'
        "draft: false\n"
        "weight: 3\n"
        "ratio: 1.5\n"
        "owner: ~\n"
        "# a comment\n"
        "metadata:\n"
        '  version: "2.1.0"\n'
        "  io.modelcontextprotocol/x: plain words\n"
        "---\n"
        "body\n"
    )
    assert read_frontmatter(text) == {
        "name": "pdf",
        "description": "It's: quoted",
        "license": "Apache-2.0",
        "draft": False,
        "weight": 3,
        "ratio": 1.5,
        "owner": None,
        "metadata": {"version": "2.1.0", "io.modelcontextprotocol/x": "plain words"},
    }


@pytest.mark.parametrize(
    "head",
    [
        "description: |\n  line one\n  line two\nlicense: MIT\n",
        "description: >\n  folded one\n  folded two\n\n  a paragraph\n",
        "description: >-\n  x\n  y\n",
        "description: |+\n  x\n\n\nnext: 1\n",
        "description: |-\n  x\n    deeper\n  back\n",
        "description: |\n\n  after a blank line\n",
        'metadata:\n  a: 1\n  b: "two"\nname: n\n',
        "metadata:\nname: n\n",  # an empty value is null
        "a: 'It''s'\nb: \"tab\\there\"\nc: plain words, with commas\n",
    ],
)
def test_the_frontmatter_reads_as_a_yaml_library_reads_it(head: str) -> None:
    assert read_frontmatter(f"---\n{head}---\n") == yaml.safe_load(head)


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("12", 12),
        ("-007", -7),
        ("0o17", 15),
        ("0x1F", 31),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("yes", "yes"),  # YAML 1.2: a string (not YAML 1.1's boolean)
        ("2024-01-01", "2024-01-01"),  # a string, not a date
        ("TRUE", True),
        ("Null", None),
    ],
)
def test_plain_scalars_read_as_yaml_1_2_core_schema(value: str, read: object) -> None:
    result = read_frontmatter(f"---\nx: {value}\n---\n")["x"]
    assert result == read
    assert type(result) is type(read)


def test_the_agent_skills_optional_fields_are_checked() -> None:
    long = "c" * 501
    with pytest.raises(SkillFormatError, match="compatibility must be a string of 1 to 500"):
        make_with("compatibility: " + long + "\n")
    with pytest.raises(SkillFormatError, match="metadata must be a mapping"):
        make_with("metadata: 1\n")
    with pytest.raises(SkillFormatError, match="has no JSON form"):
        make_with("weight: .inf\n")


def make_with(extra: str) -> Skill:
    return Skill.from_files("demo", {"SKILL.md": skill_md("demo", extra=extra)})


@pytest.mark.parametrize(
    ("head", "what"),
    [
        ("tags:\n  - a\n", "not a 'key: value' line"),
        ("text: &anchor x\n", "value not understood"),
        ("text: [a, b]\n", "value not understood"),
        ("text: a: b\n", "value not understood"),
        ("m:\n  inner:\n    deep: 1\n", "nesting deeper than one level"),
        ("m:\n  a: 1\n   b: 2\n", "inconsistent indentation"),
        ("d: >\n  a\n    b\n", "folded"),
        ("  indented: 1\n", "unexpected indentation"),
        ("name: a\nname: b\n", "appears twice"),
    ],
)
def test_frontmatter_this_reader_does_not_understand_is_refused(head: str, what: str) -> None:
    with pytest.raises(SkillFormatError, match=what):
        read_frontmatter(f"---\n{head}---\n")


def test_a_skill_md_without_frontmatter_or_description_is_refused() -> None:
    with pytest.raises(SkillFormatError, match="must begin with YAML frontmatter"):
        Skill.from_files("demo", {"SKILL.md": "# no frontmatter\n"})
    with pytest.raises(SkillFormatError, match="description must be a string of 1 to 1024"):
        Skill.from_files("demo", {"SKILL.md": "---\nname: demo\n---\n"})
    with pytest.raises(SkillFormatError, match=r"has no SKILL\.md"):
        Skill.from_files("demo", {"README.md": "hi"})


# -- limits and paths ------------------------------------------------------------------------


def test_a_skill_over_the_file_limit_is_refused() -> None:
    files = {f"f{i}.txt": "x" for i in range(MAX_SKILL_FILES)}  # + SKILL.md: 513
    with pytest.raises(SkillFormatError, match="513 files, more than the limit of 512"):
        make(**files)
    del files["f0.txt"]
    assert len(make(**files).files) == MAX_SKILL_FILES


def test_a_skill_over_the_size_limit_is_refused() -> None:
    head = len(skill_md("demo").encode())
    with pytest.raises(SkillFormatError, match="more than the limit of 16777216 bytes"):
        make(**{"big.bin": bytes(MAX_SKILL_BYTES - head + 1)})
    assert make(**{"big.bin": bytes(MAX_SKILL_BYTES - head)}).size == MAX_SKILL_BYTES


def test_the_limits_can_be_lowered() -> None:
    with pytest.raises(SkillFormatError, match="more than the limit of 2 files"):
        Skill.from_files("demo", {"SKILL.md": skill_md("demo"), "a": "", "b": ""}, max_files=2)
    with pytest.raises(SkillFormatError, match="more than the limit of 10 bytes"):
        Skill.from_files("demo", {"SKILL.md": skill_md("demo")}, max_bytes=10)


@pytest.mark.parametrize("path", ["../x.md", "a/../../x.md", "/etc/passwd", "a//b", "a?b"])
def test_file_paths_that_leave_the_skill_are_refused(path: str) -> None:
    with pytest.raises(SkillFormatError, match=re.escape(f"file path {path!r} must be relative")):
        make(**{path: "x"})


# -- folders ----------------------------------------------------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_skills_from_a_directory(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pdf/SKILL.md": skill_md("pdf"),
            "pdf/templates/a.md": "A\n",
            "pdf/.hidden": "left out",
            "acme/billing/refunds/SKILL.md": skill_md("refunds"),
            "acme/billing/refunds/nested/SKILL.md": skill_md("nested"),
            "notes.txt": "not in a skill",
        },
    )
    skills = {s.path: s for s in skills_from_directory(tmp_path)}
    assert set(skills) == {"pdf", "acme/billing/refunds", "acme/billing/refunds/nested"}
    assert [f.path for f in skills["pdf"].files] == ["SKILL.md", "templates/a.md"]
    # A nested skill's files are supporting files of the enclosing one too.
    assert [f.path for f in skills["acme/billing/refunds"].files] == [
        "SKILL.md",
        "nested/SKILL.md",
    ]
    assert skills["pdf"].files[1].digest == skill_digest(b"A\n")
    assert skills["pdf"].files[1].mime_type == "text/markdown"
    prefixed = skills_from_directory(tmp_path / "acme", prefix="team")
    assert {s.uri for s in prefixed} == {
        "skill://team/billing/refunds/SKILL.md",
        "skill://team/billing/refunds/nested/SKILL.md",
    }


def test_a_link_out_of_the_directory_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"skills/pdf/SKILL.md": skill_md("pdf"), "secret.txt": "secret"})
    os.symlink(tmp_path / "secret.txt", tmp_path / "skills" / "pdf" / "leak.txt")
    with pytest.raises(SkillFormatError, match=r"leak\.txt leads outside"):
        skills_from_directory(tmp_path / "skills")


def test_a_folder_over_the_limits_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"pdf/SKILL.md": skill_md("pdf"), "pdf/a.txt": "a" * 100, "pdf/b.txt": "b"})
    with pytest.raises(SkillFormatError, match="3 files, more than the limit of 2"):
        skills_from_directory(tmp_path, max_files=2)
    with pytest.raises(SkillFormatError, match=r"more than the limit of 120 bytes .* 'a\.txt'"):
        skills_from_directory(tmp_path, max_bytes=120)


def test_a_directory_without_skills_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SkillFormatError, match="holds no skill"):
        skills_from_directory(tmp_path)
    write(tmp_path, {"SKILL.md": skill_md("x")})
    with pytest.raises(SkillFormatError, match="is itself a skill"):
        skills_from_directory(tmp_path)


def test_a_folder_whose_name_breaks_the_rules_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"My_Skill/SKILL.md": skill_md("my-skill")})
    with pytest.raises(SkillFormatError, match="only lowercase letters, digits and hyphens"):
        skills_from_directory(tmp_path)


# -- serving ---------------------------------------------------------------------------------


def skills_server(**options: Any) -> Server:
    server = Server("skills", cache_ttl_ms=60_000, cache_scope="private", **options)
    server.add_skills(
        [
            make("pdf", **{"templates/a.md": "A\n", "templates/regional/eu.md": "EU\n"}),
            make("acme/refunds", **{"logo.png": b"\x89PNG\xff"}),
            make("git"),
        ]
    )
    return server


async def test_the_extension_is_declared_with_directory_read() -> None:
    async with connect(skills_server(), protocol_version=MODERN) as client:
        assert client.server_capabilities.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
        assert client.server_capabilities.resources is not None
    server = Server("s")
    server.add_skills(make("pdf"), directory_read=False)
    async with connect(server, protocol_version=MODERN) as client:
        assert client.server_capabilities.extensions == {SKILLS_EXTENSION: {}}
        with pytest.raises(McpError) as error:
            await client.session.send_request("resources/directory/read", {"uri": "skill://pdf"})
        assert error.value.code == ErrorCode.METHOD_NOT_FOUND


async def test_skills_list_pages_whole_entries_with_cache_hints() -> None:
    server = skills_server(page_size=2)
    async with connect(server, protocol_version=MODERN) as client:
        first = await client.session.send_request("skills/list", {})
        assert [s["uri"] for s in first["skills"]] == [
            "skill://pdf/SKILL.md",
            "skill://acme/refunds/SKILL.md",
        ]
        assert first["ttlMs"] == 60_000
        assert first["cacheScope"] == "private"
        second = await client.session.send_request("skills/list", {"cursor": first["nextCursor"]})
        assert [s["uri"] for s in second["skills"]] == ["skill://git/SKILL.md"]
        assert "nextCursor" not in second
        with pytest.raises(McpError) as error:
            await client.session.send_request("skills/list", {"cursor": "nonsense"})
        assert error.value.code == ErrorCode.INVALID_PARAMS


async def test_every_listed_digest_and_size_is_that_of_the_bytes_served() -> None:
    async with connect(skills_server(), protocol_version=MODERN) as client:
        listing = await client.session.send_request("skills/list", {})
        for entry in listing["skills"]:
            assert entry["resources"][0]["uri"] == entry["uri"]  # SKILL.md first
            for item in entry["resources"]:
                content = (await client.read_resource(item["uri"])).contents[0]
                raw = (
                    content.text.encode()
                    if hasattr(content, "text")
                    else base64.b64decode(content.blob)
                )
                assert (len(raw), skill_digest(raw)) == (item["size"], item["digest"])
        resources = {r.uri: r for r in await client.list_resources()}
        manifest = resources["skill://pdf/SKILL.md"]
        assert (manifest.name, manifest.description) == ("pdf", "Does a thing.")


async def test_skills_get_answers_for_every_skill_and_refuses_others() -> None:
    async with connect(skills_server(), protocol_version=MODERN) as client:
        got = await client.session.send_request("skills/get", {"uri": "skill://git/SKILL.md"})
        assert got["skill"]["frontmatter"] == {"name": "git", "description": "Does a thing."}
        assert (got["ttlMs"], got["cacheScope"], got["resultType"]) == (
            60_000,
            "private",
            "complete",
        )
        for params in ({"uri": "skill://nope/SKILL.md"}, {"uri": 5}, {}):
            with pytest.raises(McpError) as error:
                await client.session.send_request("skills/get", params)
            assert error.value.code == ErrorCode.INVALID_PARAMS


async def test_directory_reads_list_direct_children() -> None:
    async with connect(skills_server(page_size=1), protocol_version=MODERN) as client:

        async def children(uri: str) -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = []
            params: dict[str, Any] = {"uri": uri}
            while True:
                page = await client.session.send_request("resources/directory/read", params)
                found += page["resources"]
                if "nextCursor" not in page:
                    return found
                params = {"uri": uri, "cursor": page["nextCursor"]}

        assert await children("skill://pdf/templates") == [
            {
                "uri": "skill://pdf/templates/a.md",
                "name": "a.md",
                "mimeType": "text/markdown",
                "size": 2,
            },
            {
                "uri": "skill://pdf/templates/regional",
                "name": "regional",
                "mimeType": "inode/directory",
            },
        ]
        assert [c["uri"] for c in await children("skill://acme")] == ["skill://acme/refunds"]
        assert [c["name"] for c in await children("skill://acme/refunds")] == [
            "SKILL.md",
            "logo.png",
        ]
        for uri, message in [
            ("skill://pdf/SKILL.md", "is not a directory resource"),
            ("skill://pdf/missing", "No directory resource"),
            ("skill://pdf/", "No directory resource"),  # no trailing slash
        ]:
            with pytest.raises(McpError, match=message) as error:
                await client.session.send_request("resources/directory/read", {"uri": uri})
            assert error.value.code == ErrorCode.INVALID_PARAMS


def test_a_skill_is_served_once() -> None:
    server = skills_server()
    with pytest.raises(ValueError, match=re.escape("served at skill://pdf/SKILL.md already")):
        server.add_skills(make("pdf"))
    mine = server.resource("skill://mine/SKILL.md")(lambda: "mine")
    with pytest.raises(ValueError, match=re.escape("skill://mine/SKILL.md is a resource")):
        server.add_skills(make("mine"))
    assert server.resources["skill://mine/SKILL.md"].fn is mine  # left alone
    with pytest.raises(ValueError, match="directory_read was set"):
        server.add_skills(make("other"), directory_read=False)


async def test_a_nested_skill_may_be_added_after_its_enclosing_one() -> None:
    server = Server("s")
    server.add_skills(make("outer", **{"inner/SKILL.md": skill_md("inner")}))
    server.add_skills(make("outer/inner"))
    async with connect(server, protocol_version=MODERN) as client:
        listing = await client.session.send_request("skills/list", {})
        assert [s["uri"] for s in listing["skills"]] == [
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
        ]
        outer = listing["skills"][0]["resources"]
        assert [r["uri"] for r in outer] == [
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
        ]


async def test_in_the_initialize_era_skill_files_are_plain_resources() -> None:
    # The extension is defined from 2026-07-28: an older peer is not told of it, and reads
    # the files as ordinary resources.
    async with connect(skills_server(), protocol_version=LEGACY) as client:
        assert client.server_capabilities.extensions is None
        text = (await client.read_resource("skill://git/SKILL.md")).contents[0]
        assert text.text == skill_md("git")  # type: ignore[union-attr]
        listing = await client.session.send_request("skills/list", {})
        assert "ttlMs" not in listing  # no cache hints before 2026-07-28


async def test_the_everything_server_shows_a_skill() -> None:
    from trio_mcp._everything_server import server as everything

    async with connect(everything, protocol_version=MODERN) as client:
        (entry,) = await list_skills(client)
        assert (entry.uri, entry.name) == ("skill://greeting/SKILL.md", "greeting")
        assert "greetings://{language}/{name}" in await load_skill(client, entry)
        languages = "skill://greeting/languages.md"
        assert await read_skill_file(client, entry, languages) == b"en, fr\n"


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("_format", ("_server", "_client", "_host", "_session", "trio")),
        ("_catalog", ("_server", "_client", "_host", "_session", "trio")),
        ("_serving", ("_client", "_host")),
        ("_fetching", ("_server", "_host")),
        ("_hosting", ("_server",)),
    ],
)
def test_each_side_of_the_extension_imports_only_its_own(
    module: str, forbidden: tuple[str, ...]
) -> None:
    # As tests/test_architecture.py does for the layers: the server's half never loads the
    # client, the client's never the server, and the format is pure (no Trio).
    path = Path(trio_mcp.__file__).parent / "_skills" / f"{module}.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            assert top not in forbidden, f"_skills/{module}.py imports {node.module}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] not in forbidden, alias.name


BAD_PARAMS = [{"uri": None}, {"uri": ["skill://pdf"]}, {"uri": "skill://pdf", "cursor": 3}, {}]


@pytest.mark.parametrize(
    ("method", "params"),
    [("skills/get", p) for p in BAD_PARAMS]
    + [("resources/directory/read", p) for p in BAD_PARAMS]
    + [("skills/list", {"cursor": 3}), ("skills/list", {"cursor": "not ours"})],
)
async def test_bad_params_get_invalid_params_and_the_session_goes_on(
    method: str, params: dict[str, Any]
) -> None:
    async with connect(skills_server(), protocol_version=MODERN) as client:
        with pytest.raises(McpError) as error:
            await client.session.send_request(method, params)
        assert error.value.code == ErrorCode.INVALID_PARAMS
        assert (await client.session.send_request("skills/list", {}))["skills"]


# -- dynamic skills ----------------------------------------------------------------------------


def report_skill(manifest: str | None = None) -> DynamicSkill:
    reads = {"n": 0}

    async def today() -> str:
        reads["n"] += 1
        return f"# Report {reads['n']}\n"

    return DynamicSkill.from_readers(
        "acme/daily",
        {"name": "daily", "description": "Today's report."},
        {
            "SKILL.md": lambda: (
                manifest
                or "---\nname: daily\ndescription: Today's report.\n---\nRead data/today.md.\n"
            ),
            "data/today.md": today,
        },
    )


async def test_a_dynamic_skill_is_generated_on_each_read() -> None:
    server = Server("s")
    server.add_skills(report_skill())
    async with connect(server, protocol_version=MODERN) as client:
        (entry,) = (await client.session.send_request("skills/list", {}))["skills"]
        assert entry == {
            "uri": "skill://acme/daily/SKILL.md",
            "frontmatter": {"name": "daily", "description": "Today's report."},
            "resources": "dynamic",
        }
        first = await client.session.send_request(
            "resources/read", {"uri": "skill://acme/daily/data/today.md"}
        )
        second = await client.session.send_request(
            "resources/read", {"uri": "skill://acme/daily/data/today.md"}
        )
        assert [first.contents[0].text, second.contents[0].text] == [
            "# Report 1\n",
            "# Report 2\n",
        ]
        listed = await client.session.send_request(
            "resources/directory/read", {"uri": "skill://acme/daily/data"}
        )
        assert listed["resources"] == [
            {
                "uri": "skill://acme/daily/data/today.md",
                "name": "today.md",
                "mimeType": "text/markdown",
            }
        ]
        parsed = SkillEntry.from_wire(entry)
        assert "Read data/today.md." in await load_skill(client, parsed, allow_dynamic=True)


async def test_a_dynamic_skill_md_without_its_frontmatter_is_not_served() -> None:
    server = Server("s")
    server.add_skills(report_skill("---\nname: daily\ndescription: Something else.\n---\n"))
    async with connect(server, protocol_version=MODERN) as client:
        with pytest.raises(McpError, match="does not carry the skill's frontmatter") as error:
            await client.read_resource("skill://acme/daily/SKILL.md")
        assert error.value.code == ErrorCode.INTERNAL_ERROR


def test_a_dynamic_skill_is_checked_as_a_static_one() -> None:
    with pytest.raises(SkillFormatError, match="must equal the skill's directory name"):
        DynamicSkill.from_readers("x", {"name": "y", "description": "d"}, {"SKILL.md": str})
    with pytest.raises(SkillFormatError, match=r"has no SKILL\.md reader"):
        DynamicSkill.from_readers("x", {"name": "x", "description": "d"}, {"a.md": str})
    with pytest.raises(SkillFormatError, match="more than the limit of 1 files"):
        DynamicSkill.from_readers(
            "x", {"name": "x", "description": "d"}, {"SKILL.md": str, "a": str}, max_files=1
        )
