"""Broken: tasks/cancel marks a task cancelled even when it had already completed (a
terminal status changes, and the result is gone)."""

from typing import Any

from _tiny import main
from _tiny_tasks import TinyTasksServer


class CancelReopens(TinyTasksServer):
    def cancel_task(self, task: dict[str, Any]) -> None:
        self.set(task, "cancelled")  # the bug: no check that the task is still running


if __name__ == "__main__":
    main(CancelReopens())
