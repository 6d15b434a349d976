"""Correct, and speaks only the initialize era: before answering ``echo`` it pings the
client (as servers may, in that era) and answers once the client answered the ping. A
client that never answers the server's requests waits for ever."""

from typing import Any

from _tiny import TinyServer, main


class PingsTheClient(TinyServer):
    def __init__(self) -> None:
        super().__init__()
        self.waiting: dict[str, tuple[Any, str]] = {}

    def on_line(self, line: bytes) -> None:
        message = self.parse(line)
        if isinstance(message, dict) and "method" not in message and "id" in message:
            owed = self.waiting.pop(str(message["id"]), None)
            if owed is not None:
                self.tool_result(owed[0], owed[1], False)
                return
        super().on_line(line)

    def on_request(self, id: Any, method: str, params: dict[str, Any]) -> None:
        if method == "server/discover" or "_meta" in params:
            self.unknown_method(id, method)  # the initialize era only
            return
        super().on_request(id, method, params)

    def on_tool(self, id: Any, name: str, arguments: dict[str, Any], modern: bool) -> None:
        if name != "echo":
            super().on_tool(id, name, arguments, modern)
            return
        ping = f"srv-{len(self.waiting)}-{id}"
        self.waiting[ping] = (id, arguments["text"])
        self.write({"jsonrpc": "2.0", "id": ping, "method": "ping"})


if __name__ == "__main__":
    main(PingsTheClient())
