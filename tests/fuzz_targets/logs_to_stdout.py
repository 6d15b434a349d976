"""Broken: prints a log line to stdout (the protocol channel) on every tool call."""

import os
from typing import Any

from _tiny import TinyServer, main


class LogsToStdout(TinyServer):
    def call_tool(self, id: Any, params: dict[str, Any], modern: bool) -> None:
        os.write(1, f"calling tool {params.get('name')!r}\n".encode())  # the bug
        super().call_tool(id, params, modern)


if __name__ == "__main__":
    main(LogsToStdout())
