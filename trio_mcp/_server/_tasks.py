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
came, and beyond that a call is refused (:class:`~trio_mcp.RetryLater`, ``"busy"``: over
HTTP 503 with ``Retry-After``), so a flood of calls pins bounded memory. Each principal
(a task's owner, when requests have one) has a share of both:
:attr:`TaskSettings.max_running_per_principal` of its tasks run at once, and past
``max_running_per_principal + max_waiting_per_principal`` of its tasks its calls are
refused (``"quota"``: over HTTP 429), so one principal cannot take every slot from the
others.

A store that fails is never the end of the server: a task's outcome that cannot be
written is written again, after :data:`STORE_RETRY_DELAY` seconds doubling to
:data:`STORE_RETRY_MAX_DELAY`, until the store takes it (the task's record says
``working`` meanwhile, then its definite status); requests that need the store while it
fails (a new task, ``tasks/get``, ``tasks/cancel``, ``tasks/update``) are refused
(:class:`~trio_mcp.RetryLater`, ``"unavailable"``: over HTTP 503 with ``Retry-After``);
each outage is logged when it begins and when it ends, and the server recovers by itself.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import attrs
import orjson
import trio

from .._errors import ErrorCode, McpError, MissingRequiredClientCapability, RetryLater
from .._tasks._open import open_task_store
from .._tasks._record import TaskPosition, TaskRecord, TaskUpdate
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
#: Seconds before a failed write of a task's outcome is tried again; doubled each time.
STORE_RETRY_DELAY: Final = 0.1
#: The longest wait between two tries of a task's outcome.
STORE_RETRY_MAX_DELAY: Final = 5.0
#: The ``Retry-After`` of a request refused because the store fails, or the tasks are full.
RETRY_AFTER: Final = 5
#: Seconds between two reads of the running tasks' records in a shared store, where a
#: ``tasks/cancel`` answered by another worker shows: the longest such a task runs on.
CANCEL_POLL_INTERVAL: Final = 1.0

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
        #: Each principal's tasks running or waiting here, and the limiter of its share.
        self._owned: dict[str, tuple[int, trio.CapacityLimiter]] = {}
        #: Whether the store failed at the last try (an outage is logged once).
        self._store_failing = False
        #: Set (and replaced) each time this runner changes a record.
        self._changed = trio.Event()

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
            if store.shared:
                nursery.start_soon(runner._follow_shared_records)
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
                        try:
                            await runner._update(task_id, shut_down)
                        except Exception as exc:  # noqa: BLE001 - any store's failure
                            log.warning(
                                "task %s: not recorded failed at shutdown: %r", task_id, exc
                            )

    async def _update(self, task_id: str, change: TaskUpdate) -> TaskRecord | None:
        """Change a task's record, and say so (status notifications, and whoever waits in
        :meth:`outcome`)."""
        record = await self.store.update(task_id, change)
        if record is not None:
            self._changed.set()
            self._changed = trio.Event()
            if self.on_change is not None:
                self.on_change(task_id)
        return record

    async def _sweep(self) -> None:
        """Delete expired records every :data:`SWEEP_INTERVAL` seconds, so that a store
        holds no more than the tasks still within their TTL (reads skip expired ones
        anyway). Runs in the task nursery until it closes."""
        while True:
            await trio.sleep(SWEEP_INTERVAL)
            try:
                await self.store.delete_expired()
            except Exception as exc:  # noqa: BLE001 - any store's failure; swept next time
                self._failed("deleting expired tasks", exc)
            else:
                self._answered()

    async def _follow_shared_records(self) -> None:
        """In a store other workers share, a ``tasks/cancel`` or a ``tasks/update`` may be
        answered by another worker, which can only record it: every
        :data:`CANCEL_POLL_INTERVAL` seconds, read the record of each task running here,
        cancel those recorded ``cancelled`` and hand the answers recorded for those waiting
        for input to them. Runs in the task nursery until it closes; a store that fails is
        read again next time."""
        while True:
            await trio.sleep(CANCEL_POLL_INTERVAL)
            for task_id, running in list(self._running.items()):
                if running.scope.cancel_called:
                    continue
                try:
                    record = await self.store.get(task_id)
                except Exception as exc:  # noqa: BLE001 - any store's failure; read next time
                    self._failed("reading the running tasks", exc)
                    break
                if record is not None and record.status == "cancelled":
                    log.info("task %s was cancelled through another worker", task_id)
                    running.scope.cancel()
                elif record is not None and record.input_responses and running.input.remaining:
                    running.input.take(record.input_responses)

    def _failed(self, doing: str, error: BaseException) -> None:
        """Note a store failure: logged when an outage begins, not at every try."""
        if not self._store_failing:
            self._store_failing = True
            log.warning("the task store failed (%s): %r; retrying", doing, error)

    def _answered(self) -> None:
        if self._store_failing:
            self._store_failing = False
            log.warning("the task store answers again")

    def _unavailable(self, doing: str, error: BaseException) -> RetryLater:
        self._failed(doing, error)
        return RetryLater(
            "Service Unavailable: the task store is not answering; try again later",
            retry_after=RETRY_AFTER,
            reason="unavailable",
        )

    async def _store_call(self, doing: str, call: Callable[[], Awaitable[Any]]) -> Any:
        """``call()`` on the store for a request: a failure refuses the request
        (:class:`~trio_mcp.RetryLater`, ``"unavailable"``)."""
        try:
            result = await call()
        except TaskStoreFull:
            raise
        except Exception as exc:  # noqa: BLE001 - any store's failure, whatever its library
            raise self._unavailable(doing, exc) from None
        self._answered()
        return result

    async def _record(self, task_id: str, change: TaskUpdate) -> None:
        """Write a task's record until the store takes it: each try shielded and at most
        :data:`STORE_WRITE_TIMEOUT` seconds, then :data:`STORE_RETRY_DELAY` seconds
        doubling to :data:`STORE_RETRY_MAX_DELAY` between tries. Cancelling it (the
        shutdown) stops the tries between two of them."""
        delay = STORE_RETRY_DELAY
        while True:
            failure: BaseException | None = None
            with trio.move_on_after(STORE_WRITE_TIMEOUT, shield=True) as write:
                try:
                    await self._update(task_id, change)
                except Exception as exc:  # noqa: BLE001 - any store's failure: tried again
                    failure = exc
            if failure is None and not write.cancelled_caught:
                self._answered()
                return
            self._failed(
                f"recording task {task_id} {change.status}",
                failure or TimeoutError(f"no answer within {STORE_WRITE_TIMEOUT:g} s"),
            )
            await trio.sleep(delay)
            delay = min(delay * 2, STORE_RETRY_MAX_DELAY)

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
            raise RetryLater(
                f"Server busy: {len(self._running)} tasks are running or waiting; try again later",
                retry_after=RETRY_AFTER,
                reason="busy",
            )
        share = settings.max_running_per_principal + settings.max_waiting_per_principal
        if owner is not None and self._owned.get(owner, (0, None))[0] >= share:
            await trio.lowlevel.checkpoint()
            raise RetryLater(
                f"Too many tasks: this principal has {share} running or waiting (its share); "
                "try again later",
                retry_after=RETRY_AFTER,
                reason="quota",
            )
        record = self.store.new_record(
            owner=owner,
            ttl_ms=self.settings.ttl_ms,
            poll_interval_ms=self.settings.poll_interval_ms,
        )
        try:
            await self._store_call("creating a task", partial(self.store.create, record))
        except TaskStoreFull as full:
            raise RetryLater(
                f"Server busy: {full}", retry_after=RETRY_AFTER, reason="busy"
            ) from None
        running = _Running(trio.CancelScope(), owner)
        self._running[record.task_id] = running
        if owner is not None:
            count, limiter = self._owned.get(owner, (0, None))
            if limiter is None:
                limiter = trio.CapacityLimiter(settings.max_running_per_principal)
            self._owned[owner] = (count + 1, limiter)
        self._nursery.start_soon(self._run, record.task_id, running, work)
        created = record.wire()
        created["resultType"] = "task"
        return created

    async def _run(
        self, task_id: str, running: _Running, work: Callable[[str], Awaitable[Any]]
    ) -> None:
        change: TaskUpdate | None = None
        share = self._owned[running.owner][1] if running.owner is not None else None
        try:
            with running.scope:
                async with _holding(share), self._limiter:
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
                await self._record(task_id, change)
        finally:
            del self._running[task_id]
            if running.owner is not None:
                count, limiter = self._owned[running.owner]
                if count == 1:
                    del self._owned[running.owner]
                else:
                    self._owned[running.owner] = (count - 1, limiter)

    # -- the tasks/* methods ----------------------------------------------------------------

    async def own(self, task_id: object, owner: str | None) -> TaskRecord:
        """The record of ``owner``'s task ``task_id``.

        Raises:
            McpError: -32602 for an id that is unknown, expired or another principal's
                (the same answer for all three).
            RetryLater: the store is not answering.
        """
        return await self._own(task_id, owner)

    async def outcome(
        self,
        task_id: object,
        owner: str | None,
        ask: Callable[[Request[Any]], Awaitable[Any]],
    ) -> dict[str, Any]:
        """``tasks/result`` (2025-11-25): the result of the task's original request once it
        ends. Blocks until then; a question the task asks meanwhile (it is
        ``input_required``) is put to the client with ``ask`` (the ``tasks/result``
        request's own channel) and its answer delivered to the task. Cancelling it stops
        waiting; the task runs on.

        Raises:
            McpError: the task failed (its error), was cancelled, or is unknown.
        """
        record = await self._own(task_id, owner)
        while not record.terminal:
            running = self._running.get(record.task_id)
            if record.status == "input_required" and running is not None:
                for wire_key, (_, request) in list(running.input.remaining.items()):
                    answer = await ask(request)
                    running.input.take({wire_key: unstructure(answer)})
            with trio.move_on_after(CANCEL_POLL_INTERVAL):  # a shared store's changes
                await self._changed.wait()
            record = await self._own(task_id, owner)
        if record.status == "completed":
            return dict(record.result or {})
        if record.status == "failed":
            error = record.error or {}
            raise McpError(
                str(error.get("message", "The task failed")),
                code=int(error.get("code", ErrorCode.INTERNAL_ERROR)),
                data=error.get("data"),
            )
        raise McpError(f"task {record.task_id} was cancelled", code=ErrorCode.INVALID_REQUEST)

    async def _own(self, task_id: object, owner: str | None) -> TaskRecord:
        if type(task_id) is not str:
            await trio.lowlevel.checkpoint()
            raise McpError("Invalid params: taskId must be a string", code=ErrorCode.INVALID_PARAMS)
        record: TaskRecord | None = await self._store_call(
            "reading a task", partial(self.store.get, task_id)
        )
        if record is None or record.owner != owner:
            raise unknown_task(task_id)
        return record

    async def list_core(self, owner: str | None, cursor: object, page_size: int) -> dict[str, Any]:
        """``tasks/list`` (2025-11-25): a page of ``owner``'s live tasks, oldest first, as
        that revision's ``Task``; the cursor holds the last task's place.

        Raises:
            McpError: -32602 for a malformed cursor; -32601 when the store cannot list.
            RetryLater: the store is not answering.
        """
        if not self.store.can_list():
            await trio.lowlevel.checkpoint()
            raise McpError("Method not found: tasks/list", code=ErrorCode.METHOD_NOT_FOUND)
        after = None if cursor is None else _position_of(cursor)
        records: list[TaskRecord] = await self._store_call(
            "listing tasks",
            partial(self.store.list_owned, owner, after=after, limit=page_size + 1),
        )
        page = records[:page_size]
        listed: dict[str, Any] = {"tasks": [record.core_wire() for record in page]}
        if len(records) > page_size:
            listed["nextCursor"] = _cursor_at(page[-1].position)
        return listed

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
        if running is None and record.status == "input_required":
            # It runs in another worker sharing the store: the answers wait in its record
            # for that worker to take them (see _follow_shared_records).
            asked = record.input_requests or {}
            answers = {key: value for key, value in responses.items() if key in asked}
            if answers:
                change = TaskUpdate(
                    status="input_required",
                    status_message=record.status_message,
                    input_responses=answers,
                )
                await self._store_call(
                    "delivering a task's input", partial(self._update, record.task_id, change)
                )
            return {}
        if running is not None and running.input.take(responses):
            remaining = running.input.remaining
            if remaining:  # partial: only what is still outstanding shows
                change = TaskUpdate(
                    status="input_required", input_requests=running.input.remaining_wire()
                )
                await self._store_call(
                    "recording a task's input", partial(self._update, record.task_id, change)
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
            change = TaskUpdate(status="cancelled", status_message="Cancelled by the client")
            await self._store_call(
                "cancelling a task", partial(self._update, record.task_id, change)
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
        await self._record(
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
            await self._record(task_id, TaskUpdate(status="working"))
        return answers

    async def report(self, task_id: str, message: str) -> None:
        """Set a running task's status message (its progress, as clients poll it). Best
        effort: while the store fails, the message is dropped (the task goes on)."""
        try:
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
        except Exception as exc:  # noqa: BLE001 - any store's failure: the message is dropped
            self._failed(f"reporting on task {task_id}", exc)


@asynccontextmanager
async def _holding(limiter: trio.CapacityLimiter | None) -> AsyncIterator[None]:
    """A slot of ``limiter`` (a principal's share), or nothing without one."""
    if limiter is None:
        await trio.lowlevel.checkpoint()
        yield
    else:
        async with limiter:
            yield


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


def _cursor_at(position: TaskPosition) -> str:
    raw = orjson.dumps({"k": "tasks", "c": position[0], "i": position[1]})
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _position_of(cursor: object) -> TaskPosition:
    """The place a ``tasks/list`` cursor holds (-32602 for one we did not issue)."""
    data = None
    if isinstance(cursor, str):
        try:
            data = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        except (ValueError, orjson.JSONDecodeError):
            data = None
    if (
        not isinstance(data, dict)
        or data.get("k") != "tasks"
        or type(data.get("c")) not in (int, float)
        or type(data.get("i")) is not str
    ):
        raise McpError(
            f"Invalid params: invalid cursor {cursor!r:.60}", code=ErrorCode.INVALID_PARAMS
        )
    return (float(data["c"]), data["i"])
