"""Broken: a line that is not JSON kills it (the decode error is not caught)."""

import json
from typing import Any

from _tiny import TinyServer, main


class CrashesOnBadJson(TinyServer):
    def on_line(self, line: bytes) -> None:
        json.loads(line)  # the bug: raises, and nothing catches it
        super().on_line(line)

    def parse(self, line: bytes) -> Any:
        return json.loads(line)


if __name__ == "__main__":
    main(CrashesOnBadJson())
