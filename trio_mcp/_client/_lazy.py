"""What the client loads on first use: the models of the features a client that only calls
tools never meets (resources, prompts, completion, subscriptions, roots). Code in this
package writes ``_lazy.Name``; the first read imports the module (see
:func:`trio_mcp._lazy.on_first_use`, and "What importing loads" in
``docs/reference/layout.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

if TYPE_CHECKING:
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
