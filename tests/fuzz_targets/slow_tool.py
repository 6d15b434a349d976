"""Correct, but its ``slow`` tool answers after 300 ms (the issue's "slow tool" server).

With ``FUZZ_SLOW_LOG`` set to a file name, it appends a line for each ``slow`` call it
answers: its process id, when the call came and when it was answered
(``time.monotonic()``, the same clock in every process), and how many ``slow`` calls it
held unanswered once this one came (this one included). That is what the fuzzer's
concurrency looks like from the server.
"""

import os
import time
from typing import Any

from _tiny import TinyServer, main


class SlowTool(TinyServer):
    SLOW_DELAY = 0.3

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.log = os.environ.get("FUZZ_SLOW_LOG")

    def on_tool(self, id: Any, name: str, arguments: dict[str, Any], modern: bool) -> None:
        if name != "slow":
            super().on_tool(id, name, arguments, modern)
            return
        self.in_flight += 1
        came, held = time.monotonic(), self.in_flight

        def answer() -> None:
            self.in_flight -= 1
            self.tool_result(id, "done", modern)
            if self.log:
                with open(self.log, "a") as log:
                    log.write(f"{os.getpid()} {came:.6f} {time.monotonic():.6f} {held}\n")

        self.later(self.SLOW_DELAY, id, answer)

    def on_cancel(self, number: int) -> None:
        super().on_cancel(number)
        self.in_flight -= 1


if __name__ == "__main__":
    main(SlowTool())
