"""What the task stores load only when used: the Redis client (the ``tasks-redis`` extra),
when a program opens a Redis store (see "What importing loads" in
``docs/reference/layout.md``). Code here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    import coredis
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
