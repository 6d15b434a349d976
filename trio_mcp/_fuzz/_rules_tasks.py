"""The state machine's rules for the tasks extension (``io.modelcontextprotocol/tasks``),
for a server that advertises it in ``server/discover``: tool calls that declare the
extension (so the server may answer with a task), polls of the tasks it created,
cancellations (twice, and of finished tasks), answers to a task's ``inputRequests``, and
probes with an unknown task id and without the extension.

The rules only send; the invariants are judged by the checker (see :mod:`._tasks`), so a
reproduction file replays them. A task's id is whatever the server chose: a server
that draws random ids replays with different ones, and the recorded messages then ask
after tasks it never created.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._protocol._envelope import CLIENT_CAPABILITIES
from ._machine_base import MachineBase, counted
from ._steps import Expect, Sleep
from ._strategies import valid_values
from ._tasks import TASKS_EXTENSION

__all__ = ["TaskRules"]

#: The ``_meta`` entry that declares the extension (it replaces the envelope's empty
#: client capabilities).
_DECLARED: dict[str, Any] = {CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}}}
#: The most task ids an example keeps to poll.
_MAX_TRACKED = 16
#: The error codes for tasks/* from a client that did not declare the extension: trio_mcp's
#: (and the 2026-07-28 schema's) missing-required-client-capability, and the draft's.
_MISSING_CAPABILITY = (ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY, -32003)


class TaskRules(MachineBase):
    """Tasks: create, poll, cancel, update, probe."""

    def _tasks_offered(self) -> bool:
        return (
            self.ready
            and self.era == "modern"
            and self._catalogue().has("extensions", TASKS_EXTENSION)
        )

    def _task_request(
        self, method: str, task_id: str, **params: Any
    ) -> rpc.ResultResponse | rpc.ErrorResponse | None:
        return self.request(method, {"taskId": task_id, **params}, **_DECLARED)

    @precondition(lambda self: self._tasks_offered() and bool(self._catalogue().tools))
    @rule(data=st.data())
    @counted
    def call_tool_as_task(self, data: st.DataObject) -> None:
        """A tool call that declares the extension; a CreateTaskResult is followed, and
        sometimes polled at once (the task must be durably created by then; if it asks
        for input, it is answered)."""
        params, expect = self._tool_call(data, allow_invalid=False)
        answer = self.request("tools/call", params, expect=expect, **_DECLARED)
        if not isinstance(answer, rpc.ResultResponse) or answer.result.get("resultType") != "task":
            return
        task_id = answer.result.get("taskId")
        if not isinstance(task_id, str):
            return
        self.tasks.append(task_id)
        del self.tasks[:-_MAX_TRACKED]
        if data.draw(st.booleans(), label="poll at once"):
            self._poll_and_answer(task_id, data)

    @precondition(lambda self: self._tasks_offered() and bool(self.tasks))
    @rule(data=st.data())
    @counted
    def poll_task(self, data: st.DataObject) -> None:
        """``tasks/get`` on a task, one to four times, sometimes with a pause between."""
        task_id = data.draw(st.sampled_from(self.tasks), label="task")
        for _ in range(data.draw(st.integers(1, 4), label="polls")):
            if data.draw(st.booleans(), label="pause"):
                self._run(Sleep(data.draw(st.sampled_from([0.01, 0.05, 0.2]), label="seconds")))
            answer = self._task_request("tasks/get", task_id)
            if isinstance(answer, rpc.ResultResponse) and answer.result.get("status") in (
                "completed",
                "failed",
                "cancelled",
            ):
                break

    @precondition(lambda self: self._tasks_offered() and bool(self.tasks))
    @rule(data=st.data())
    @counted
    def cancel_task(self, data: st.DataObject) -> None:
        """``tasks/cancel`` on a task (running or finished), once or twice, then a poll."""
        task_id = data.draw(st.sampled_from(self.tasks), label="task")
        for _ in range(data.draw(st.integers(1, 2), label="cancels")):
            self._task_request("tasks/cancel", task_id)
        if data.draw(st.booleans(), label="poll after"):
            self._task_request("tasks/get", task_id)

    @precondition(lambda self: self._tasks_offered() and bool(self.tasks))
    @rule(data=st.data())
    @counted
    def answer_task_input(self, data: st.DataObject) -> None:
        """Poll a task; if it is ``input_required``, answer its ``inputRequests`` with
        ``tasks/update`` (plausible answers: accept with content drawn from the requested
        schema, decline or cancel; a text sampling result; no roots)."""
        task_id = data.draw(st.sampled_from(self.tasks), label="task")
        self._poll_and_answer(task_id, data)

    def _poll_and_answer(self, task_id: str, data: st.DataObject) -> None:
        answer = self._task_request("tasks/get", task_id)
        if not isinstance(answer, rpc.ResultResponse):
            return
        requests = answer.result.get("inputRequests")
        if answer.result.get("status") != "input_required" or not isinstance(requests, dict):
            return
        responses = {
            key: _plausible_response(request, data)
            for key, request in sorted(requests.items())
            if isinstance(key, str)
        }
        self._task_request("tasks/update", task_id, inputResponses=responses)

    @precondition(lambda self: self._tasks_offered())
    @rule(data=st.data())
    @counted
    def probe_tasks(self, data: st.DataObject) -> None:
        """``tasks/*`` for a task id the server never issued (an error is owed), or from a
        request that does not declare the extension (the missing-capability error)."""
        method = data.draw(
            st.sampled_from(["tasks/get", "tasks/cancel", "tasks/update"]), label="method"
        )
        params: dict[str, Any] = {}
        if method == "tasks/update":
            params["inputResponses"] = {}
        kind = data.draw(st.sampled_from(["unknown id", "undeclared"]), label="probe")
        if kind == "unknown id":
            task_id = "fuzz-no-such-task-" + data.draw(st.text(max_size=8), label="id")
            self.request(
                method,
                {"taskId": task_id, **params},
                expect=Expect(
                    error_invariant="task-error-codes", result_ok=False, is_error_ok=False
                ),
                **_DECLARED,
            )
            return
        choices = [*self.tasks, "fuzz-no-such-task"]
        task_id = data.draw(st.sampled_from(choices), label="task")
        self.request(
            method,
            {"taskId": task_id, **params},
            expect=Expect(
                error_codes=_MISSING_CAPABILITY, error_invariant="task-error-codes", result_ok=False
            ),
        )


def _plausible_response(request: Any, data: st.DataObject) -> dict[str, Any]:
    """An answer a client might give to one of a task's input requests."""
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    params = params if isinstance(params, dict) else {}
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": data.draw(st.text(max_size=20), label="text")},
            "model": "trio-mcp-fuzz",
        }
    if method == "roots/list":
        return {"roots": []}
    action = data.draw(st.sampled_from(["accept", "accept", "decline", "cancel"]), label="action")
    schema = params.get("requestedSchema")
    if action != "accept":
        return {"action": action}
    if not isinstance(schema, dict):
        return {"action": "accept"}
    content = data.draw(valid_values(schema), label="content")
    return {"action": "accept", "content": content if isinstance(content, dict) else {}}
