"""Resources, in both eras: static ones, templates with typed variables, text and binary
contents, annotations, not-found codes per revision, and directories that never leak."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any, Literal

import pytest
from feature_harness import ALL_VERSIONS, ERAS, MODERN, open_pair

from trio_mcp import Context, ErrorCode, McpError, Server
from trio_mcp.types import (
    Annotations,
    BlobResourceContents,
    Icon,
    TextResourceContents,
)


@pytest.fixture(params=ERAS)
def version(request: pytest.FixtureRequest) -> str:
    """Every test that takes ``version`` runs in both eras."""
    return request.param  # type: ignore[no-any-return]


class Shape(enum.Enum):
    CIRCLE = "circle"
    SQUARE = "square"


def make_server() -> Server:
    server = Server("r", cache_ttl_ms=1000)

    @server.resource(
        "config://app",
        title="App config",
        description="The configuration",
        mime_type="application/toml",
        size=12,
        annotations=Annotations(
            audience=["user", "assistant"], priority=0.8, last_modified="2025-01-12T15:00:58Z"
        ),
        icons=[Icon(src="https://example.com/cfg.png")],
        meta={"com.example/owner": "ops"},
    )
    def config() -> str:
        return "debug = true\n"

    @server.resource("image://logo", mime_type="image/png", ttl_ms=60_000)
    async def logo() -> bytes:
        return b"\x89PNG"

    @server.resource("data://stats")
    async def stats() -> dict[str, int]:
        return {"users": 3}

    @server.resource("multi://both")
    def both() -> list[Any]:
        return [
            TextResourceContents(uri="multi://both/a", text="A"),
            BlobResourceContents.from_bytes("multi://both/b", b"B"),
        ]

    @server.resource("users://{user_id}/orders/{page}", mime_type="text/plain")
    def orders(user_id: str, page: int, ctx: Context) -> str:
        return f"{user_id} page {page} ({type(page).__name__}) via {ctx.method}"

    @server.resource("shapes://{shape}/{scale}{?filled}")
    def shape(shape: Shape, scale: float, filled: bool = False) -> str:
        return f"{shape.value} x{scale} filled={filled}"

    @server.resource("lang://{code}")
    def language(code: Literal["en", "fr"]) -> str:
        return {"en": "English", "fr": "French"}[code]

    @server.resource("tree://root{/path*}")
    def tree(path: list[str]) -> str:
        return "/".join(path) or "(root)"

    @server.resource("broken://thing")
    def broken() -> str:
        raise RuntimeError("database down")

    return server


async def test_listing_resources_and_templates(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        resources = {r.uri: r for r in await pair.client.list_resources()}
        templates = [t.uri_template for t in await pair.client.list_resource_templates()]
    config = resources["config://app"]
    assert config.name == "config"
    assert config.title == "App config"
    assert config.description == "The configuration"
    assert config.mime_type == "application/toml"
    assert config.size == 12
    assert config.annotations == Annotations(
        audience=["user", "assistant"], priority=0.8, last_modified="2025-01-12T15:00:58Z"
    )
    assert config.icons == [Icon(src="https://example.com/cfg.png")]
    assert config.meta == {"com.example/owner": "ops"}
    assert list(resources) == [
        "config://app",
        "image://logo",
        "data://stats",
        "multi://both",
        "broken://thing",
    ]
    assert templates == [
        "users://{user_id}/orders/{page}",
        "shapes://{shape}/{scale}{?filled}",
        "lang://{code}",
        "tree://root{/path*}",
    ]


async def test_reading_text_binary_json_and_several_contents(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        text = await pair.client.read_resource("config://app")
        blob = await pair.client.read_resource("image://logo")
        data = await pair.client.read_resource("data://stats")
        multi = await pair.client.read_resource("multi://both")
    assert text.contents == [
        TextResourceContents(
            uri="config://app", text="debug = true\n", mime_type="application/toml"
        )
    ]
    (logo,) = blob.contents
    assert isinstance(logo, BlobResourceContents)
    assert logo.decode() == b"\x89PNG"
    assert logo.mime_type == "image/png"
    assert data.contents == [
        TextResourceContents(uri="data://stats", text='{"users":3}', mime_type="application/json")
    ]
    assert [type(c).__name__ for c in multi.contents] == [
        "TextResourceContents",
        "BlobResourceContents",
    ]
    if version == MODERN:
        assert (text.ttl_ms, text.cache_scope) == (1000, "public")
        assert blob.ttl_ms == 60_000
    else:
        assert text.ttl_ms is None
        assert text.cache_scope is None


async def test_templates_convert_variables_to_their_types(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        orders = await pair.client.read_resource("users://ann/orders/2")
        shape = await pair.client.read_resource("shapes://circle/1.5?filled=true")
        default = await pair.client.read_resource("shapes://square/2")
        tree = await pair.client.read_resource("tree://root/a/b%20c")
        root = await pair.client.read_resource("tree://root")
        with pytest.raises(McpError) as bad_int:
            await pair.client.read_resource("users://ann/orders/two")
        with pytest.raises(McpError) as bad_enum:
            await pair.client.read_resource("shapes://hexagon/1")
        french = await pair.client.read_resource("lang://fr")
        with pytest.raises(McpError) as bad_literal:
            await pair.client.read_resource("lang://de")
    assert orders.contents == [
        TextResourceContents(
            uri="users://ann/orders/2",
            text="ann page 2 (int) via resources/read",
            mime_type="text/plain",
        )
    ]
    assert shape.contents[0].text == "circle x1.5 filled=True"  # type: ignore[union-attr]
    assert default.contents[0].text == "square x2.0 filled=False"  # type: ignore[union-attr]
    assert tree.contents[0].text == "a/b c"  # type: ignore[union-attr]
    assert root.contents[0].text == "(root)"  # type: ignore[union-attr]
    assert french.contents[0].text == "French"  # type: ignore[union-attr]
    for info in (bad_int, bad_enum, bad_literal):
        assert info.value.code == ErrorCode.INVALID_PARAMS


def test_a_resource_without_its_uri_is_a_clear_error() -> None:
    server = Server("t")
    with pytest.raises(TypeError, match=r"use @server.resource\('uri'\)"):

        @server.resource  # type: ignore[arg-type]
        def doc() -> str:
            return "text"

    assert server.resources == {}


@pytest.mark.parametrize("decorator", ["method", "on_notification"])
def test_a_custom_method_without_its_name_is_a_clear_error(decorator: str) -> None:
    server = Server("t")

    async def handler(*args: Any) -> dict[str, Any]:
        return {}

    with pytest.raises(TypeError, match=rf"use @server.{decorator}\('vendor/method'\)"):
        getattr(server, decorator)(handler)


def test_template_functions_must_take_the_variables() -> None:
    server = Server("r")
    with pytest.raises(TypeError, match="'page'"):

        @server.resource("x://{id}/{page}")
        def missing(id: str) -> str:
            return id

    with pytest.raises(TypeError, match="'extra'"):

        @server.resource("x://{id}")
        def extra(id: str, extra: str) -> str:
            return id


@pytest.mark.parametrize("revision", ALL_VERSIONS)
async def test_not_found_code_follows_the_revision(revision: str) -> None:
    async with open_pair(make_server(), protocol_version=revision) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.read_resource("config://nope")
    expected = ErrorCode.INVALID_PARAMS if revision == MODERN else ErrorCode.RESOURCE_NOT_FOUND
    assert info.value.code == expected
    assert info.value.data == {"uri": "config://nope"}


async def test_a_failing_reader_is_an_internal_error(version: str) -> None:
    async with open_pair(make_server(), protocol_version=version) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.read_resource("broken://thing")
        assert (await pair.client.read_resource("config://app")).contents
    assert info.value.code == ErrorCode.INTERNAL_ERROR


async def test_resources_can_be_added_and_removed(version: str) -> None:
    server = make_server()
    async with open_pair(server, protocol_version=version, cache=False) as pair:
        server.remove_resource("config://app")
        server.remove_resource_template("tree://root{/path*}")
        uris = [r.uri for r in await pair.client.list_resources()]
        templates = [t.uri_template for t in await pair.client.list_resource_templates()]
        with pytest.raises(McpError):
            await pair.client.read_resource("config://app")
        with pytest.raises(McpError):
            await pair.client.read_resource("tree://root/a")
    assert "config://app" not in uris
    assert "tree://root{/path*}" not in templates
    with pytest.raises(KeyError):
        server.remove_resource_template("tree://root{/path*}")


@pytest.mark.parametrize("revision", ALL_VERSIONS)
async def test_fields_newer_than_the_revision_are_left_out(revision: str) -> None:
    async with open_pair(make_server(), protocol_version=revision) as pair:
        (config, *_) = await pair.client.list_resources()
    assert (config.title is not None) == (revision >= "2025-06-18")
    assert (config.icons is not None) == (revision >= "2025-11-25")
    assert config.annotations is not None
    assert (config.annotations.last_modified is not None) == (revision >= "2025-06-18")


# -- directories -----------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "readme.md").write_text("# hello\n")
    (root / "data.bin").write_bytes(bytes(range(8)))
    (root / "notes.txt").write_text("a note")
    (root / "big.txt").write_text("x" * 100)
    (tmp_path / "secret.txt").write_text("do not read")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    (root / "escape_dir").symlink_to(tmp_path)
    (root / "inside").symlink_to(root / "notes.txt")
    return root


async def test_directory_lists_and_reads_files(version: str, tree: Path) -> None:
    server = Server("d")
    server.add_directory(tree, max_bytes=50)
    prefix = tree.as_uri() + "/"
    async with open_pair(server, protocol_version=version) as pair:
        listed = {r.name: r for r in await pair.client.list_resources()}
        readme = await pair.client.read_resource(prefix + "docs/readme.md")
        data = await pair.client.read_resource(prefix + "data.bin")
        linked = await pair.client.read_resource(prefix + "inside")
        with pytest.raises(McpError) as too_big:
            await pair.client.read_resource(prefix + "big.txt")
    assert sorted(listed) == ["big.txt", "data.bin", "docs/readme.md", "inside", "notes.txt"]
    assert "escape" not in listed
    assert listed["docs/readme.md"].mime_type == "text/markdown"
    assert listed["notes.txt"].size == 6
    assert readme.contents == [
        TextResourceContents(
            uri=prefix + "docs/readme.md", text="# hello\n", mime_type="text/markdown"
        )
    ]
    (blob,) = data.contents
    assert isinstance(blob, BlobResourceContents)
    assert blob.decode() == bytes(range(8))
    assert linked.contents[0].text == "a note"  # type: ignore[union-attr]
    assert too_big.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "docs/../../secret.txt",
        "%2e%2e/secret.txt",
        "%2E%2E%2Fsecret.txt",
        "docs%2F..%2F..%2Fsecret.txt",
        "..%5Csecret.txt",
        "escape",
        "escape_dir/secret.txt",
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "notes.txt%00.png",
        "",
        "docs",
        "docs/",
        "missing.txt",
    ],
)
async def test_directory_never_serves_anything_outside_its_root(
    version: str, tree: Path, path: str
) -> None:
    server = Server("d")
    server.add_directory(tree)
    uri = tree.as_uri() + "/" + path
    async with open_pair(server, protocol_version=version) as pair:
        with pytest.raises(McpError) as info:
            await pair.client.read_resource(uri)
    assert info.value.code in (ErrorCode.INVALID_PARAMS, ErrorCode.RESOURCE_NOT_FOUND)
    assert "do not read" not in str(info.value)


async def test_directory_with_a_custom_prefix(version: str, tree: Path) -> None:
    server = Server("d")
    server.add_directory(tree, uri_prefix="docs://project/")
    async with open_pair(server, protocol_version=version) as pair:
        notes = await pair.client.read_resource("docs://project/notes.txt")
        with pytest.raises(McpError):
            await pair.client.read_resource(tree.as_uri() + "/notes.txt")
        with pytest.raises(McpError):
            await pair.client.read_resource("docs://project/../secret.txt")
        with pytest.raises(McpError):
            await pair.client.read_resource("docs://projectX/notes.txt")
    assert notes.contents[0].text == "a note"  # type: ignore[union-attr]


def test_directory_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Server("d").add_directory(tmp_path / "nope")
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        Server("d").add_directory(tmp_path / "file")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A source tree with secrets next to the code."""
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "tool.py").write_text("print('tool')\n")
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    (root / ".env").write_text("API_KEY=hunter2\n")
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".hidden.py").write_text("secret = 1\n")
    (root / "notes.txt").write_text("not code\n")
    (root / "innocent.py").symlink_to(root / ".env")
    return root


async def _read_or_error(pair: Any, uri: str) -> Any:
    try:
        return await pair.client.read_resource(uri)
    except McpError as exc:
        return exc


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        "%2Eenv",
        ".git/config",
        ".git%2Fconfig",
        "pkg/../.env",
        "./tool.py",
        "pkg//mod.py",
        ".hidden.py",
        "innocent.py",
        "notes.txt",
        "pkg/mod.py",
    ],
)
async def test_directory_serves_only_what_its_pattern_matches(
    version: str, project: Path, path: str
) -> None:
    """A file the pattern excludes, a dotfile, or a link onto one is not found, exactly like
    a missing file (same code, same message shape, nothing of the file in it)."""
    server = Server("d")
    server.add_directory(project, uri_prefix="src://", pattern="*.py")
    async with open_pair(server, protocol_version=version) as pair:
        listed = [r.name for r in await pair.client.list_resources()]
        tool = await pair.client.read_resource("src://tool.py")
        refused = await _read_or_error(pair, "src://" + path)
        missing = await _read_or_error(pair, "src://missing.py")
    assert listed == ["tool.py"]
    assert tool.contents[0].text == "print('tool')\n"  # type: ignore[union-attr]
    assert isinstance(refused, McpError)
    assert isinstance(missing, McpError)
    assert refused.code == missing.code
    assert str(refused) == str(missing).replace("missing.py", path)
    assert refused.data == {"uri": "src://" + path}
    assert "hunter2" not in str(refused)


async def test_directory_recursive_pattern_and_hidden_files_by_choice(
    version: str, project: Path
) -> None:
    server = Server("d")
    server.add_directory(project, uri_prefix="all://", pattern="**/*.py")
    server.add_directory(project, uri_prefix="dot://", include_hidden=True)
    async with open_pair(server, protocol_version=version) as pair:
        listed = sorted(r.uri for r in await pair.client.list_resources())
        module = await pair.client.read_resource("all://pkg/mod.py")
        env = await pair.client.read_resource("dot://.env")
        git = await pair.client.read_resource("dot://.git/config")
        with pytest.raises(McpError):
            await pair.client.read_resource("all://.env")
        with pytest.raises(McpError):
            await pair.client.read_resource("all://notes.txt")
    assert [u for u in listed if u.startswith("all://")] == ["all://pkg/mod.py", "all://tool.py"]
    assert [u for u in listed if u.startswith("dot://")] == [
        "dot://.env",
        "dot://.git/config",
        "dot://.hidden.py",
        "dot://innocent.py",
        "dot://notes.txt",
        "dot://pkg/mod.py",
        "dot://tool.py",
    ]
    assert module.contents[0].text == "x = 1\n"  # type: ignore[union-attr]
    assert env.contents[0].text == "API_KEY=hunter2\n"  # type: ignore[union-attr]
    assert git.contents[0].text == "[core]\n"  # type: ignore[union-attr]


async def test_directory_filesystem_work_runs_in_a_worker_thread(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from trio_mcp.server import DirectoryResources

    directory = DirectoryResources(project, uri_prefix="src://", pattern="*.py")
    threads: list[threading.Thread] = []
    path_for = DirectoryResources.path_for

    def recording(self: DirectoryResources, uri: str) -> Path | None:
        threads.append(threading.current_thread())
        return path_for(self, uri)

    monkeypatch.setattr(DirectoryResources, "path_for", recording)
    contents = await directory.read("src://tool.py")
    listed = await directory.list_resources_async()
    assert contents is not None
    assert [r.name for r in listed] == ["tool.py"]
    assert threads
    assert threading.main_thread() not in threads


async def test_listing_a_directory_over_the_protocol_walks_it_in_a_worker_thread(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """resources/list must not walk the tree on the event loop: a big directory would
    freeze every other request meanwhile."""
    import threading

    from trio_mcp.server import DirectoryResources

    threads: list[threading.Thread] = []
    list_resources = DirectoryResources.list_resources

    def recording(self: DirectoryResources) -> Any:
        threads.append(threading.current_thread())
        return list_resources(self)

    monkeypatch.setattr(DirectoryResources, "list_resources", recording)
    server = Server("d")
    server.add_directory(tree)
    async with open_pair(server, protocol_version=MODERN, cache=False) as pair:
        listed = await pair.client.list_resources()
    assert "notes.txt" in {r.name for r in listed}
    assert threads
    assert threading.main_thread() not in threads
