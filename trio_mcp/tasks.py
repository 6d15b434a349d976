"""The ``io.modelcontextprotocol/tasks`` extension: task records and the stores that keep
them durably (memory, SQLite, Redis)."""

from ._tasks._open import open_task_store as open_task_store
from ._tasks._record import (
    TERMINAL as TERMINAL,
    TaskRecord as TaskRecord,
    TaskUpdate as TaskUpdate,
)
from ._tasks._redis import (
    RedisTaskStore as RedisTaskStore,
    open_redis_task_store as open_redis_task_store,
)
from ._tasks._sqlite import (
    SqliteTaskStore as SqliteTaskStore,
    open_sqlite_task_store as open_sqlite_task_store,
)
from ._tasks._store import (
    RUNNER_GONE as RUNNER_GONE,
    MemoryTaskStore as MemoryTaskStore,
    TaskStore as TaskStore,
    TaskStoreFull as TaskStoreFull,
)
