"""Broken: tasks/* from a client that did not declare the tasks extension is refused with
-32021, but without the ``data.requiredCapabilities`` that says what to declare."""

from typing import Any

from _tiny import Invalid, main
from _tiny_tasks import TinyTasksServer, declares


class BareRefusal(TinyTasksServer):
    def on_request(self, id: Any, method: str, params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        if method.startswith("tasks/") and isinstance(meta, dict) and not declares(meta):
            raise Invalid(-32021, "Missing required client capability")  # the bug: no data
        super().on_request(id, method, params)


if __name__ == "__main__":
    main(BareRefusal())
