"""The tiny server with the tasks extension (``io.modelcontextprotocol/tasks``), for the
fuzzer's task checks: correct as it stands (``tasks_good.py``); the ``task_*.py`` beside
it break it in one way each.

A modern ``tools/call`` that declares the extension gets a task (ids ``task-1``,
``task-2``, ... so that a reproduction replays with the same ids). ``slow`` completes
after a tenth of a second, ``ask`` waits for a name (``input_required`` with one
elicitation, answered by ``tasks/update``), the others complete at once.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from _tiny import CAPABILITIES, META_CAPABILITIES, TOOLS, Invalid, TinyServer

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
ASK = {
    "name": "ask",
    "description": "Asks for a name (through the task), then greets.",
    "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TinyTasksServer(TinyServer):
    tools: ClassVar[list[dict[str, Any]]] = [*TOOLS, ASK]
    capabilities: ClassVar[dict[str, Any]] = {**CAPABILITIES, "extensions": {TASKS: {}}}

    def __init__(self) -> None:
        super().__init__()
        self.tasks: dict[str, dict[str, Any]] = {}
        self.asked = 0
        self.declared = False
        #: While a tool runs for a task, its answer goes here instead of out.
        self.captured: list[dict[str, Any]] | None = None

    def result(self, id: Any, result: dict[str, Any], modern: bool) -> None:
        if self.captured is not None:
            self.captured.append({"resultType": "complete", **result} if modern else result)
            return
        super().result(id, result, modern)

    # -- creating tasks ----------------------------------------------------------------------

    def on_request(self, id: Any, method: str, params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
        if not (modern and method in ("tasks/get", "tasks/cancel", "tasks/update")):
            self.declared = modern and declares(meta)
            super().on_request(id, method, params)
            return
        self.check_envelope(meta)
        if not declares(meta):
            raise Invalid(
                -32021,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": {TASKS: {}}}},
            )
        task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
        if task is None:
            raise Invalid(-32602, f"Invalid params: unknown task {params.get('taskId')!r}")
        if method == "tasks/get":
            self.result(id, self.get_task(task), True)
        elif method == "tasks/cancel":
            self.cancel_task(task)
            self.result(id, {}, True)
        else:
            responses = params.get("inputResponses")
            if not isinstance(responses, dict):
                raise Invalid(-32602, "Invalid params: inputResponses must be an object")
            self.update_task(task, responses)
            self.result(id, {}, True)

    def on_tool(self, id: Any, name: str, arguments: dict[str, Any], modern: bool) -> None:
        if not self.declared:
            if name == "ask":
                self.tool_result(id, "Hello, stranger!", modern)
                return
            super().on_tool(id, name, arguments, modern)
            return
        task_id = f"task-{len(self.tasks) + 1}"
        task: dict[str, Any] = {
            "taskId": task_id,
            "status": "working",
            "createdAt": now(),
            "lastUpdatedAt": now(),
            "ttlMs": 60000,
            "pollIntervalMs": 50,
        }
        self.tasks[task_id] = task
        self.result(id, {"resultType": "task", **task}, False)
        if name == "ask":
            self.asked += 1
            key = f"name-{self.asked}"
            self.set(
                task,
                "input_required",
                inputRequests={
                    key: {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "Your name?",
                            "requestedSchema": NAME_SCHEMA,
                        },
                    }
                },
            )
        elif name == "slow":
            self.later(self.SLOW_DELAY, ("task", task_id), lambda: self.finish(task, "done"))
        else:
            # The tool's own answer, captured as the task's result.
            self.captured = []
            try:
                super().on_tool(None, name, arguments, True)
            finally:
                captured, self.captured = self.captured, None
            self.set(task, "completed", result=captured[0])

    def finish(self, task: dict[str, Any], text: str) -> None:
        if task["status"] not in TERMINAL:
            self.set(
                task,
                "completed",
                result={"resultType": "complete", "content": [{"type": "text", "text": text}]},
            )

    # -- the task's life ---------------------------------------------------------------------

    def set(self, task: dict[str, Any], status: str, **fields: Any) -> None:
        for field in ("result", "error", "inputRequests"):
            task.pop(field, None)
        task.update(status=status, lastUpdatedAt=now(), **fields)

    def get_task(self, task: dict[str, Any]) -> dict[str, Any]:
        return dict(task)

    def cancel_task(self, task: dict[str, Any]) -> None:
        if task["status"] not in TERMINAL:
            self.set(task, "cancelled")

    def update_task(self, task: dict[str, Any], responses: dict[str, Any]) -> None:
        requests = task.get("inputRequests") or {}
        for key, response in responses.items():
            if key in requests and isinstance(response, dict):
                content = response.get("content") if response.get("action") == "accept" else None
                name = content.get("name") if isinstance(content, dict) else None
                self.finish(task, f"Hello, {name if isinstance(name, str) else 'stranger'}!")


def declares(meta: Any) -> bool:
    capabilities = meta.get(META_CAPABILITIES) if isinstance(meta, dict) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and TASKS in extensions
