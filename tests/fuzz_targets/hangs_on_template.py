"""Broken: its one tool, ``echo``, never answers when the text contains ``{{`` (as a
template engine might, waiting for a placeholder to close). Every other call is
answered.

Arbitrary text almost never holds two braces in a row: the fuzzer finds this through
its dictionary of interesting strings (``{{7*7}}``, drawn alone or inside other text).
Before it had one, 300 examples went by without a single ``{{``.
"""

from typing import Any, ClassVar

from _tiny import TOOLS, TinyServer, main

TRIGGER = "{{"


class HangsOnTemplate(TinyServer):
    tools: ClassVar[list[dict[str, Any]]] = [t for t in TOOLS if t["name"] == "echo"]

    def on_tool(self, id: Any, name: str, arguments: dict[str, Any], modern: bool) -> None:
        if TRIGGER in arguments["text"]:
            return  # the bug: no answer at all
        super().on_tool(id, name, arguments, modern)


if __name__ == "__main__":
    main(HangsOnTemplate())
