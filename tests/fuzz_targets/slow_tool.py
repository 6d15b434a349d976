"""Correct, but its ``slow`` tool answers after 300 ms (the issue's "slow tool" server).

With ``FUZZ_IN_FLIGHT_LOG`` set to a file name, it appends a line each time the number
of ``slow`` calls it holds unanswered reaches a new high: how many calls the fuzzer
kept in flight at once, as seen from the server.
"""

import os
from typing import Any

from _tiny import TinyServer, main


class SlowTool(TinyServer):
    SLOW_DELAY = 0.3

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.most = 0
        self.log = os.environ.get("FUZZ_IN_FLIGHT_LOG")

    def on_tool(self, id: Any, name: str, arguments: dict[str, Any], modern: bool) -> None:
        if name != "slow":
            super().on_tool(id, name, arguments, modern)
            return
        self.in_flight += 1
        if self.in_flight > self.most:
            self.most = self.in_flight
            if self.log:
                with open(self.log, "a") as log:
                    log.write(f"{self.most}\n")

        def answer() -> None:
            self.in_flight -= 1
            self.tool_result(id, "done", modern)

        self.later(self.SLOW_DELAY, id, answer)

    def on_cancel(self, number: int) -> None:
        super().on_cancel(number)
        self.in_flight -= 1


if __name__ == "__main__":
    main(SlowTool())
