"""The :class:`Context` a handler receives: its request, progress, logging, and what it can
ask of the client (elicitation, sampling, roots) in either era.

Asking the client
-----------------

In the legacy era, :meth:`Context.elicit` and friends send a request to the
client and wait for the answer. In the modern era (2026-07-28) servers send
no requests: the handler's call raises an internal signal that unwinds it,
the server answers the client with an ``InputRequiredResult``, and the
client retries the request with the answers. On the retry **the handler runs
again from the top**, and the same question (the same ``key``; by default
the n-th question asked) now returns its answer at once. So in the modern
era, work a handler does before asking is repeated on each round: ask
first, or make that work idempotent.

The elicitation, sampling and roots models (and the form schema checks) are imported
by the methods that ask: a server whose handlers never ask does not load them
(start-up time).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import trio

from .._errors import (
    ErrorCode,
    McpError,
    MissingRequiredClientCapability,
    URLElicitationRequired,
)
from .._protocol._events import InboundRequest
from .._session._engine import Session
from .._types._base import Implementation, LoggingLevel, Request, RequestId
from .._types._capabilities import ClientCapabilities
from .._types._content import TextContent
from .._types._converter import structure
from .._types._methods import MRTR_METHODS
from .._util import open_nursery_unwrapped
from .._versions import MODERN_VERSIONS, Era
from . import _lazy

if TYPE_CHECKING:
    from .._types._elicitation import ElicitResult
    from .._types._roots import Root
    from .._types._sampling import (
        CreateMessageResult,
        ModelPreferences,
        SamplingMessage,
        ToolChoice,
    )
    from .._types._tools import Tool
    from ._server import Server
    from ._tasks import TaskRunner

__all__ = ["Context", "InputRequired", "Inputs", "StartTask"]


class InputRequired(BaseException):
    """Unwinds a modern-era handler that needs input from the client.

    A ``BaseException`` (like ``trio.Cancelled``) so ``except Exception`` in
    handler code does not swallow it.
    """

    def __init__(self, requests: dict[str, Request[Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


class StartTask(BaseException):
    """Unwinds a handler that called :meth:`Context.start_task` before its call became a
    task: the dispatcher creates the task, which runs the handler again from the top with
    the answers gathered so far."""

    def __init__(self, inputs: Inputs | None) -> None:
        super().__init__("start the task")
        self.inputs = inputs


@attrs.define
class Inputs:
    """A modern request's answers so far (from ``requestState`` and ``inputResponses``)."""

    answers: dict[str, Any]
    round: int = 0
    asked: int = 0


def _capability_needed(request: Request[Any]) -> dict[str, Any] | None:
    """The client capability (as a capabilities object) ``request`` needs, with what it
    must contain."""
    method = getattr(request, "method", None)
    params: Any = getattr(request, "params", None)
    if method == "elicitation/create":
        if params.mode == "url":  # ElicitRequestURLParams
            return {"elicitation": {"url": {}}}
        return {"elicitation": {}}
    if method == "sampling/createMessage":
        if params.tools or params.tool_choice:
            return {"sampling": {"tools": {}}}
        return {"sampling": {}}
    if method == "roots/list":
        return {"roots": {}}
    return None


def _has(capabilities: ClientCapabilities | None, needed: dict[str, Any]) -> bool:
    if capabilities is None:
        return False
    ((name, inner),) = needed.items()
    cap = getattr(capabilities, name, None)
    if cap is None:
        return False
    if name == "elicitation":
        # An empty elicitation capability means form mode only.
        if "url" in inner:
            return cap.url is not None
        return cap.form is not None or cap.url is None
    return all(getattr(cap, key, None) is not None for key in inner)


class Context:
    """What a handler can do besides returning its result.

    Ask for it by annotating a parameter with ``Context``::

        @server.tool()
        async def fetch(url: str, ctx: Context) -> str:
            await ctx.info(f"fetching {url}")
            ...

    The context is valid while the handler runs.
    """

    def __init__(
        self,
        server: Server,
        session: Session,
        request: InboundRequest,
        inputs: Inputs | None,
        *,
        principal: str | None = None,
        task: tuple[TaskRunner, str] | None = None,
    ) -> None:
        self.server = server
        self.session = session
        self.request = request
        self._inputs = inputs
        self._principal = principal
        self._last_progress: float | None = None
        #: (runner, task id) when the handler runs as a task.
        self._task = task
        #: Whether :meth:`start_task` turns this call into a task (the tool's
        #: ``task_start="on_start_task"``, and the client opted in).
        self._may_start_task = False

    # -- what the request says --------------------------------------------------------------

    @property
    def request_id(self) -> RequestId:
        """The JSON-RPC id of the request this handler answers."""
        return self.request.id

    @property
    def method(self) -> str:
        return self.request.method

    @property
    def protocol_version(self) -> str:
        """The revision this request is answered in."""
        return self.request.version

    @property
    def era(self) -> Era:
        return "modern" if self.request.version in MODERN_VERSIONS else "legacy"

    @property
    def client_info(self) -> Implementation | None:
        if self.request.envelope is not None:
            return self.request.envelope.client_info
        return self.session.connection.peer_info

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        if self.request.envelope is not None:
            return self.request.envelope.client_capabilities
        caps = self.session.connection.peer_capabilities
        return caps if isinstance(caps, ClientCapabilities) else None

    @property
    def principal(self) -> str | None:
        """Who is asking, as the transport authenticated them: the ``principal`` hook of
        :func:`trio_mcp.http.asgi_app` for a stateless HTTP request, or the ``principal``
        given to :meth:`Server.serve <trio_mcp.Server.serve>` for a whole connection.
        ``None`` when nothing authenticated the caller (stdio, an app without the hook).

        Modern era: a ``requestState`` is bound to it, and refused when another
        principal presents it."""
        return self._principal

    @property
    def cancelled(self) -> bool:
        """Whether the client has cancelled this request (``notifications/cancelled``; over
        stateless HTTP, by disconnecting).

        Reading it never blocks and never raises. There is seldom a need to: the
        handler is cancelled as well, and :exc:`trio.Cancelled` arrives at its next
        checkpoint. It is for code that does not see that: a section shielded with
        ``trio.CancelScope(shield=True)`` (cleanup that must finish, but may skip what
        only the client would have wanted), or a long computation between
        checkpoints. There is deliberately no handle to cancel the request: a request
        is answered; to end it early, return or raise.
        """
        if self._task is not None:
            runner, task_id = self._task
            return runner.cancel_called(task_id)
        return self.request.cancelled

    @property
    def task_id(self) -> str | None:
        """The task this handler runs as (the tasks extension), or ``None`` for a plain
        request."""
        return self._task[1] if self._task is not None else None

    @property
    def round(self) -> int:
        """Modern era: how many times this request was retried with input (0 at first)."""
        return self._inputs.round if self._inputs is not None else 0

    # -- progress and logging ---------------------------------------------------------------

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress, if the client asked for it (otherwise a no-op).

        ``progress`` must grow with each report (the spec requires it); a report
        that does not is dropped. Blocks while the notification is sent.

        In a task there is no request to notify: the report becomes the task's
        ``statusMessage`` (``"3/10: message"``), which clients see when they poll.
        """
        if self._last_progress is not None and progress <= self._last_progress:
            await trio.lowlevel.checkpoint()
            return
        self._last_progress = progress
        if self._task is not None:
            runner, task_id = self._task
            done = f"{progress:g}" if total is None else f"{progress:g}/{total:g}"
            await runner.report(task_id, done if message is None else f"{done}: {message}")
            return
        await self.session.send_progress(self.request, progress, total, message)

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send a log message to the client, if it wants this level.

        Legacy era: at or above the level set with ``logging/setLevel``. Modern
        era: only if this request set ``logLevel``, and on this request's
        stream only. Either way nothing is sent by a server created with
        ``logging=False`` (it did not declare the capability). Blocks while the
        notification is sent.
        """
        capabilities = self.session.connection.capabilities
        if getattr(capabilities, "logging", None) is None or self._task is not None:
            # (A task's request was answered long ago: there is no stream to log on.)
            await trio.lowlevel.checkpoint()
            return
        await self.session.log(level, data, logger=logger, related=self.request)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def notice(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("notice", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    # -- asking the client ------------------------------------------------------------------

    async def ask(self, requests: Mapping[str, Request[Any]]) -> dict[str, Any]:
        """Ask the client several things at once; returns the typed answers by key.

        Legacy era: the requests go out together and this blocks until all are
        answered. Modern era: see the module notes (the handler is re-run). In a task
        (the tasks extension): the task goes ``input_required`` with the requests, and
        this blocks until the client answers them all with ``tasks/update``.

        Raises:
            MissingRequiredClientCapability: the client did not declare a capability
                one of the requests needs (nothing is sent).
            McpError: the client answered one of them with an error (legacy era).
        """
        requests = dict(requests)
        refusal = self._missing_capabilities(requests.values())
        if refusal is not None:
            await trio.lowlevel.checkpoint()
            raise refusal
        if self._task is not None:
            runner, task_id = self._task
            # What the call gathered in input rounds before it became a task is answered.
            gathered = self._inputs.answers if self._inputs is not None else {}
            answers = {
                k: structure(gathered[k], r.result_model)
                for k, r in requests.items()
                if k in gathered
            }
            rest = {k: r for k, r in requests.items() if k not in gathered}
            if rest:
                answers.update(await runner.ask(task_id, rest))
            else:
                await trio.lowlevel.checkpoint()
            return answers
        if self.era == "legacy":
            return await self._ask_legacy(requests)
        return await self._ask_modern(requests)

    def _missing_capabilities(
        self, requests: Iterable[Request[Any]]
    ) -> MissingRequiredClientCapability | None:
        """The error for asking ``requests`` of a client that did not declare what they need
        (``None``: it did)."""
        capabilities = self.client_capabilities
        missing: dict[str, Any] = {}
        for request in requests:
            needed = _capability_needed(request)
            if needed is not None and not _has(capabilities, needed):
                missing.update(needed)
        if not missing:
            return None
        return MissingRequiredClientCapability(
            f"the client did not declare {', '.join(missing)} support, which this request needs",
            required_capabilities=missing,
        )

    def _url_elicitations_refused(
        self, error: URLElicitationRequired
    ) -> MissingRequiredClientCapability | None:
        """(legacy era) Why ``error`` (-32042) cannot be sent to this client: it did not
        declare URL-mode elicitation, or its revision predates it (``None``: it can)."""
        requests = [_lazy.ElicitRequest(params=params) for params in error.elicitations]
        if self.protocol_version < "2025-11-25" and requests:
            return MissingRequiredClientCapability(
                f"URL-mode elicitation does not exist in protocol version {self.protocol_version}",
                required_capabilities={"elicitation": {"url": {}}},
            )
        return self._missing_capabilities(requests)

    def _url_elicitations_as_input(self, error: URLElicitationRequired) -> InputRequired:
        """(modern era) ``error``'s elicitations as the questions of an input round, by
        elicitation id (the modern revision has no -32042 error, and no elicitation ids:
        the retry runs the handler again).

        Raises:
            MissingRequiredClientCapability: the client did not declare URL-mode elicitation.
        """
        requests: dict[str, Request[Any]] = {
            str(params.elicitation_id): _lazy.ElicitRequest(
                params=attrs.evolve(params, elicitation_id=None)
            )
            for params in error.elicitations
        }
        refusal = self._missing_capabilities(requests.values())
        if refusal is not None:
            raise refusal
        return InputRequired(requests)

    async def _ask_legacy(self, requests: dict[str, Request[Any]]) -> dict[str, Any]:
        answers: dict[str, Any] = {}

        async def one(key: str, request: Request[Any]) -> None:
            answers[key] = await self.session.request(request, related=self.request)

        if len(requests) == 1:
            ((key, request),) = requests.items()
            await one(key, request)
        else:
            # If one is refused the others are cancelled, and the refusal comes out as
            # itself (not in a group), as it does for a single request.
            async with open_nursery_unwrapped() as nursery:
                for key, request in requests.items():
                    nursery.start_soon(one, key, request)
        return answers

    async def _ask_modern(self, requests: dict[str, Request[Any]]) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        if self._inputs is None or self.request.method not in MRTR_METHODS:
            raise McpError(
                f"{self.request.method} cannot ask the client for input in protocol version "
                f"{self.request.version}",
                code=ErrorCode.INTERNAL_ERROR,
            )
        unanswered = {k: r for k, r in requests.items() if k not in self._inputs.answers}
        if unanswered:
            raise InputRequired(unanswered)
        answers = {}
        for key, request in requests.items():
            try:
                answers[key] = structure(self._inputs.answers[key], request.result_model)
            except ValueError as exc:
                raise McpError(
                    f"Invalid params: inputResponses[{key!r}]: {exc}", code=ErrorCode.INVALID_PARAMS
                ) from None
        return answers

    def _next_key(self, key: str | None) -> str:
        if key is not None:
            return key
        if self._inputs is None:
            self._inputs = Inputs(answers={})
        self._inputs.asked += 1
        return f"input-{self._inputs.asked}"

    async def start_task(self) -> None:
        """Turn this call into a task from here on (the tasks extension), for a tool
        registered with ``task_start="on_start_task"``.

        Whatever the handler asked before this point was asked in input rounds of the
        request itself (2026-07-28 ``InputRequiredResult``); at this call the request is
        answered with a new task, which runs the handler **again from the top** with
        those answers (so the same questions, by the same keys, return at once). Inside
        the task, and in a call that does not become a task (the client did not opt in,
        or the tool is not registered so), this only checkpoints.
        """
        await trio.lowlevel.checkpoint()
        if self._may_start_task and self._task is None:
            raise StartTask(self._inputs)

    async def _ask_one(self, request: Request[Any], key: str | None) -> Any:
        key = self._next_key(key)
        return (await self.ask({key: request}))[key]

    async def elicit(
        self,
        message: str,
        schema: Mapping[str, Any],
        *,
        key: str | None = None,
        validate: bool = True,
    ) -> ElicitResult:
        """Ask the user for structured input (form mode).

        ``schema`` is the requested JSON Schema: a flat object whose properties are
        primitives (``string``, ``number``, ``integer``, ``boolean``) or enums
        (single-select ``string`` with ``enum`` or ``oneOf``; multi-select ``array``
        whose ``items`` have ``enum`` or ``anyOf``), as the spec restricts. Defaults
        (``"default"``) are passed to the client for pre-filling.

        Returns the user's answer: ``accept`` with ``content``, ``decline`` or
        ``cancel``. With ``validate`` an accepted ``content`` is checked against
        ``schema`` (needs ``jsonschema``; skipped when it is not installed).

        Raises:
            ValueError: ``schema`` is not a flat object of primitive properties.
            MissingRequiredClientCapability: the client cannot do form elicitation.
            McpError: -32602 if the answer does not match ``schema``.
        """
        requested = dict(schema)
        requested.setdefault("type", "object")
        _lazy.check_form_schema(requested)
        if self.era == "legacy" and self.protocol_version < "2025-11-25":
            requested = _lazy.form_schema_for_2025_06_18(requested)
        params = _lazy.ElicitRequestFormParams(message=message, requested_schema=requested)
        result: ElicitResult = await self._ask_one(_lazy.ElicitRequest(params=params), key)
        if validate and result.action == "accept" and result.content is not None:
            problems = _lazy.schema_problems(requested, result.content)
            if problems:
                raise McpError(
                    "Invalid params: the elicitation answer does not match the requested "
                    "schema: " + "; ".join(problems),
                    code=ErrorCode.INVALID_PARAMS,
                )
        return result

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        key: str | None = None,
    ) -> ElicitResult:
        """Ask the user to complete an interaction at ``url``, out of band (URL mode).

        The answer says whether the user agreed to go there (``accept``), not that
        the interaction is done. In the legacy era (2025-11-25) the request carries
        an ``elicitationId`` (``elicitation_id``, or a random one); when the
        interaction is done, announce it with :meth:`elicitation_complete` and that
        id. In the modern era the client retries once the user is done.

        Raises:
            MissingRequiredClientCapability: the client did not declare ``elicitation.url``.
        """
        if self.era == "legacy" and elicitation_id is None:
            elicitation_id = _lazy.secrets.token_urlsafe(12)
        params = _lazy.ElicitRequestURLParams(
            message=message,
            url=url,
            elicitation_id=elicitation_id if self.era == "legacy" else None,
        )
        result: ElicitResult = await self._ask_one(_lazy.ElicitRequest(params=params), key)
        return result

    async def elicitation_complete(self, elicitation_id: str) -> None:
        """(legacy era, 2025-11-25) Tell the client that the URL-mode elicitation
        ``elicitation_id`` finished (``notifications/elicitation/complete``): one this
        server asked for with :meth:`elicit_url`, or listed in a
        :exc:`~trio_mcp.URLElicitationRequired` it raised. The client may then retry.

        A no-op in other revisions (the modern client retries by itself) and for a
        client that did not declare URL-mode elicitation (it never saw the id). Blocks
        while the notification is sent.
        """
        if (
            self.era == "modern"
            or self.protocol_version < "2025-11-25"
            or not _has(self.client_capabilities, {"elicitation": {"url": {}}})
        ):
            await trio.lowlevel.checkpoint()
            return
        await self.session.send_notification(
            "notifications/elicitation/complete", {"elicitationId": elicitation_id}
        )

    async def sample(
        self,
        messages: str | Sequence[SamplingMessage],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: ModelPreferences | None = None,
        tools: Sequence[Tool] | None = None,
        tool_choice: ToolChoice | None = None,
        metadata: Mapping[str, Any] | None = None,
        key: str | None = None,
    ) -> CreateMessageResult:
        """Ask the client's model for a completion (``sampling/createMessage``).

        ``messages`` may be a plain string (one user message). ``tools`` needs a
        client that declared ``sampling.tools``.
        """
        if isinstance(messages, str):
            messages = [_lazy.SamplingMessage(role="user", content=TextContent(text=messages))]
        params = _lazy.CreateMessageRequestParams(
            messages=list(messages),
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=list(stop_sequences) if stop_sequences is not None else None,
            model_preferences=model_preferences,
            tools=list(tools) if tools is not None else None,
            tool_choice=tool_choice,
            metadata=dict(metadata) if metadata is not None else None,
        )
        result: CreateMessageResult = await self._ask_one(
            _lazy.CreateMessageRequest(params=params), key
        )
        return result

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (``roots/list``)."""
        result = await self._ask_one(_lazy.ListRootsRequest(), key)
        return list(result.roots)
