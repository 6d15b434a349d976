"""Tasks kept in one SQLite file, through the standard library's :mod:`sqlite3`.

SQLite calls block, so each runs in a worker thread (:func:`trio.to_thread.run_sync`),
one at a time. A call that has started is not abandoned when the caller is cancelled: the
write finishes (or rolls back) and the cancellation takes effect after it, so the file
never holds half a change and a task is never reported created without being stored.

One server process owns a file at a time: :func:`open_sqlite_task_store` takes an
exclusive lock on ``<file>.lock`` and fails at once if another process holds it. That is
what lets it treat every unfinished task of an earlier incarnation as orphaned: on open,
those are recorded ``failed`` with :data:`~trio_mcp.tasks.RUNNER_GONE`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal, TypeVar

import trio

from ._record import TaskPosition, TaskRecord, TaskUpdate
from ._store import ORPHANED, TaskStore

__all__ = ["SqliteTaskStore", "open_sqlite_task_store"]

T = TypeVar("T")
log = logging.getLogger("trio_mcp.tasks")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    expires_at REAL,
    terminal INTEGER NOT NULL,
    record BLOB NOT NULL,
    owner TEXT,
    created_at REAL
);
CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_unfinished ON tasks (terminal) WHERE terminal = 0;
"""
#: The owner and creation time, for tasks/list (added to files of earlier versions, and
#: filled in from their records, on open).
_LISTING = """
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, created_at, task_id);
"""


def _row(record: TaskRecord) -> tuple[str, float | None, int, bytes, str, float]:
    expires = None if record.ttl_ms is None else record.created_at + record.ttl_ms / 1000
    return (
        record.task_id,
        expires,
        int(record.terminal),
        record.dumps(),
        _owner_key(record.owner),
        record.created_at,
    )


def _owner_key(owner: str | None) -> str:
    """The owner as the ``owner`` column holds it (``None``, a transport without
    principals, kept apart from every principal's name)."""
    return "\0" if owner is None else f"p:{owner}"


def _add_listing_columns(db: sqlite3.Connection) -> None:
    """Give a task file of an earlier version the ``owner`` and ``created_at`` columns."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(tasks)")}
    if "owner" in columns:
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ALTER TABLE tasks ADD COLUMN owner TEXT")
        db.execute("ALTER TABLE tasks ADD COLUMN created_at REAL")
        for task_id, data in db.execute("SELECT task_id, record FROM tasks").fetchall():
            record = TaskRecord.loads(data)
            db.execute(
                "UPDATE tasks SET owner = ?, created_at = ? WHERE task_id = ?",
                (_owner_key(record.owner), record.created_at, task_id),
            )


class SqliteTaskStore(TaskStore):
    """A :class:`~trio_mcp.tasks.TaskStore` in one SQLite file (WAL journal). Made by
    :func:`open_sqlite_task_store`, which owns the connection."""

    def __init__(
        self, connection: sqlite3.Connection, *, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(clock=clock)
        self._db = connection
        self._one_at_a_time = trio.CapacityLimiter(1)

    async def _run(self, fn: Callable[[], T]) -> T:
        return await trio.to_thread.run_sync(fn, limiter=self._one_at_a_time)

    async def create(self, record: TaskRecord) -> None:
        def insert() -> None:
            try:
                with self._db:
                    self._db.execute(
                        "INSERT INTO tasks (task_id, expires_at, terminal, record, owner, "
                        "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                        _row(record),
                    )
            except sqlite3.IntegrityError:
                raise ValueError(f"a task {record.task_id!r} exists") from None

        await self._run(insert)

    def _select(self, task_id: str) -> TaskRecord | None:
        row = self._db.execute(
            "SELECT record FROM tasks WHERE task_id = ? AND (expires_at IS NULL OR expires_at > ?)",
            (task_id, self.clock()),
        ).fetchone()
        return None if row is None else TaskRecord.loads(row[0])

    async def get(self, task_id: str) -> TaskRecord | None:
        return await self._run(lambda: self._select(task_id))

    async def update(self, task_id: str, change: TaskUpdate) -> TaskRecord | None:
        def read_modify_write() -> TaskRecord | None:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                record = self._select(task_id)
                if record is None or record.terminal:
                    return record
                record = change.apply(record, self.clock())
                self._db.execute(
                    "UPDATE tasks SET terminal = ?, record = ? WHERE task_id = ?",
                    (int(record.terminal), record.dumps(), task_id),
                )
                return record

        return await self._run(read_modify_write)

    async def delete_expired(self) -> int:
        def delete() -> int:
            with self._db:
                done = self._db.execute(
                    "DELETE FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ?",
                    (self.clock(),),
                )
                return done.rowcount

        return await self._run(delete)

    async def list_owned(
        self, owner: str | None, *, after: TaskPosition | None, limit: int
    ) -> list[TaskRecord]:
        def select() -> list[TaskRecord]:
            created, task_id = after if after is not None else (float("-inf"), "")
            rows = self._db.execute(
                "SELECT record FROM tasks WHERE owner = ? "
                "AND (created_at > ? OR (created_at = ? AND task_id > ?)) "
                "AND (expires_at IS NULL OR expires_at > ?) "
                "ORDER BY created_at, task_id LIMIT ?",
                (_owner_key(owner), created, created, task_id, self.clock(), limit),
            ).fetchall()
            return [TaskRecord.loads(data) for (data,) in rows]

        return await self._run(select)

    def _fail_orphans(self) -> int:
        """Record every unfinished task as failed: they belong to an earlier incarnation
        (the file lock says no other process has the file)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            rows = self._db.execute("SELECT record FROM tasks WHERE terminal = 0").fetchall()
            for (data,) in rows:
                record = ORPHANED.apply(TaskRecord.loads(data), self.clock())
                self._db.execute(
                    "UPDATE tasks SET terminal = 1, record = ? WHERE task_id = ?",
                    (record.dumps(), record.task_id),
                )
        return len(rows)


def _make_private(path: Path) -> None:
    """Create the task file readable and writable by its owner alone (0600): task results
    are whatever the tools returned. An existing file that others may read is made so too.
    SQLite gives the ``-wal`` and ``-shm`` files it creates the database file's mode."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            log.warning("the task file %s could be read by other users: made it 0600", path)
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


@asynccontextmanager
async def open_sqlite_task_store(
    path: str | os.PathLike[str],
    *,
    synchronous: Literal["FULL", "NORMAL"] = "FULL",
    clock: Callable[[], float] = time.time,
) -> AsyncIterator[SqliteTaskStore]:
    """Open (creating if needed) the task file at ``path`` for this process.

    Blocks while the file is opened, locked and recovered (unfinished tasks of an earlier
    incarnation are recorded ``failed``), in a worker thread. On exit the connection and
    the lock are released.

    Args:
        path: the database file; ``<path>.lock`` is created beside it.
        synchronous: ``"FULL"`` (default) syncs every commit to disk, so a created task
            survives a power cut; ``"NORMAL"`` survives the process being killed but may
            lose the last commits on power loss, for several times the write rate.
        clock: wall-clock seconds since the epoch.

    The file is created 0600 (an existing one that others could read is made 0600), so
    that task results are the owner's alone.

    Raises:
        RuntimeError: another process has the file open as a task store, or the file
            cannot be opened as one (not a database, unreadable, a symbolic link): the
            message names the file and the reason.
    """
    path = Path(path)

    def open_locked() -> tuple[int, sqlite3.Connection]:
        lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            raise RuntimeError(f"another process uses {path} as its task store") from None
        try:
            _make_private(path)
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(f"PRAGMA synchronous={synchronous}")
                db.executescript(_SCHEMA)
                _add_listing_columns(db)
                db.executescript(_LISTING)
            except BaseException:
                db.close()
                raise
        except (sqlite3.Error, OSError) as exc:
            os.close(lock)
            raise RuntimeError(f"cannot open the SQLite task store {path}: {exc}") from exc
        return lock, db

    lock, db = await trio.to_thread.run_sync(open_locked)
    try:
        store = SqliteTaskStore(db, clock=clock)
        await store._run(store._fail_orphans)
        yield store
    finally:
        # unbounded shield: SQLite's close (a WAL checkpoint) runs in a thread that cannot
        # be cancelled, and the lock file must stay locked until it is done
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(db.close)
        os.close(lock)
