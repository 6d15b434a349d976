"""Broken: ``add`` declares ``{"sum": integer}`` but returns a string for negative sums."""

from typing import Any

from _tiny import TinyServer, main


class BreaksOutputSchema(TinyServer):
    def add_output(self, total: int) -> Any:
        return {"sum": "negative"} if total < 0 else {"sum": total}  # the bug


if __name__ == "__main__":
    main(BreaksOutputSchema())
