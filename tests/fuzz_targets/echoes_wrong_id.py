"""Broken: a string id that looks like a number comes back as a number ("7" -> 7)."""

from typing import Any

from _tiny import TinyServer, main


class EchoesWrongId(TinyServer):
    def echo_id(self, id: Any) -> Any:
        if isinstance(id, str) and id.isdigit():
            return int(id)  # the bug
        return id


if __name__ == "__main__":
    main(EchoesWrongId())
