"""What the ASGI app loads only when asked for: the server card endpoints, for an app given
a ``card``, and the fleet's part of the HTTP+SSE sessions, for an app given ``state=``
(see "What importing loads" in ``docs/reference/layout.md``). Code here writes
``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    from ..._cards._model import ServerCard, check_card
    from ..._cards._serving import CardEndpoints
    from ._sse_2024_fleet import SseFleet, SseFleetUnavailable
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
