"""What a fleet loads only when one runs: Redis (coredis) and the parts that use it (see
"What importing loads" in ``docs/reference/layout.md``). Code here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    from ._fleet import open_fleet
    from ._forward import Forwarder
    from ._sessions import FleetSessions
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
