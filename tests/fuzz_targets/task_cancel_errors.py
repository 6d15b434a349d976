"""Broken: tasks/cancel on a task that has already finished answers an error instead of
the empty acknowledgement."""

from typing import Any

from _tiny import Invalid, main
from _tiny_tasks import TERMINAL, TinyTasksServer


class CancelErrors(TinyTasksServer):
    def cancel_task(self, task: dict[str, Any]) -> None:
        if task["status"] in TERMINAL:
            raise Invalid(-32602, "Invalid params: the task has already finished")  # the bug
        super().cancel_task(task)


if __name__ == "__main__":
    main(CancelErrors())
