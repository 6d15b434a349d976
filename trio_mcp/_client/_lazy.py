"""What the client loads on first use: the models of resources, prompts, completion,
subscriptions and roots, and the process transport (with :mod:`shlex`) when it first spawns
a server. A tools-only client, and a server program that never spawns, load none of them
(start-up time; see "What importing loads" in ``docs/reference/layout.md``). Code here writes
``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    import shlex
    from .._transports._process import connect_process_stream
    from .._types._completion import CompleteRequestParams, CompleteResult, CompletionArgument
    from .._types._completion import CompletionContext
    from .._types._prompts import GetPromptResult, ListPromptsResult
    from .._types._resources import ListResourcesResult, ListResourceTemplatesResult
    from .._types._resources import ReadResourceResult
    from .._types._roots import ListRootsResult
    from .._types._subscriptions import SubscriptionFilter
    from .._types._tasks import ListTasksResult
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
