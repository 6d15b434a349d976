"""Tool calls the server runs as tasks (the ``io.modelcontextprotocol/tasks`` extension),
from the client's side: a :class:`ToolTask` handle that polls for the result, answers the
task's questions, and cancels the task when the caller gives up on it.

A client opts in per request: :meth:`Client.open_tool_task <trio_mcp.Client.open_tool_task>`
(and ``call_tool(..., as_task=True)``) declare the extension on that ``tools/call`` and on
every ``tasks/*`` request that follows. The server decides whether the call becomes a task;
a call answered at once gives a handle that is already done.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

import trio

from .._errors import ErrorCode, McpError, ProtocolError
from .._protocol._envelope import CLIENT_CAPABILITIES
from .._types._converter import converter_for
from .._types._mrtr import InputRequiredResult
from .._types._notifications import ProgressNotificationParams
from .._types._tools import CallToolResult

if TYPE_CHECKING:
    from .._session._outbound import ProgressCallback
    from ._client import Client
    from ._rounds import InputRounds

__all__ = [
    "TASKS_EXTENSION",
    "TaskCancelled",
    "ToolTask",
    "cancel_on_exit",
    "core_tasks",
    "created_task",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: How long to wait between polls when the server suggests nothing.
DEFAULT_POLL_INTERVAL: Final = 0.5
#: While following a task on a listen stream, the longest wait without a ``tasks/get``.
FOLLOW_FALLBACK: Final = 30.0
#: How long a ``tasks/cancel`` sent on the way out may take.
CANCEL_TIMEOUT: Final = 5.0
_TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
#: A status message that says how far a task is: ``3``, ``3/10``, ``3/10: indexing``.
_PROGRESS: Final = re.compile(
    r"(?P<progress>\d+(?:\.\d+)?)(?:/(?P<total>\d+(?:\.\d+)?))?(?:: (?P<message>.*))?",
    re.DOTALL,
)


class TaskCancelled(McpError):
    """The task ended ``cancelled`` (by ``tasks/cancel``, ours or another's)."""


def opt_in(client: Client, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` declaring the tasks extension in this request's client capabilities."""
    capabilities = converter_for(client.protocol_version).unstructure(
        client.connection.capabilities
    )
    extensions = dict(capabilities.get("extensions") or {})
    extensions[TASKS_EXTENSION] = {}
    meta = dict(params.get("_meta") or {})
    meta[CLIENT_CAPABILITIES] = {**capabilities, "extensions": extensions}
    return {**params, "_meta": meta}


def core_tasks(capabilities: Any) -> bool:
    """Whether a 2025-11-25 server declares the core revision's tasks for ``tools/call``
    (``capabilities.tasks.requests.tools.call``)."""
    tasks = getattr(capabilities, "tasks", None)
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def created_task(answer: Any) -> dict[str, Any]:
    """The answer to a 2025-11-25 task-augmented call, as :class:`ToolTask` reads answers:
    a ``CreateTaskResult``'s task, or the result itself when the server ran the call at once.

    Raises:
        ProtocolError: neither.
    """
    if not isinstance(answer, dict):
        raise ProtocolError("malformed answer to a task-augmented tools/call")
    task = answer.get("task")
    if isinstance(task, dict):
        return {**task, "resultType": "task"}
    if "content" in answer:
        return answer  # run at once, as a server may for a tool whose tasks are optional
    raise ProtocolError("a task-augmented tools/call was answered with neither a task nor a result")


class ToolTask:
    """A tool call that the server may run as a task; made by
    :meth:`Client.open_tool_task <trio_mcp.Client.open_tool_task>` or
    :meth:`Client.open_task <trio_mcp.Client.open_task>`, which cancel the task when their
    block is left before the result arrived, unless :meth:`detach` was called.

    Attributes:
        task_id: the server's id for the task (``None`` when the server answered the call at
            once instead of making a task).
        status: the last status seen (``"completed"`` for a call answered at once).
        status_message: the last ``statusMessage`` seen (progress, while working).
    """

    def __init__(
        self,
        client: Client,
        answer: dict[str, Any],
        on_progress: ProgressCallback | None = None,
        *,
        rounds: InputRounds,
    ) -> None:
        self._client = client
        #: The client's input rounds, which answer the task's ``inputRequests``.
        self._rounds = rounds
        #: The tasks of the 2025-11-25 core (``tasks/result`` gives the outcome), not the
        #: 2026-07-28 extension's (the outcome comes with ``tasks/get``).
        self._core = client.era != "modern"
        self._on_progress = on_progress
        self._progress: float | None = None
        self._answered: set[str] = set()
        self._outcome: CallToolResult | McpError | None = None
        self.detached = False
        self.task_id: str | None = None
        self.status = "working"
        self.status_message: str | None = None
        if answer.get("resultType") == "task":
            task_id = answer.get("taskId")
            if type(task_id) is not str:
                raise ProtocolError("the server's task has no taskId")
            self.task_id = task_id
            self._seen(answer)
        else:
            self.status = "completed"
            self._outcome = self._read_result(answer)

    @property
    def done(self) -> bool:
        """Whether the outcome is known (a result, an error or a cancellation)."""
        return self._outcome is not None

    def detach(self) -> str:
        """Leave the task running when the block ends; returns its id, for
        :meth:`Client.open_task <trio_mcp.Client.open_task>` later (here or in another
        process).

        Raises:
            RuntimeError: the call was answered at once (there is no task).
        """
        if self.task_id is None:
            raise RuntimeError("the server answered this call at once: there is no task")
        self.detached = True
        return self.task_id

    async def poll(self) -> str:
        """Ask the server for the task's state once (``tasks/get``), answer any questions it
        waits on, and return the status. Blocks for the round trip (and while the
        application answers the questions)."""
        if self._outcome is not None or self.task_id is None:
            await trio.lowlevel.checkpoint()
            return self.status
        task = await self._request("tasks/get", {"taskId": self.task_id})
        if task.get("taskId") != self.task_id:
            raise ProtocolError(f"tasks/get for {self.task_id!r} answered another task")
        before = self.status_message
        self._seen(task)
        if self.status_message is not None and self.status_message != before:
            await self._report(self.status_message)
        if self._core:
            return await self._poll_core(task)
        status = self.status
        if status == "completed":
            result = task.get("result")
            if not isinstance(result, dict):
                raise ProtocolError("a completed task carries no result")
            self._outcome = self._read_result(result)
        elif status == "failed":
            found = task.get("error")
            error: dict[str, Any] = found if isinstance(found, dict) else {}
            self._outcome = McpError(
                str(error.get("message", "the task failed")),
                code=error.get("code", ErrorCode.INTERNAL_ERROR),
                data=error.get("data"),
            )
        elif status == "cancelled":
            self._outcome = TaskCancelled(
                f"task {self.task_id} was cancelled", code=ErrorCode.INTERNAL_ERROR
            )
        elif status == "input_required":
            await self._answer(task.get("inputRequests"))
        return status

    async def _poll_core(self, task: dict[str, Any]) -> str:
        """2025-11-25: the outcome of a task that ended, or that waits for input, comes from
        ``tasks/result``, which blocks until the task ends; the server's requests meanwhile
        (an elicitation the task needs) reach the client's handlers as any request does."""
        status = self.status
        if status in ("completed", "failed", "input_required"):
            try:
                payload = await self._request("tasks/result", {"taskId": self.task_id})
            except McpError as error:  # the original request's error
                self.status, self._outcome = "failed", error
                return "failed"
            self.status, self._outcome = "completed", self._read_result(payload)
            return "completed"
        if status == "cancelled":
            self._outcome = TaskCancelled(
                f"task {self.task_id} was cancelled", code=ErrorCode.INTERNAL_ERROR
            )
        return status

    async def result(self) -> CallToolResult:
        """Wait for the outcome, answering the task's questions through the client's
        handlers: on 2026-07-28, following its status notifications on a
        ``subscriptions/listen`` stream (a ``tasks/get`` per change), else, or when the
        server does not offer the stream, polling at the interval the server suggests.

        Cancelling the wait does not cancel the task by itself: leaving the block that
        made this handle does (unless detached).

        Raises:
            McpError: the task ``failed`` (with the server's error).
            TaskCancelled: the task was cancelled.
        """
        if self._outcome is None and not self._core and self.task_id is not None:
            await self._follow()
        while self._outcome is None:
            status = await self.poll()
            if status not in _TERMINAL:
                await trio.sleep(self._interval)
        if isinstance(self._outcome, McpError):
            raise self._outcome
        return self._outcome

    async def cancel(self) -> None:
        """Ask the server to cancel the task (``tasks/cancel``; the outcome may still be a
        result, if the work finished first)."""
        if self.task_id is None or self._outcome is not None:
            await trio.lowlevel.checkpoint()
            return
        await self._request("tasks/cancel", {"taskId": self.task_id})

    async def _follow(self) -> None:
        """2026-07-28: wait for the outcome on a ``subscriptions/listen`` stream of the
        task's ``notifications/tasks`` rather than polling: one ``tasks/get`` once the
        stream is acknowledged (nothing before it is missed) and one per status change,
        with a poll at most every :data:`FOLLOW_FALLBACK` seconds should a notification be
        lost. Returns with the outcome unknown if the server does not agree to the
        stream (the caller polls then)."""
        assert self.task_id is not None
        try:
            async with self._client.listen(task_ids=[self.task_id]) as changes:
                agreed = changes.acknowledged
                if agreed is None or self.task_id not in (agreed.task_ids or ()):
                    return
                while await self.poll() not in _TERMINAL and self._outcome is None:
                    with trio.move_on_after(FOLLOW_FALLBACK):
                        async for change in changes:
                            if change.task_id == self.task_id:
                                break
                        else:
                            return  # the stream ended: poll
        except McpError:
            return  # the server refused the stream: poll

    # -- inside -----------------------------------------------------------------------------

    async def _report(self, message: str) -> None:
        """Hand a new ``statusMessage`` to ``on_progress``: a task has no request to send
        progress notifications for, so its progress is its status message. One that reads
        ``N``, ``N/TOTAL`` or either followed by ``: text`` (what trio_mcp servers write for
        ``ctx.report_progress``) gives the numbers; any other counts the messages seen."""
        if self._on_progress is None or self.task_id is None:
            await trio.lowlevel.checkpoint()
            return
        found = _PROGRESS.fullmatch(message)
        if found:
            progress = float(found["progress"])
            total = float(found["total"]) if found["total"] is not None else None
            text = found["message"]
        else:
            progress = (self._progress or 0) + 1
            total, text = None, message
        if self._progress is not None and progress <= self._progress:
            await trio.lowlevel.checkpoint()
            return  # progress only grows
        self._progress = progress
        update = ProgressNotificationParams(
            progress_token=self.task_id, progress=progress, total=total, message=text
        )
        outcome = self._on_progress(update)
        if outcome is not None:
            await outcome
        else:
            await trio.lowlevel.checkpoint()

    _interval = DEFAULT_POLL_INTERVAL

    def _seen(self, task: dict[str, Any]) -> None:
        status = task.get("status")
        if status not in ("working", "input_required", *_TERMINAL):
            raise ProtocolError(f"unknown task status {status!r}")
        if self.status in _TERMINAL and status != self.status:
            raise ProtocolError(f"task {self.task_id} left {self.status!r} for {status!r}")
        self.status = status
        message = task.get("statusMessage")
        self.status_message = message if isinstance(message, str) else None
        interval = task.get("pollInterval" if self._core else "pollIntervalMs")
        if type(interval) is int and interval > 0:
            self._interval = interval / 1000

    def _read_result(self, result: dict[str, Any]) -> CallToolResult:
        conv = converter_for(self._client.protocol_version)
        try:
            return conv.structure({**result, "resultType": "complete"}, CallToolResult)
        except Exception:  # noqa: BLE001 - the shape is the server's fault
            raise ProtocolError("the task's result is not a tool result") from None

    async def _answer(self, requests: Any) -> None:
        if not isinstance(requests, dict):
            raise ProtocolError("an input_required task carries no inputRequests")
        fresh = {key: value for key, value in requests.items() if key not in self._answered}
        if not fresh:
            return
        conv = converter_for(self._client.protocol_version)
        try:
            typed = conv.structure(
                {"resultType": "input_required", "inputRequests": fresh}, InputRequiredResult
            ).input_requests
        except Exception:  # noqa: BLE001
            raise ProtocolError("the task's inputRequests are malformed") from None
        responses = await self._rounds.answer(typed or {}, asker="the task")
        self._answered.update(responses)
        await self._request("tasks/update", {"taskId": self.task_id, "inputResponses": responses})

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if not self._core:
            params = opt_in(self._client, params)
        answer = await self._client.session.send_request(method, params, model=dict)
        if not isinstance(answer, dict):
            raise ProtocolError(f"malformed answer to {method}")
        return answer


async def cancel_on_exit(task: ToolTask) -> None:
    """Send ``tasks/cancel`` for ``task`` as its owner's block is left, perhaps because
    it was cancelled: shielded, and given up after :data:`CANCEL_TIMEOUT` seconds."""
    with trio.move_on_after(CANCEL_TIMEOUT) as scope:
        scope.shield = True
        try:
            await task.cancel()
        except (McpError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the task may be gone already; nothing more we can do from here
