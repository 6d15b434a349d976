"""Broken: a completed task's result is recomputed on every tasks/get, and says how many
times it was read (the result does not stay the same)."""

from typing import Any

from _tiny import main
from _tiny_tasks import TinyTasksServer


class ResultChanges(TinyTasksServer):
    def get_task(self, task: dict[str, Any]) -> dict[str, Any]:
        answer = super().get_task(task)
        if task["status"] == "completed":
            task["reads"] = task.get("reads", 0) + 1
            answer["result"] = {**task["result"], "_meta": {"reads": task["reads"]}}  # the bug
        answer.pop("reads", None)
        return answer


if __name__ == "__main__":
    main(ResultChanges())
