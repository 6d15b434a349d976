"""A task store that cannot be opened stops the server at start, with a message naming the
store and the reason (issue 21, failure 2): it used to be logged by Hypercorn as "Lifespan
error, continuing", and the server ran on without tasks."""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve
from hypercorn.utils import LifespanFailureError

from trio_mcp import Server
from trio_mcp.http import asgi_app, serve
from trio_mcp.server import TaskSettings

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(60)


def corrupt_store(tmp_path: Path) -> tuple[Path, Server]:
    path = tmp_path / "tasks.db"
    path.write_bytes(b"not a database at all " * 100)
    server = Server("tasks", tasks=TaskSettings(store=f"sqlite://{path}"))

    @server.tool(task="optional")
    async def slow() -> str:
        return "done"

    return path, server


async def test_serve_raises_naming_the_store_before_binding(tmp_path: Path) -> None:
    path, server = corrupt_store(tmp_path)
    started = False

    async def run() -> None:
        nonlocal started
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(serve, server, port=0))
            started = True

    with trio.fail_after(10), pytest.RaisesGroup(pytest.RaisesExc(RuntimeError)) as refused:
        await run()
    assert str(refused.value.exceptions[0]) == (
        f"cannot open the SQLite task store {path}: file is not a database"
    )
    assert not started


async def test_the_asgi_lifespan_fails_startup_instead_of_running_on(tmp_path: Path) -> None:
    path, server = corrupt_store(tmp_path)
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    failure = pytest.RaisesExc(
        LifespanFailureError, match=f"cannot open the SQLite task store {path}"
    )
    with (
        trio.fail_after(10),
        pytest.RaisesGroup(failure, allow_unwrapped=True, flatten_subgroups=True),
    ):
        await hypercorn_serve(asgi_app(server), config, mode="asgi")  # type: ignore[arg-type]


def test_the_example_exits_non_zero_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    path.write_bytes(b"not a database at all " * 100)
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tasks_server.py"), "--port", "0",
         "--store", f"sqlite://{path}"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == (
        f"tasks_server.py: cannot open the SQLite task store {path}: file is not a database"
    )
    assert "Traceback" not in run.stderr
