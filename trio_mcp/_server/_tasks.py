"""Tool calls that outlive their request: the server side of the
``io.modelcontextprotocol/tasks`` extension.

A task cannot live in the nursery of the request that created it: that request is
answered (with a ``CreateTaskResult``) long before the work ends. So the server owns a
*task nursery*, opened by every serving entry point for as long as it serves
(:meth:`TaskRunner.open`), and each task runs there under its own cancel scope,
registered by task id exactly as requests are registered by request id. ``tasks/cancel``
cancels that scope; leaving the serving block cancels them all and records each as
``failed`` with :data:`SHUT_DOWN` as the reason.

Every task is recorded in the :class:`~trio_mcp.tasks.TaskStore` *before* the client is
told it exists, and it belongs to the principal that created it: to anyone else its id is
unknown (``-32602``, exactly as for an id never issued).

At most :attr:`TaskSettings.max_running` tasks run at once; up to
:attr:`TaskSettings.max_waiting` more wait their turn (still ``working``) in the order they
came, and beyond that a call is refused, so a flood of calls pins bounded memory.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio

from .._errors import ErrorCode, McpError, MissingRequiredClientCapability
from .._tasks._open import open_task_store
from .._tasks._record import TaskRecord, TaskUpdate
from .._tasks._store import TaskStore, TaskStoreFull
from .._types._base import Request
from .._types._converter import structure, unstructure
from ._task_settings import TASKS_EXTENSION, TaskSettings

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["SHUT_DOWN", "TaskInput", "TaskRunner"]

log = logging.getLogger("trio_mcp.server")

#: Seconds between two sweeps of expired task records.
SWEEP_INTERVAL: Final = 60.0
#: Seconds a write to the store may take where it is shielded from cancellation (a task's
#: outcome, the shutdown's ``failed`` records): a store that does not answer cannot hold a
#: finished task, or the shutdown, any longer (the record then stays as it was).
STORE_WRITE_TIMEOUT: Final = 5.0

#: The error recorded for tasks still running when the server stopped serving.
SHUT_DOWN: Final[dict[str, Any]] = {
    "code": -32603,
    "message": "The server shut down before the task finished",
}


def unknown_task(task_id: object) -> McpError:
    """The answer for a task id that is unknown, expired or another principal's: the same
    for all three, so that ids cannot be probed."""
    return McpError(f"Invalid params: unknown task {task_id!r}", code=ErrorCode.INVALID_PARAMS)


def opted_in(ctx: Context) -> bool:
    """Whether this request's client declared the tasks extension."""
    capabilities = ctx.client_capabilities
    extensions = getattr(capabilities, "extensions", None)
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def not_opted_in() -> MissingRequiredClientCapability:
    return MissingRequiredClientCapability(
        f"this needs the {TASKS_EXTENSION} extension, which the client did not declare",
        required_capabilities={"extensions": {TASKS_EXTENSION: {}}},
    )


class TaskInput:
    """The questions a running task has asked and not yet had answered (``input_required``).

    Keys are unique over a task's lifetime, as the extension requires: a key the handler
    uses a second time gets a suffix on the wire.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()
        #: wire key -> (the handler's key, the request)
        self.pending: dict[str, tuple[str, Request[Any]]] = {}
        self.answers: dict[str, Any] = {}
        self.changed = trio.Event()

    def wire_key(self, key: str) -> str:
        candidate, n = key, 1
        while candidate in self.used:
            n += 1
            candidate = f"{key}#{n}"
        self.used.add(candidate)
        return candidate

    def remaining_wire(self) -> dict[str, Any]:
        """The unanswered questions as the extension's ``inputRequests``."""
        return {key: unstructure(request) for key, (_, request) in self.remaining.items()}

    def take(self, responses: Mapping[str, Any]) -> bool:
        """Take the answers to outstanding questions (others are ignored, as the extension
        says); returns whether any was new."""
        taken = False
        for key, value in responses.items():
            if key in self.pending and key not in self.answers:
                self.answers[key] = value
                taken = True
        if taken:
            self.changed.set()
            self.changed = trio.Event()
        return taken

    @property
    def remaining(self) -> dict[str, tuple[str, Request[Any]]]:
        return {k: v for k, v in self.pending.items() if k not in self.answers}


@attrs.define(eq=False)
class _Running:
    scope: trio.CancelScope
    owner: str | None
    input: TaskInput = attrs.field(factory=TaskInput)


class TaskRunner:
    """The tasks of one serving entry point: their nursery, their store, their scopes.

    Made by :meth:`open`; handlers reach it through the dispatcher.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        store: TaskStore,
        settings: TaskSettings,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self._nursery = nursery
        self.store = store
        self.settings = settings
        #: Told the id of each task whose record this runner changed (never blocks).
        self.on_change = on_change
        self._limiter = trio.CapacityLimiter(settings.max_running)
        self._running: dict[str, _Running] = {}

    @classmethod
    @asynccontextmanager
    async def open(
        cls, settings: TaskSettings, on_change: Callable[[str], None] | None = None
    ) -> AsyncIterator[TaskRunner]:
        """Open the store (when ``settings`` names it by URL) and the task nursery.

        A task of the nursery deletes expired records every :data:`SWEEP_INTERVAL`
        seconds. Leaving the block cancels every task still running, records it ``failed``
        with :data:`SHUT_DOWN` (shielded, at most :data:`STORE_WRITE_TIMEOUT` seconds), and closes
        the store.
        """
        async with _store_for(settings.store) as store, trio.open_nursery() as nursery:
            runner = cls(nursery, store, settings, on_change)
            nursery.start_soon(runner._sweep)
            try:
                yield runner
            finally:
                nursery.cancel_scope.cancel()
                with trio.move_on_after(STORE_WRITE_TIMEOUT) as cleanup:
                    cleanup.shield = True
                    shut_down = TaskUpdate(
                        status="failed", error=SHUT_DOWN, status_message=SHUT_DOWN["message"]
                    )
                    for task_id in list(runner._running):
                        await runner._update(task_id, shut_down)

    async def _update(self, task_id: str, change: TaskUpdate) -> TaskRecord | None:
        """Change a task's record, and say so (status notifications)."""
        record = await self.store.update(task_id, change)
        if record is not None and self.on_change is not None:
            self.on_change(task_id)
        return record

    async def _sweep(self) -> None:
        """Delete expired records every :data:`SWEEP_INTERVAL` seconds, so that a store
        holds no more than the tasks still within their TTL (reads skip expired ones
        anyway). Runs in the task nursery until it closes."""
        while True:
            await trio.sleep(SWEEP_INTERVAL)
            await self.store.delete_expired()

    def __len__(self) -> int:
        """How many tasks run or wait in this process."""
        return len(self._running)

    # -- creating ---------------------------------------------------------------------------

    async def create(
        self, owner: str | None, work: Callable[[str], Awaitable[Any]]
    ) -> dict[str, Any]:
        """Record a new task, start ``work(task_id)`` in the task nursery, and return the
        ``CreateTaskResult`` (as JSON). Blocks while the store records the task.

        ``work`` returns the result of the original request (a model or its JSON); an
        :exc:`McpError` makes the task ``failed`` with its error; any other exception,
        ``failed`` with an internal error (logged).
        """
        settings = self.settings
        if len(self._running) >= settings.max_running + settings.max_waiting:
            await trio.lowlevel.checkpoint()
            raise McpError(
                f"Server busy: {len(self._running)} tasks are running or waiting; try again later",
                code=ErrorCode.INTERNAL_ERROR,
            )
        record = self.store.new_record(
            owner=owner,
            ttl_ms=self.settings.ttl_ms,
            poll_interval_ms=self.settings.poll_interval_ms,
        )
        try:
            await self.store.create(record)
        except TaskStoreFull as full:
            raise McpError(f"Server busy: {full}", code=ErrorCode.INTERNAL_ERROR) from None
        running = _Running(trio.CancelScope(), owner)
        self._running[record.task_id] = running
        self._nursery.start_soon(self._run, record.task_id, running, work)
        created = record.wire()
        created["resultType"] = "task"
        return created

    async def _run(
        self, task_id: str, running: _Running, work: Callable[[str], Awaitable[Any]]
    ) -> None:
        change: TaskUpdate | None = None
        try:
            with running.scope:
                async with self._limiter:
                    try:
                        result = await work(task_id)
                    except McpError as error:
                        change = TaskUpdate(status="failed", error=_error_json(error))
                    except Exception:
                        log.exception("task %s failed", task_id)
                        change = TaskUpdate(
                            status="failed",
                            error={"code": ErrorCode.INTERNAL_ERROR, "message": "Internal error"},
                        )
                    else:
                        change = TaskUpdate(status="completed", result=_result_json(result))
            if running.scope.cancelled_caught:
                change = TaskUpdate(status="cancelled", status_message="Cancelled by the client")
            if change is not None:
                with trio.move_on_after(STORE_WRITE_TIMEOUT, shield=True) as write:
                    await self._update(task_id, change)
                if write.cancelled_caught:
                    log.warning(
                        "task %s: the store did not record its outcome within %g s",
                        task_id,
                        STORE_WRITE_TIMEOUT,
                    )
        finally:
            del self._running[task_id]

    # -- the tasks/* methods ----------------------------------------------------------------

    async def _own(self, task_id: object, owner: str | None) -> TaskRecord:
        if type(task_id) is not str:
            await trio.lowlevel.checkpoint()
            raise McpError("Invalid params: taskId must be a string", code=ErrorCode.INVALID_PARAMS)
        record = await self.store.get(task_id)
        if record is None or record.owner != owner:
            raise unknown_task(task_id)
        return record

    async def get(self, task_id: object, owner: str | None) -> dict[str, Any]:
        """``tasks/get``: the task as a ``DetailedTask``."""
        return (await self._own(task_id, owner)).wire()

    async def update(self, task_id: object, owner: str | None, responses: object) -> dict[str, Any]:
        """``tasks/update``: deliver answers to the task's outstanding questions."""
        if not isinstance(responses, dict):
            await trio.lowlevel.checkpoint()
            raise McpError(
                "Invalid params: inputResponses must be an object", code=ErrorCode.INVALID_PARAMS
            )
        record = await self._own(task_id, owner)
        running = self._running.get(record.task_id)
        if running is not None and running.input.take(responses):
            remaining = running.input.remaining
            if remaining:  # partial: only what is still outstanding shows
                await self._update(
                    record.task_id,
                    TaskUpdate(
                        status="input_required", input_requests=running.input.remaining_wire()
                    ),
                )
        return {}

    async def cancel(self, task_id: object, owner: str | None) -> dict[str, Any]:
        """``tasks/cancel``: cancel the task's scope (idempotent; a terminal task stays as
        it is)."""
        record = await self._own(task_id, owner)
        running = self._running.get(record.task_id)
        if running is not None:
            running.scope.cancel()
        elif not record.terminal:  # run elsewhere, or its runner is gone
            await self._update(
                record.task_id,
                TaskUpdate(status="cancelled", status_message="Cancelled by the client"),
            )
        return {}

    def cancel_called(self, task_id: str) -> bool:
        """Whether ``tasks/cancel`` (or shutdown) has cancelled a task running here."""
        running = self._running.get(task_id)
        return running is None or running.scope.cancel_called

    # -- what a running task's context asks ---------------------------------------------------

    async def ask(self, task_id: str, requests: Mapping[str, Request[Any]]) -> dict[str, Any]:
        """Ask the client ``requests`` through the task: the task goes ``input_required``
        with them until ``tasks/update`` answers them all, then ``working`` again. Returns
        the typed answers by the handler's keys. Blocks until answered; cancelling the
        task cancels the wait."""
        running = self._running[task_id]
        asked = running.input
        keys = {asked.wire_key(key): (key, request) for key, request in requests.items()}
        asked.pending.update(keys)
        await self._update(
            task_id, TaskUpdate(status="input_required", input_requests=asked.remaining_wire())
        )
        while any(key not in asked.answers for key in keys):
            await asked.changed.wait()
        answers: dict[str, Any] = {}
        for wire_key, (key, request) in keys.items():
            del asked.pending[wire_key]
            value = asked.answers.pop(wire_key)
            try:
                answers[key] = structure(value, request.result_model)
            except ValueError as exc:
                raise McpError(
                    f"Invalid params: inputResponses[{wire_key!r}]: {exc}",
                    code=ErrorCode.INVALID_PARAMS,
                ) from None
        if not asked.remaining:
            await self._update(task_id, TaskUpdate(status="working"))
        return answers

    async def report(self, task_id: str, message: str) -> None:
        """Set a running task's status message (its progress, as clients poll it)."""
        record = await self.store.get(task_id)
        if record is not None and not record.terminal:
            await self._update(
                task_id,
                TaskUpdate(
                    status=record.status,
                    status_message=message,
                    input_requests=record.input_requests,
                ),
            )


@asynccontextmanager
async def _store_for(store: str | TaskStore) -> AsyncIterator[TaskStore]:
    if isinstance(store, TaskStore):
        await trio.lowlevel.checkpoint()
        yield store
    else:
        async with open_task_store(store) as opened:
            yield opened


def _error_json(error: McpError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return body


def _result_json(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != "resultType"}
    value = unstructure(result)
    if not isinstance(value, dict):
        raise TypeError(f"a task's result must be a JSON object, not {type(value).__name__}")
    value.pop("resultType", None)
    return value
