"""The file token store against a local attacker: planted links, shared directories,
token files others can read, files that belong to someone else (issue 21, failure 7).

Each attack here worked on the store before it checked its directory and files: a link
planted at the temporary name was written through, a 0777 directory and a 0666 token
file were used as they were.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import pytest
import trio
from auth_world import MCP, World, callback_handler

from trio_mcp import McpError
from trio_mcp.auth import (
    AuthorizationCode,
    AuthorizationError,
    FileTokenStore,
    InsecureTokenStore,
    OAuth,
    TokenKey,
    Tokens,
)
from trio_mcp.http import open_http_client

KEY = TokenKey("https://as.example", "https://mcp.example/mcp")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")


def private_store(tmp_path: Path) -> FileTokenStore:
    directory = tmp_path / "tokens"
    directory.mkdir(mode=0o700)
    return FileTokenStore(directory)


def plant_victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    return victim


async def test_a_link_planted_at_the_old_temporary_name_is_not_written_through(
    tmp_path: Path,
) -> None:
    store = private_store(tmp_path)
    victim = plant_victim(tmp_path)
    store.path(KEY).with_suffix(".tmp").symlink_to(victim)

    await store.save(KEY, Tokens("secret"))

    assert victim.read_bytes() == b"precious"
    assert not store.path(KEY).is_symlink()
    assert stat.S_IMODE(store.path(KEY).lstat().st_mode) == 0o600
    assert await store.load(KEY) == Tokens("secret")


async def test_saves_leave_no_temporary_files_and_never_share_one(tmp_path: Path) -> None:
    store = private_store(tmp_path)
    async with trio.open_nursery() as nursery:
        for n in range(8):
            nursery.start_soon(store.save, KEY, Tokens(f"secret-{n}"))
    assert [p.name for p in store.directory.iterdir()] == [store.path(KEY).name]
    loaded = await store.load(KEY)
    assert loaded is not None and loaded.access_token.startswith("secret-")


async def test_a_link_at_the_token_files_name_is_refused_and_replaced_not_followed(
    tmp_path: Path,
) -> None:
    store = private_store(tmp_path)
    forged = tmp_path / "forged.json"
    forged.write_bytes(b'{"access_token": "attackers-token"}')
    forged.chmod(0o600)
    store.path(KEY).symlink_to(forged)

    with pytest.raises(InsecureTokenStore, match=rf"{store.path(KEY)} is a symbolic link"):
        await store.load(KEY)

    await store.save(KEY, Tokens("secret"))
    assert forged.read_bytes() == b'{"access_token": "attackers-token"}'
    assert not store.path(KEY).is_symlink()
    assert await store.load(KEY) == Tokens("secret")


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702], ids=oct)
async def test_a_directory_others_can_write_to_is_refused(tmp_path: Path, mode: int) -> None:
    directory = tmp_path / "tokens"
    directory.mkdir()
    directory.chmod(mode)
    store = FileTokenStore(directory)

    expected = rf"{directory} has mode {mode:04o}.*chmod 700"
    with pytest.raises(InsecureTokenStore, match=expected):
        await store.save(KEY, Tokens("secret"))
    assert list(directory.iterdir()) == []
    with pytest.raises(InsecureTokenStore, match=expected):
        await store.load(KEY)
    assert stat.S_IMODE(directory.stat().st_mode) == mode  # refused, not silently changed


async def test_a_new_directory_is_made_private(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "a" / "tokens")
    assert await store.load(KEY) is None  # a missing directory: no tokens, nothing made
    assert not (tmp_path / "a").exists()
    await store.save(KEY, Tokens("secret"))
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o666, 0o644, 0o640, 0o604], ids=oct)
async def test_a_token_file_others_can_read_or_write_is_refused(tmp_path: Path, mode: int) -> None:
    store = private_store(tmp_path)
    await store.save(KEY, Tokens("secret"))
    store.path(KEY).chmod(mode)

    with pytest.raises(InsecureTokenStore, match=rf"{store.path(KEY)} has mode {mode:04o}"):
        await store.load(KEY)


async def test_a_token_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    store = private_store(tmp_path)
    os.mkfifo(store.path(KEY), 0o600)  # opening it must not block
    with trio.fail_after(5), pytest.raises(InsecureTokenStore, match="not a regular file"):
        await store.load(KEY)


@needs_root
async def test_a_token_file_of_another_user_is_refused(tmp_path: Path) -> None:
    store = private_store(tmp_path)
    await store.save(KEY, Tokens("secret"))
    os.chown(store.path(KEY), 4242, -1)

    with pytest.raises(InsecureTokenStore, match=rf"{store.path(KEY)} belongs to user 4242"):
        await store.load(KEY)


@needs_root
async def test_a_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    store = private_store(tmp_path)
    os.chown(store.directory, 4242, -1)

    with pytest.raises(InsecureTokenStore, match=rf"{store.directory} belongs to user 4242"):
        await store.save(KEY, Tokens("secret"))
    with pytest.raises(InsecureTokenStore, match="belongs to user 4242"):
        await store.load(KEY)


async def test_delete_removes_a_link_not_its_target(tmp_path: Path) -> None:
    store = private_store(tmp_path)
    victim = plant_victim(tmp_path)
    store.path(KEY).symlink_to(victim)
    await store.delete(KEY)
    assert not store.path(KEY).exists() and victim.read_bytes() == b"precious"
    await store.delete(KEY)  # and a missing file is no error


def test_a_refusal_is_an_authorization_error_and_a_permission_error() -> None:
    assert issubclass(InsecureTokenStore, AuthorizationError)
    assert issubclass(InsecureTokenStore, PermissionError)


async def test_an_mcp_client_reports_a_refused_store_as_an_authorization_failure(
    tmp_path: Path,
) -> None:
    """The refusal reaches the caller as the request's error, saying what to fix."""
    directory = tmp_path / "tokens"
    directory.mkdir()
    directory.chmod(0o777)
    world = World()
    grant = AuthorizationCode(callback_handler(world), "http://127.0.0.1:9/callback")
    auth = OAuth(
        grant,
        http_client=httpx.AsyncClient(transport=world.transport()),
        token_store=FileTokenStore(directory),
    )
    http = httpx.AsyncClient(transport=world.transport(), auth=auth)
    expected = rf"authorization failed: token store directory {directory} has mode 0777"
    with trio.fail_after(10), pytest.raises(McpError, match=expected):
        async with open_http_client(MCP, http_client=http, protocol_version="2025-11-25"):
            pass
    await http.aclose()
    assert list(directory.iterdir()) == []
