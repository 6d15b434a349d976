"""What the client loads on first use: the models of resources, prompts, completion,
subscriptions and roots, and the process transport (with :mod:`shlex`) when it first spawns
a server. A tools-only client, and a server program that never spawns, load none of them
(start-up time; see "What importing loads" in ``docs/reference/layout.md``). Code here writes
``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

if TYPE_CHECKING:
    import shlex as shlex

    from .._transports._process import connect_process_stream as connect_process_stream
    from .._types._completion import (
        CompleteRequestParams as CompleteRequestParams,
        CompleteResult as CompleteResult,
        CompletionArgument as CompletionArgument,
        CompletionContext as CompletionContext,
    )
    from .._types._prompts import (
        GetPromptResult as GetPromptResult,
        ListPromptsResult as ListPromptsResult,
    )
    from .._types._resources import (
        ListResourcesResult as ListResourcesResult,
        ListResourceTemplatesResult as ListResourceTemplatesResult,
        ReadResourceResult as ReadResourceResult,
    )
    from .._types._roots import ListRootsResult as ListRootsResult
    from .._types._subscriptions import SubscriptionFilter as SubscriptionFilter

if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        globals(),
        {
            "shlex": (),
            ".._transports._process": ("connect_process_stream",),
            ".._types._completion": (
                "CompleteRequestParams",
                "CompleteResult",
                "CompletionArgument",
                "CompletionContext",
            ),
            ".._types._prompts": ("GetPromptResult", "ListPromptsResult"),
            ".._types._resources": (
                "ListResourcesResult",
                "ListResourceTemplatesResult",
                "ReadResourceResult",
            ),
            ".._types._roots": ("ListRootsResult",),
            ".._types._subscriptions": ("SubscriptionFilter",),
        },
    )
