"""What the server loads on first use of a feature: resources, URI templates, prompts,
completion, subscriptions, elicitation, sampling, roots, rate limits, ``requestState`` sealing
and tasks. A server that offers only tools loads none of them (start-up time; see "What
importing loads" in ``docs/reference/layout.md``). Code here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

if TYPE_CHECKING:
    import secrets as secrets

    from .._types._completion import (
        CompleteResult as CompleteResult,
        Completion as Completion,
        PromptReference as PromptReference,
    )
    from .._types._elicitation import (
        ElicitRequest as ElicitRequest,
        ElicitRequestFormParams as ElicitRequestFormParams,
        ElicitRequestURLParams as ElicitRequestURLParams,
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
    from .._types._roots import ListRootsRequest as ListRootsRequest
    from .._types._sampling import (
        CreateMessageRequest as CreateMessageRequest,
        CreateMessageRequestParams as CreateMessageRequestParams,
        SamplingMessage as SamplingMessage,
    )
    from .._types._subscriptions import (
        SubscriptionFilter as SubscriptionFilter,
        SubscriptionsListenResult as SubscriptionsListenResult,
    )
    from ._completion import CompleterSpec as CompleterSpec
    from ._forms import (
        check_form_schema as check_form_schema,
        form_schema_for_2025_06_18 as form_schema_for_2025_06_18,
        schema_problems as schema_problems,
    )
    from ._prompts import PromptSpec as PromptSpec
    from ._rate_limit import RateLimit as RateLimit, RateLimiter as RateLimiter
    from ._request_state import (
        RequestStateSealer as RequestStateSealer,
        binding_of as binding_of,
    )
    from ._resources import (
        DirectoryResources as DirectoryResources,
        ResourceSpec as ResourceSpec,
        TemplateSpec as TemplateSpec,
        not_found as not_found,
    )
    from ._tasks import TaskRunner as TaskRunner, not_opted_in as not_opted_in, opted_in as opted_in
    from ._uritemplate import UriTemplate as UriTemplate

if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        globals(),
        {
            "secrets": (),
            ".._types._completion": ("CompleteResult", "Completion", "PromptReference"),
            ".._types._elicitation": (
                "ElicitRequest",
                "ElicitRequestFormParams",
                "ElicitRequestURLParams",
            ),
            ".._types._prompts": ("GetPromptResult", "ListPromptsResult"),
            ".._types._resources": (
                "ListResourcesResult",
                "ListResourceTemplatesResult",
                "ReadResourceResult",
            ),
            ".._types._roots": ("ListRootsRequest",),
            ".._types._sampling": (
                "CreateMessageRequest",
                "CreateMessageRequestParams",
                "SamplingMessage",
            ),
            ".._types._subscriptions": ("SubscriptionFilter", "SubscriptionsListenResult"),
            "._completion": ("CompleterSpec",),
            "._forms": ("check_form_schema", "form_schema_for_2025_06_18", "schema_problems"),
            "._prompts": ("PromptSpec",),
            "._rate_limit": ("RateLimit", "RateLimiter"),
            "._request_state": ("RequestStateSealer", "binding_of"),
            "._resources": ("DirectoryResources", "ResourceSpec", "TemplateSpec", "not_found"),
            "._tasks": ("TaskRunner", "not_opted_in", "opted_in"),
            "._uritemplate": ("UriTemplate",),
        },
    )
