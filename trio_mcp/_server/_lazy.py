"""What the server loads on first use of a feature: resources, URI templates, prompts,
completion, subscriptions, elicitation, sampling, roots, rate limits, ``requestState`` sealing
and tasks. A server that offers only tools loads none of them (start-up time; see "What
importing loads" in ``docs/reference/layout.md``). Code here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    import secrets
    from .._types._completion import CompleteResult, Completion, PromptReference
    from .._types._elicitation import ElicitRequest, ElicitRequestFormParams
    from .._types._elicitation import ElicitRequestURLParams
    from .._types._prompts import GetPromptResult, ListPromptsResult
    from .._types._resources import ListResourcesResult, ListResourceTemplatesResult
    from .._types._resources import ReadResourceResult
    from .._types._roots import ListRootsRequest
    from .._types._sampling import CreateMessageRequest, CreateMessageRequestParams
    from .._types._sampling import SamplingMessage
    from .._types._subscriptions import SubscriptionFilter, SubscriptionsListenResult
    from .._apps._format import AppCsp, AppMeta, Permission, ToolUi, check_ui_uri
    from .._apps._serving import AppSpec
    from .._skills._catalog import Skill, as_skills
    from .._skills._serving import ServedSkills
    from ._completion import CompleterSpec
    from ._forms import check_form_schema, form_schema_for_2025_06_18, schema_problems
    from ._prompts import PromptSpec
    from ._rate_limit import RateLimit, RateLimiter
    from ._request_state import RequestStateSealer, binding_of
    from ._resources import DirectoryResources, ResourceSpec, TemplateSpec, not_found
    from ._tasks import TaskRunner, not_opted_in, opted_in
    from ._uritemplate import UriTemplate
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
