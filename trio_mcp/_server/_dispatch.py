"""Answering one connection's requests: the method handlers of a :class:`Server`.

The handlers of resources, prompts, completion and ``subscriptions/listen`` import
their models (and helpers) when first called, as do rate limits and input rounds (when
a state is sealed or opened): a server that offers only tools does not load them
(start-up time).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio

from .._errors import ErrorCode, McpError, URLElicitationRequired
from .._protocol._envelope import SUBSCRIPTION_ID
from .._protocol._events import InboundRequest
from .._protocol._lifecycle import Phase
from .._session._engine import Session
from .._session._inbound import LATER
from .._types._base import EmptyResult
from .._types._converter import converter_for
from .._types._mrtr import InputRequiredResult
from .._types._tools import CallToolResult, ListToolsResult
from .._versions import FIRST_MODERN_VERSION, MODERN_VERSIONS
from . import _lazy
from ._context import Context, InputRequired, Inputs, StartTask
from ._internals import ServerInternals
from ._pagination import paginate
from ._results import downgrade_content
from ._subscriptions import Change, Subscriber

if TYPE_CHECKING:
    from .._types._completion import CompleteResult
    from .._types._prompts import GetPromptResult, ListPromptsResult
    from .._types._resources import (
        ListResourcesResult,
        ListResourceTemplatesResult,
        ReadResourceResult,
    )
    from .._types._subscriptions import SubscriptionsListenResult
    from ._rate_limit import RateLimiter
    from ._server import Server
    from ._tasks import TaskRunner
    from ._tools import ToolSpec

__all__ = ["Dispatcher"]

#: The params of a tool call that :meth:`Dispatcher.immediate` can take.
_PLAIN_CALL_KEYS = frozenset({"name", "arguments", "_meta"})
#: The revision whose core has tasks (``params.task``, ``tasks/result``); later ones have
#: the tasks extension instead.
CORE_TASKS_VERSION = "2025-11-25"

Handler = Callable[[Context, Any], Awaitable[Any]]

#: The most tasks one ``subscriptions/listen`` follows (more are not agreed to).
_MAX_TASK_IDS = 256

_NOTIFICATION_FOR = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


class Dispatcher:
    """The request and notification handlers of one served connection.

    Args:
        server: the server whose handlers answer.
        principal: who is on the other end of the connection, when the transport
            authenticated it once for all its requests (see :meth:`handle`).
    """

    def __init__(
        self,
        server: Server,
        *,
        principal: str | None = None,
        rate_limiter: RateLimiter | None = None,
        caller: str | None = None,
    ) -> None:
        self.server = server
        #: What the handlers read of the server beyond its public API.
        self._internals = ServerInternals(server)
        self.principal = principal
        #: Whose token bucket this connection's tool calls take from (with a
        #: ``rate_limiter`` shared by several connections); else the principal's.
        self.caller = caller
        #: Legacy ``resources/subscribe``: the URIs this connection subscribed to.
        self.subscribed_uris: set[str] = set()
        self.legacy_subscriber: Subscriber | None = None
        #: The tasks of this connection's entry point (set while it serves, when the server
        #: runs tasks).
        self.tasks: TaskRunner | None = None
        #: Open ``subscriptions/listen`` streams of this connection.
        self._listening: set[Subscriber] = set()
        self._subscriptions_ended = False
        #: The callers' token buckets, with a ``tool_rate_limit``.
        limit = server.tool_rate_limit
        self._rate_limiter: RateLimiter | None = rate_limiter
        if rate_limiter is None and limit is not None:
            self._rate_limiter = _lazy.RateLimiter(limit)
        self._handlers: dict[str, Handler] = {
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "completion/complete": self._complete,
            "subscriptions/listen": self._listen,
            "tasks/get": self._get_task,
            "tasks/update": self._update_task,
            "tasks/cancel": self._cancel_task,
            "tasks/result": self._task_result,
            "tasks/list": self._list_tasks,
        }

    # -- entry points (Session callbacks) ---------------------------------------------------

    @property
    def rate_limited(self) -> bool:
        """Whether ``tools/call`` requests are rate limited."""
        return self._rate_limiter is not None

    async def handle(
        self,
        session: Session,
        request: InboundRequest,
        *,
        principal: str | None = None,
        caller: str | None = None,
    ) -> Any:
        """Answer ``request``. ``principal`` names the caller of this one request (stateless
        HTTP authenticates each request); without it, the connection's :attr:`principal`.
        ``caller`` names the token bucket of a rate-limited tool call (else the
        connection's :attr:`caller`, else the principal)."""
        if principal is None:
            principal = self.principal
        limiter = self._rate_limiter
        if limiter is not None and request.method == "tools/call":
            if caller is None:
                caller = self.caller if self.caller is not None else principal
            retry_after = limiter.acquire(caller)
            if retry_after:
                await trio.lowlevel.checkpoint()
                return limiter.refusal(retry_after)
        ctx = Context(self.server, session, request, None, principal=principal)
        handler = self._handlers.get(request.method)
        if handler is None:
            custom = self._internals.custom_methods.get(request.method)
            if custom is None:
                raise McpError(
                    f"Method not found: {request.method}", code=ErrorCode.METHOD_NOT_FOUND
                )
            handler = custom
        try:
            result = await handler(ctx, request.params)
        except URLElicitationRequired as error:
            # Modern input rounds turned it into questions already (_gathering_input).
            if ctx.era == "modern":
                raise McpError(
                    f"{request.method} cannot ask the client for input in protocol version "
                    f"{request.version}",
                    code=ErrorCode.INTERNAL_ERROR,
                ) from None
            refusal = ctx._url_elicitations_refused(error)
            if refusal is not None:
                raise refusal from None
            raise
        if type(result) is dict and "resultType" not in result and ctx.era == "modern":
            # Every 2026-07-28 result carries resultType; the models write it themselves,
            # and so do the built-in handlers' plain dicts, but a Server.method handler
            # need not know. A copy: the handler's dict may be shared.
            result = {**result, "resultType": "complete"}
        return result

    def plain_call(self, method: str, raw: dict[str, Any] | None) -> ToolSpec | None:
        """The tool a request of ``method`` with ``raw`` params calls, if :meth:`immediate`
        can answer it (see :func:`plain_call`; with a rate limit, none: :meth:`handle`
        knows the caller)."""
        if self._rate_limiter is not None:
            return None
        return plain_call(self._internals.tools, method, raw)

    def immediate(self, session: Session, request: InboundRequest) -> Any:
        """Answer a call of a plain-function tool right away, in the session's receive loop
        (no task, no cancel scope: the function never yields); everything else
        :data:`~trio_mcp.session.LATER`. With a rate limit, calls go the long way too:
        :meth:`handle` knows the caller (stateless HTTP names it per request)."""
        spec = self.plain_call(request.method, request.raw_params)
        if spec is None:
            return LATER
        return answer_plain_call(spec, request)

    async def on_notification(self, session: Session, method: str, params: Any) -> None:
        callback = self._internals.notification_callbacks.get(method)
        if callback is not None:
            await callback(params)

    # -- modern multi round-trip requests ---------------------------------------------------

    async def _gathering_input(
        self, ctx: Context, params: Any, run: Callable[[Context], Awaitable[Any]]
    ) -> Any:
        """Run ``run`` with the request's answers so far; if it asks for more, answer with an
        ``InputRequiredResult`` carrying the questions and a sealed ``requestState``."""
        request = ctx.request
        if request.version not in MODERN_VERSIONS:
            return await run(ctx)
        responses = params.input_responses
        if responses is not None and not isinstance(responses, dict):
            await trio.lowlevel.checkpoint()
            raise McpError(
                "Invalid params: inputResponses must be an object", code=ErrorCode.INVALID_PARAMS
            )
        inputs = Inputs(answers={})
        if params.request_state is not None:
            # Raises -32602 for a tampered, expired or foreign state (another request's,
            # or one issued to another principal).
            state = self._internals.sealer.open(
                params.request_state, binding=_binding(request), principal=ctx.principal
            )
            inputs.answers = dict(state.answers)
            inputs.round = state.round
            if responses:
                # Only the answers to what the last round asked are taken; anything else is
                # ignored (the spec: ignore what the server does not recognize or need), so
                # a client cannot slip in answers to questions it was never asked.
                for key in state.pending:
                    if key in responses:
                        inputs.answers.setdefault(key, responses[key])
        elif responses:
            # Answers may come without a state (a client that asks ahead, or a server that
            # needed no state): nothing says what was asked, so every key is taken.
            inputs.answers.update(responses)
        if responses:
            inputs.round = max(inputs.round, 1)
        may_start_task = ctx._may_start_task
        ctx = Context(self.server, ctx.session, request, inputs, principal=ctx.principal)
        ctx._may_start_task = may_start_task
        try:
            try:
                return await run(ctx)
            except URLElicitationRequired as error:
                raise ctx._url_elicitations_as_input(error) from None
        except InputRequired as need:
            requests = need.requests
        except BaseExceptionGroup as group:
            # Questions asked by several tasks of a nursery in the handler.
            found = _input_required_in(group)
            if found is None:
                raise
            requests = found
        state_token = self._internals.sealer.seal(
            binding=_binding(request),
            answers=inputs.answers,
            pending=tuple(requests),
            round=inputs.round + 1,
            principal=ctx.principal,
        )
        return InputRequiredResult(
            input_requests=requests,  # type: ignore[arg-type]
            request_state=state_token,
        )

    # -- tools ------------------------------------------------------------------------------

    def _cache_hints(self, ctx: Context, ttl_ms: int | None = None) -> dict[str, Any]:
        return {
            "ttl_ms": self.server.cache_ttl_ms if ttl_ms is None else ttl_ms,
            "cache_scope": self.server.cache_scope,
        }

    async def _list_tools(self, ctx: Context, params: Any) -> ListToolsResult:
        await trio.lowlevel.checkpoint()
        version = ctx.request.version
        if version >= FIRST_MODERN_VERSION:
            tools = [spec.tool for spec in self._internals.tools.values()]
        else:  # only object output schemas
            tools = [spec.tool_for(version) for spec in self._internals.tools.values()]
        page, cursor = paginate("tools", tools, params.cursor, self.server.page_size)
        return ListToolsResult(tools=page, next_cursor=cursor, **self._cache_hints(ctx))

    async def _call_tool(
        self, ctx: Context, params: Any
    ) -> CallToolResult | InputRequiredResult | dict[str, Any]:
        spec = self._internals.tools.get(params.name)
        if spec is None:
            await trio.lowlevel.checkpoint()
            raise McpError(f"Unknown tool: {params.name}", code=ErrorCode.INVALID_PARAMS)
        arguments = params.arguments
        if spec.task != "never" and ctx.protocol_version == CORE_TASKS_VERSION:
            # 2025-11-25: a task when the call asks for one (``params.task``).
            if self.tasks is not None and params.task is not None:
                created = await self._start_task(ctx, spec, arguments, {})
                return {"task": await self._core_task(ctx, created["taskId"])}
            if spec.task == "always":
                await trio.lowlevel.checkpoint()
                raise McpError(
                    f"Method not found: tool {params.name!r} runs only as a task: call it "
                    "with params.task",
                    code=ErrorCode.METHOD_NOT_FOUND,
                )
        elif spec.task != "never":
            if self.tasks is not None and ctx.era == "modern" and _lazy.opted_in(ctx):
                if spec.task_start == "immediately":
                    return await self._start_task(ctx, spec, arguments, {})
                ctx._may_start_task = True
                try:
                    return await self._gathering_input(  # type: ignore[no-any-return]
                        ctx, params, lambda c: spec.answer(arguments, c)
                    )
                except StartTask as start:
                    answers = start.inputs.answers if start.inputs is not None else {}
                    return await self._start_task(ctx, spec, arguments, answers)
            if spec.task == "always":
                await trio.lowlevel.checkpoint()
                raise _lazy.not_opted_in()
        result: Any
        if ctx.request.version not in MODERN_VERSIONS:  # no input rounds: the short way
            result = await spec.answer(arguments, ctx)
        else:
            result = await self._gathering_input(ctx, params, lambda c: spec.answer(arguments, c))
        if isinstance(result, CallToolResult):
            content = downgrade_content(result.content, ctx.protocol_version)
            if content is not result.content:
                result = attrs.evolve(result, content=content)
        return result  # type: ignore[no-any-return]

    # -- tasks ------------------------------------------------------------------------------

    async def _start_task(
        self,
        ctx: Context,
        spec: ToolSpec,
        arguments: dict[str, Any] | None,
        answers: dict[str, Any],
    ) -> dict[str, Any]:
        """Answer a tool call with a new task that runs the tool in the task nursery (with
        ``answers``: what input rounds of the request gathered before)."""
        runner = self.tasks
        assert runner is not None

        async def work(task_id: str) -> Any:
            in_task = Context(
                self.server,
                ctx.session,
                ctx.request,
                Inputs(answers=dict(answers)),
                principal=ctx.principal,
                task=(runner, task_id),
            )
            return await spec.answer(arguments, in_task)

        return await runner.create(ctx.principal, work)

    async def _core_task(self, ctx: Context, task_id: str) -> dict[str, Any]:
        """The task as 2025-11-25's ``Task``."""
        runner = self.tasks
        assert runner is not None
        return (await runner.own(task_id, ctx.principal)).core_wire()

    async def _task_result(self, ctx: Context, params: Any) -> Any:
        """``tasks/result`` (2025-11-25): the outcome of the task, once it has one."""
        runner = await self._runner_for(ctx)

        async def ask(request: Any) -> Any:
            return await ctx.session.request(request, related=ctx.request)

        return await runner.outcome(_field(params, "taskId"), ctx.principal, ask)

    async def _list_tasks(self, ctx: Context, params: Any) -> dict[str, Any]:
        """``tasks/list`` (2025-11-25's core; the 2026-07-28 extension has none): the
        caller's own tasks, a page at a time."""
        runner = await self._runner_for(ctx)
        cursor = None if params is None else _field(params, "cursor")
        return await runner.list_core(ctx.principal, cursor, self.server.page_size)

    async def _runner_for(self, ctx: Context) -> TaskRunner:
        """The runner for a ``tasks/*`` request: -32601 from a server that runs no tasks,
        -32021 to a client that did not declare the extension."""
        if self.tasks is None:
            await trio.lowlevel.checkpoint()
            raise McpError(f"Method not found: {ctx.method}", code=ErrorCode.METHOD_NOT_FOUND)
        if ctx.protocol_version == CORE_TASKS_VERSION:
            await trio.lowlevel.checkpoint()
            return self.tasks  # the core tasks: no extension to declare
        if ctx.method in ("tasks/result", "tasks/list"):  # 2025-11-25's core only
            await trio.lowlevel.checkpoint()
            raise McpError(f"Method not found: {ctx.method}", code=ErrorCode.METHOD_NOT_FOUND)
        if not _lazy.opted_in(ctx):
            await trio.lowlevel.checkpoint()
            raise _lazy.not_opted_in()
        return self.tasks

    async def _get_task(self, ctx: Context, params: Any) -> dict[str, Any]:
        runner = await self._runner_for(ctx)
        if ctx.protocol_version == CORE_TASKS_VERSION:
            return (await runner.own(_field(params, "taskId"), ctx.principal)).core_wire()
        return await runner.get(_field(params, "taskId"), ctx.principal)

    async def _update_task(self, ctx: Context, params: Any) -> dict[str, Any]:
        runner = await self._runner_for(ctx)
        return await runner.update(
            _field(params, "taskId"), ctx.principal, _field(params, "inputResponses")
        )

    async def _cancel_task(self, ctx: Context, params: Any) -> dict[str, Any]:
        runner = await self._runner_for(ctx)
        acknowledged = await runner.cancel(_field(params, "taskId"), ctx.principal)
        if ctx.protocol_version == CORE_TASKS_VERSION:  # the task, as it stands now
            return (await runner.own(_field(params, "taskId"), ctx.principal)).core_wire()
        return acknowledged

    # -- resources --------------------------------------------------------------------------

    async def _list_resources(self, ctx: Context, params: Any) -> ListResourcesResult:
        resources = [spec.resource for spec in self._internals.resources.values()]
        for directory in self._internals.directories:
            resources.extend(await directory.list_resources_async())
        await trio.lowlevel.checkpoint()
        page, cursor = paginate("resources", resources, params.cursor, self.server.page_size)
        return _lazy.ListResourcesResult(
            resources=page, next_cursor=cursor, **self._cache_hints(ctx)
        )

    async def _list_templates(self, ctx: Context, params: Any) -> ListResourceTemplatesResult:
        await trio.lowlevel.checkpoint()
        templates = [spec.template for spec in self._internals.templates]
        page, cursor = paginate("templates", templates, params.cursor, self.server.page_size)
        return _lazy.ListResourceTemplatesResult(
            resource_templates=page, next_cursor=cursor, **self._cache_hints(ctx)
        )

    async def _read_resource(
        self, ctx: Context, params: Any
    ) -> ReadResourceResult | InputRequiredResult:
        uri = params.uri

        async def read(c: Context) -> ReadResourceResult:
            static = self._internals.resources.get(uri)
            if static is not None:
                contents = await static.read(c)
                return _lazy.ReadResourceResult(
                    contents=contents, **self._cache_hints(c, static.ttl_ms)
                )
            for template in self._internals.templates:
                kwargs = template.match(uri)
                if kwargs is not None:
                    contents = await template.read(uri, kwargs, c)
                    return _lazy.ReadResourceResult(
                        contents=contents, **self._cache_hints(c, template.ttl_ms)
                    )
            for directory in self._internals.directories:
                found = await directory.read(uri)
                if found is not None:
                    return _lazy.ReadResourceResult(contents=found, **self._cache_hints(c))
            raise _lazy.not_found(uri, c.request.version)

        return await self._gathering_input(ctx, params, read)  # type: ignore[no-any-return]

    async def _subscribe(self, ctx: Context, params: Any) -> EmptyResult:
        await trio.lowlevel.checkpoint()
        self.subscribed_uris.add(params.uri)
        if self.legacy_subscriber is not None:
            self.legacy_subscriber.uris.add(params.uri)
        return EmptyResult()

    async def _unsubscribe(self, ctx: Context, params: Any) -> EmptyResult:
        await trio.lowlevel.checkpoint()
        self.subscribed_uris.discard(params.uri)
        if self.legacy_subscriber is not None:
            self.legacy_subscriber.uris.discard(params.uri)
        return EmptyResult()

    # -- prompts ----------------------------------------------------------------------------

    async def _list_prompts(self, ctx: Context, params: Any) -> ListPromptsResult:
        await trio.lowlevel.checkpoint()
        prompts = [spec.prompt for spec in self._internals.prompts.values()]
        page, cursor = paginate("prompts", prompts, params.cursor, self.server.page_size)
        return _lazy.ListPromptsResult(prompts=page, next_cursor=cursor, **self._cache_hints(ctx))

    async def _get_prompt(self, ctx: Context, params: Any) -> GetPromptResult | InputRequiredResult:
        spec = self._internals.prompts.get(params.name)
        if spec is None:
            await trio.lowlevel.checkpoint()
            raise McpError(
                f"Invalid params: unknown prompt {params.name!r}", code=ErrorCode.INVALID_PARAMS
            )
        arguments = params.arguments
        result = await self._gathering_input(ctx, params, lambda c: spec.get(arguments, c))
        if isinstance(result, _lazy.GetPromptResult):
            contents = downgrade_content([m.content for m in result.messages], ctx.protocol_version)
            if any(c is not m.content for c, m in zip(contents, result.messages, strict=True)):
                messages = [
                    m if c is m.content else attrs.evolve(m, content=c)
                    for c, m in zip(contents, result.messages, strict=True)
                ]
                result = attrs.evolve(result, messages=messages)
        return result  # type: ignore[no-any-return]

    # -- completion -------------------------------------------------------------------------

    async def _complete(self, ctx: Context, params: Any) -> CompleteResult:
        ref = params.ref
        if isinstance(ref, _lazy.PromptReference):
            if ref.name not in self._internals.prompts:
                await trio.lowlevel.checkpoint()
                raise McpError(
                    f"Invalid params: unknown prompt {ref.name!r}", code=ErrorCode.INVALID_PARAMS
                )
            key = ("prompt", ref.name, params.argument.name)
        else:
            # The reference names a template, or a plain resource (nothing to complete).
            if ref.uri not in self._internals.resources and not any(
                t.template.uri_template == ref.uri for t in self._internals.templates
            ):
                await trio.lowlevel.checkpoint()
                raise McpError(
                    f"Invalid params: unknown resource template {ref.uri!r}",
                    code=ErrorCode.INVALID_PARAMS,
                )
            key = ("resource", ref.uri, params.argument.name)
        completer = self._internals.completers.get(key)
        if completer is None:
            await trio.lowlevel.checkpoint()
            return _lazy.CompleteResult(
                completion=_lazy.Completion(values=[], total=0, has_more=False)
            )
        context = (params.context.arguments if params.context is not None else None) or {}
        return _lazy.CompleteResult(
            completion=await completer.complete(params.argument.value, context, ctx)
        )

    # -- subscriptions (modern) -------------------------------------------------------------

    async def _listen(self, ctx: Context, params: Any) -> SubscriptionsListenResult:
        """Acknowledge, then forward the changes the client asked for until it cancels (or the
        server shuts down: then answer, which ends the subscription gracefully)."""
        wanted: _lazy.SubscriptionFilter = params.notifications
        capabilities = self.server.capabilities()
        resources_caps = capabilities.resources
        agreed = _lazy.SubscriptionFilter(
            tools_list_changed=True if wanted.tools_list_changed and capabilities.tools else None,
            prompts_list_changed=True
            if wanted.prompts_list_changed and capabilities.prompts
            else None,
            resources_list_changed=True
            if wanted.resources_list_changed and resources_caps
            else None,
            resource_subscriptions=(
                list(wanted.resource_subscriptions)
                if wanted.resource_subscriptions and resources_caps and resources_caps.subscribe
                else None
            ),
        )
        session, request = ctx.session, ctx.request
        tag = {SUBSCRIPTION_ID: request.id}
        conv = converter_for(request.version)
        task_ids = await self._agreed_task_ids(ctx)
        acknowledged = conv.unstructure(agreed)
        if task_ids is not None:
            acknowledged["taskIds"] = sorted(task_ids)
        # Subscribe before acknowledging, so no change between the two is lost; the
        # acknowledgement still goes out before any change notification.
        with self._internals.hub.subscribe(
            tools=bool(agreed.tools_list_changed),
            prompts=bool(agreed.prompts_list_changed),
            resources=bool(agreed.resources_list_changed),
            uris=set(agreed.resource_subscriptions or ()),
            task_ids=task_ids,
        ) as subscriber:
            self._listening.add(subscriber)
            if self._subscriptions_ended:
                subscriber.send.close()
            try:
                await session.send_notification(
                    "notifications/subscriptions/acknowledged",
                    {"_meta": tag, "notifications": acknowledged},
                    related=request,
                )
                async for change in subscriber.receive:
                    if change[0] == "task":
                        task = await self._task_state(ctx, change[1])
                        if task is None:
                            continue
                        method, notification_params = "notifications/tasks", task
                    else:
                        method, notification_params = _notification_for(change)
                    await session.send_notification(
                        method, {**notification_params, "_meta": tag}, related=request
                    )
            finally:
                self._listening.discard(subscriber)
        return _lazy.SubscriptionsListenResult(meta=dict(tag))

    async def _agreed_task_ids(self, ctx: Context) -> set[str] | None:
        """The tasks a ``subscriptions/listen`` asks status notifications of
        (``notifications.taskIds``, the tasks extension) that the server agrees to: the
        caller's own, known ones. ``None`` when it asks none.

        Raises:
            MissingRequiredClientCapability: it asks without declaring the extension.
        """
        raw = ctx.request.raw_params or {}
        notifications = raw.get("notifications")
        wanted = notifications.get("taskIds") if isinstance(notifications, dict) else None
        if wanted is None:
            await trio.lowlevel.checkpoint()
            return None
        if not _lazy.opted_in(ctx):
            await trio.lowlevel.checkpoint()
            raise _lazy.not_opted_in()
        if not isinstance(wanted, list) or not all(isinstance(t, str) for t in wanted):
            await trio.lowlevel.checkpoint()
            raise McpError(
                "Invalid params: notifications.taskIds must be a list of strings",
                code=ErrorCode.INVALID_PARAMS,
            )
        agreed: set[str] = set()
        for task_id in wanted[:_MAX_TASK_IDS]:
            if await self._task_state(ctx, task_id) is not None:
                agreed.add(task_id)
        return agreed

    async def _task_state(self, ctx: Context, task_id: str) -> dict[str, Any] | None:
        """The task as ``tasks/get`` shows it to this caller now, or ``None`` (unknown,
        expired, another principal's, or a server without tasks)."""
        if self.tasks is None:
            await trio.lowlevel.checkpoint()
            return None
        try:
            return await self.tasks.get(task_id, ctx.principal)
        except McpError:
            return None

    def end_subscriptions(self) -> None:
        """End this connection's ``subscriptions/listen`` streams gracefully (its input
        ended, so nobody will cancel them), and any that start later at once."""
        self._subscriptions_ended = True
        for subscriber in list(self._listening):
            subscriber.send.close()

    # -- legacy change notifications --------------------------------------------------------

    async def forward_changes(self, session: Session) -> None:
        """(legacy sessions) Send list changes and subscribed resource updates, for as long as
        the session runs. Runs in the session's nursery."""
        capabilities = session.connection.capabilities
        with self._internals.hub.subscribe(
            tools=bool(getattr(capabilities, "tools", None)),
            prompts=bool(getattr(capabilities, "prompts", None)),
            resources=bool(getattr(capabilities, "resources", None)),
            uris=self.subscribed_uris,
        ) as subscriber:
            self.legacy_subscriber = subscriber
            async for change in subscriber.receive:
                if session.connection.phase not in (Phase.OPERATING, Phase.INITIALIZING):
                    continue  # modern connections get changes on subscriptions/listen only
                method, params = _notification_for(change)
                try:
                    await session.send_notification(method, params or None)
                except McpError:
                    pass  # e.g. a capability we did not declare: nothing to send


def _binding(request: InboundRequest) -> str:
    """What the ``requestState`` of ``request`` is bound to. The sealing module is imported
    when an input round first needs it, not for every modern call (start-up time)."""
    return _lazy.binding_of(request.method, request.raw_params)


def _input_required_in(group: BaseExceptionGroup[BaseException]) -> dict[str, Any] | None:
    """The questions of a group made only of :class:`InputRequired` (merged), else ``None``."""
    requests: dict[str, Any] = {}
    for exc in group.exceptions:
        if isinstance(exc, InputRequired):
            requests.update(exc.requests)
        elif isinstance(exc, BaseExceptionGroup):
            inner = _input_required_in(exc)
            if inner is None:
                return None
            requests.update(inner)
        else:
            return None
    return requests


def _notification_for(change: Change) -> tuple[str, dict[str, Any]]:
    kind, what = change
    if kind == "updated":
        return "notifications/resources/updated", {"uri": what}
    return _NOTIFICATION_FOR[what], {}


def _field(params: Any, name: str) -> Any:
    """A field of a ``tasks/*`` method's params: a JSON object (the extension's methods), or
    the typed params of a revision that defines the method (2025-11-25's core tasks)."""
    if isinstance(params, dict):
        return params.get(name)
    if attrs.has(type(params)):
        return getattr(params, re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower(), None)
    raise McpError("Invalid params: expected an object", code=ErrorCode.INVALID_PARAMS)


def calls_rate_limited(server: Server, rate_limiter: RateLimiter | None) -> bool:
    """Whether a :class:`Dispatcher` of ``server`` given ``rate_limiter`` limits tool calls
    (it makes a limiter of its own from the server's ``tool_rate_limit``)."""
    return rate_limiter is not None or server.tool_rate_limit is not None


def plain_call(
    tools: Mapping[str, ToolSpec], method: str, raw: dict[str, Any] | None
) -> ToolSpec | None:
    """The tool of ``tools`` that a request of ``method`` with ``raw`` params calls, if the
    call can be answered at once by :func:`answer_plain_call` (a plain-function tool, no
    task, no input rounds; a rate limit is the caller's to check); else ``None``. Reads only
    the raw params: a transport may ask before it hands the request to the connection."""
    if method != "tools/call" or raw is None:
        return None
    name = raw.get("name")
    spec = tools.get(name) if type(name) is str else None
    arguments = raw.get("arguments")
    meta = raw.get("_meta")
    if (
        spec is None
        or not spec.runs_inline
        or spec.task != "never"
        or (arguments is not None and type(arguments) is not dict)
        or (meta is not None and type(meta) is not dict)
        or len(raw.keys() - _PLAIN_CALL_KEYS) > 0  # task, input rounds: the long way
    ):
        return None
    return spec


def answer_plain_call(spec: ToolSpec, request: InboundRequest) -> Any:
    """The result of ``request``, a call of ``spec``, a tool that :attr:`~ToolSpec.runs_inline`
    (see :meth:`Dispatcher.plain_call`): its function runs now, in the calling task;
    :data:`~trio_mcp.session.LATER` if the call needs the long way after all."""
    raw = request.raw_params
    assert raw is not None
    try:
        result = spec.answer_now(raw.get("arguments"), request.version)
    except URLElicitationRequired:
        # What it becomes depends on the era and the client (see handle): the long
        # way decides. The function runs again there, as it would on a retry.
        return LATER
    if isinstance(result, CallToolResult):
        content = downgrade_content(result.content, request.version)
        if content is not result.content:
            result = attrs.evolve(result, content=content)
    return result
