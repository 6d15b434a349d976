"""Broken: ``divide`` with b = 0 never answers (the request hangs)."""

from typing import Any

from _tiny import TinyServer, main


class HangsOnZero(TinyServer):
    def on_divide_by_zero(self, id: Any, modern: bool) -> None:
        pass  # the bug: no answer at all


if __name__ == "__main__":
    main(HangsOnZero())
