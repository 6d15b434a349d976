"""Broken: answers an unknown method with -32600 (Invalid Request) instead of -32601."""

from typing import Any

from _tiny import TinyServer, main


class WrongUnknownMethodCode(TinyServer):
    def unknown_method(self, id: Any, method: str) -> None:
        self.error(id, -32600, f"Invalid Request: no such method {method}")


if __name__ == "__main__":
    main(WrongUnknownMethodCode())
