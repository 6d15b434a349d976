"""The :class:`Server`: what it offers (tools, resources, prompts, completions) and serving
it over a message stream.

The modules of resources, prompts, completion, rate limiting and ``requestState``
sealing are imported when the feature is first used (something registered, a limit
set, a state sealed): a server that offers only tools does not load them (start-up
time).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, Unpack, overload

import attrs
import trio

from .._protocol._connection import Connection
from .._session._engine import Session, connect_session
from .._session._options import SessionSettings
from .._transports._stream import MessageStream
from .._types._base import Icon, Implementation
from .._types._capabilities import (
    PromptsCapability,
    ResourcesCapability,
    ServerCapabilities,
    ToolsCapability,
)
from .._versions import SUPPORTED_VERSIONS
from . import _lazy
from ._context import Context
from ._dispatch import Dispatcher
from ._subscriptions import Hub
from ._task_settings import TASKS_EXTENSION, TaskSettings
from ._tools import ToolOptions, ToolSpec

if TYPE_CHECKING:
    from .._apps._format import AppCsp, Permission
    from .._apps._serving import AppSpec
    from .._skills._catalog import DynamicSkill, Skill
    from .._skills._serving import ServedSkills
    from .._tasks._store import TaskStore
    from ._completion import Completer, CompleterSpec
    from ._prompts import PromptOptions, PromptSpec
    from ._rate_limit import RateLimit
    from ._request_state import RequestStateSealer
    from ._resources import (
        DirectoryOptions,
        DirectoryResources,
        ResourceOptions,
        ResourceSpec,
        TemplateSpec,
    )
    from ._tasks import TaskRunner

__all__ = ["ServeOptions", "Server"]

#: The Skills extension's identifier (``trio_mcp.skills.SKILLS_EXTENSION``).
_SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
_APPS_EXTENSION = "io.modelcontextprotocol/ui"

F = TypeVar("F", bound=Callable[..., Any])


class ServeOptions(SessionSettings, total=False):
    """The keyword options of :meth:`Server.serve` as one typed dictionary (all but
    ``task_status``, which ``nursery.start`` passes): ``principal``, ``task_runner`` and the
    session's :class:`~trio_mcp.session.SessionSettings`. The ``server_options`` of
    :func:`trio_mcp.testing.connect` and :class:`~trio_mcp.host.InProcessServerConfig`, so
    a misspelt one is an error your type checker reports."""

    principal: str | None
    task_runner: TaskRunner | None


class Server:
    """An MCP server: register what it offers, then serve it over any transport.

    ::

        server = Server("weather", version="1.0")

        @server.tool()
        async def forecast(city: str, days: int = 3) -> str:
            \"\"\"The forecast for a city.\"\"\"
            return f"sunny in {city} for {days} days"

    The same server answers both protocol eras on the same connection or
    endpoint: ``initialize``-handshake clients (2024-11-05 to 2025-11-25) and
    stateless 2026-07-28 clients. Handlers do not need to care which.

    Args:
        name, version, title, description, website_url, icons: what the server
            says about itself (``serverInfo``).
        instructions: guidance for the model on using this server.
        tools, resources, prompts: declare the capability even while nothing is
            registered (for servers that add things later); by default each is
            declared once something is registered before a connection starts.
        logging: declare the ``logging`` capability (on by default).
        extensions: the protocol extensions this server supports, by identifier
            (``{"io.modelcontextprotocol/skills": {"directoryRead": True}}``); each
            value is that extension's settings object (``{}`` for none). They are
            declared as ``capabilities.extensions``, which only 2026-07-28 and later
            define: peers on older revisions are not sent them. Answer the
            extension's methods with :meth:`method` (:meth:`add_skills` declares and
            answers the Skills extension itself).
        page_size: items per page of every list.
        cache_ttl_ms, cache_scope: the caching hints of modern list and read
            results (2026-07-28); 0 means "immediately stale". A resource may set
            its own ``ttl_ms``.
        secret: the key that seals ``requestState`` (16+ bytes). Servers behind a
            load balancer must share it; by default each process draws one.
        previous_secrets: keys rotated out, newest first (16+ bytes each): states they
            sealed still open, so a fleet can change its ``secret`` without refusing
            rounds in flight. Keep each for ``request_state_ttl`` seconds after it
            stopped sealing, then drop it.
        request_state_ttl: seconds a ``requestState`` stays valid.
        versions: the protocol revisions to accept.
        tool_rate_limit: limit ``tools/call`` requests, as the spec says servers
            must (``RateLimit(calls=10, per=60)``; off by default). Each caller has
            its own token bucket: a connection (stdio, WebSocket, a memory pair, an
            HTTP+SSE session), or over Streamable HTTP a caller of the app (the
            principal ``asgi_app(principal=...)`` names, else the peer address), one
            bucket for all its sessions and stateless requests (``asgi_app`` and
            ``serve`` also take ``tool_rate_limit``, for this server over HTTP only).
            Every ``tools/call`` request counts, the retries of
            an input round and calls of unknown tools too. A call over the limit is
            answered with a tool error result (``isError: true``, saying when to
            try again) and the tool does not run: the spec has no error code for
            it, keeps -32020 to -32099 for codes it defines and tells new
            implementations not to use -32000 to -32019, while an error result
            reaches every client and lets the model wait and retry. With a limit,
            plain-``def`` tools are called the way ``async def`` ones are (in a
            task), since the limit needs to know the caller.
        tasks: how calls that become tasks run and where they are recorded
            (:class:`~trio_mcp.server.TaskSettings`: an in-memory store by default;
            SQLite or Redis to survive a restart). Given, or a tool registered with
            ``task=``, the server declares the ``io.modelcontextprotocol/tasks``
            extension (2026-07-28 and later) and every serving entry point runs a task
            nursery for as long as it serves.
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.0.0",
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Icon] | None = None,
        instructions: str | None = None,
        tools: bool | None = None,
        resources: bool | None = None,
        prompts: bool | None = None,
        logging: bool = True,
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
        page_size: int = 100,
        cache_ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "public",
        secret: bytes | None = None,
        previous_secrets: Sequence[bytes] = (),
        request_state_ttl: float = 600.0,
        versions: Sequence[str] = SUPPORTED_VERSIONS,
        clock: Callable[[], float] = time.time,
        tool_rate_limit: RateLimit | None = None,
        tasks: TaskSettings | None = None,
    ) -> None:
        self.info = Implementation(
            name=name,
            version=version,
            title=title,
            description=description,
            website_url=website_url,
            icons=list(icons) if icons is not None else None,
        )
        self.instructions = instructions
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        _check_ttl(cache_ttl_ms)
        self._declare = {"tools": tools, "resources": resources, "prompts": prompts}
        self._logging = logging
        self._extensions = _check_extensions(extensions)
        self.page_size = page_size
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.versions = tuple(versions)
        if tool_rate_limit is not None and not isinstance(tool_rate_limit, _lazy.RateLimit):
            raise TypeError(f"tool_rate_limit must be a RateLimit, not {tool_rate_limit!r}")
        #: The limit on ``tools/call`` (each connection takes it when it starts).
        self.tool_rate_limit = tool_rate_limit
        #: How tasks run (the tasks extension): set when given, or when a tool that can
        #: run as a task is first added (then the defaults: an in-memory store).
        self.tasks = tasks
        self._secret = secret or os.urandom(32)
        self._secret_drawn = not secret
        if len(self._secret) < 16:  # checked now, though the sealer is built on first use
            raise ValueError("the requestState secret must be at least 16 bytes")
        self._previous_secrets = tuple(previous_secrets)
        for index, key in enumerate(self._previous_secrets):
            if not isinstance(key, bytes) or len(key) < 16:
                raise ValueError(
                    f"previous_secrets[{index}]: a requestState key must be at least 16 bytes"
                )
        self._request_state_ttl = request_state_ttl
        self._clock = clock
        self._request_state_sealer: RequestStateSealer | None = None
        self._tools: dict[str, ToolSpec] = {}
        self._resources: dict[str, ResourceSpec] = {}
        self._templates: list[TemplateSpec] = []
        self._directories: list[DirectoryResources] = []
        self._skills: ServedSkills | None = None
        self._prompts: dict[str, PromptSpec] = {}
        self._completers: dict[tuple[str, str, str], CompleterSpec] = {}
        self._custom_methods: dict[str, Callable[[Context, Any], Awaitable[Any]]] = {}
        self._notification_callbacks: dict[str, Callable[[Any], Awaitable[None]]] = {}
        self._hub = Hub()
        self._capabilities_cache: dict[tuple[bool, ...], ServerCapabilities] = {}

    @property
    def name(self) -> str:
        return self.info.name

    def _share_drawn_secret(self, secret: bytes) -> None:
        """Seal with ``secret`` instead of the key this process drew, unless one was given:
        what ``serve(workers=N)`` does in each worker, so that every worker opens the
        ``requestState`` another sealed."""
        if self._secret_drawn:
            self._secret = secret
            self._request_state_sealer = None

    def _use_fleet_keys(self, current: bytes, accepted: Sequence[bytes]) -> None:
        """Seal with ``current`` and open with it and ``accepted`` too, unless a ``secret``
        was given: the keys a fleet keeps in Redis (see :mod:`trio_mcp.fleet`)."""
        previous = tuple(key for key in accepted if key != current)
        if self._secret_drawn and (current, previous) != (self._secret, self._previous_secrets):
            self._secret, self._previous_secrets = current, previous
            self._request_state_sealer = None

    @property
    def _sealer(self) -> RequestStateSealer:
        """Seals the ``requestState`` of modern input rounds (built on first use)."""
        if self._request_state_sealer is None:
            self._request_state_sealer = _lazy.RequestStateSealer(
                self._secret,
                ttl=self._request_state_ttl,
                clock=self._clock,
                previous=self._previous_secrets,
            )
        return self._request_state_sealer

    @property
    def extensions(self) -> Mapping[str, Mapping[str, Any]]:
        """The declared protocol extensions and their settings (a read-only view)."""
        return MappingProxyType(self._extensions or {})

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        """The registered tools by name, in listing order (a read-only view)."""
        return MappingProxyType(self._tools)

    @property
    def prompts(self) -> Mapping[str, PromptSpec]:
        """The registered prompts by name, in listing order (a read-only view)."""
        return MappingProxyType(self._prompts)

    @property
    def resources(self) -> Mapping[str, ResourceSpec]:
        """The registered static resources by URI (a read-only view; templates and
        directories are not in it)."""
        return MappingProxyType(self._resources)

    def __repr__(self) -> str:
        resources = len(self._resources) + len(self._templates)
        return (
            f"<Server {self.info.name!r} {len(self._tools)} tools, {resources} resources, "
            f"{len(self._prompts)} prompts>"
        )

    # -- capabilities -----------------------------------------------------------------------

    def capabilities(self) -> ServerCapabilities:
        """What this server declares now (each connection takes it when it starts)."""
        has_resources = bool(self._resources or self._templates or self._directories)
        # They depend only on what kinds of things are registered: remember them per kind
        # (stateless HTTP builds a connection per request).
        key = (
            self.tasks is not None,
            bool(self._tools),
            has_resources,
            bool(self._prompts),
            bool(self._prompts or self._templates or self._completers),
        )
        cached = self._capabilities_cache.get(key)
        if cached is None:
            cached = self._capabilities_cache[key] = self._build_capabilities(has_resources)
        return cached

    def _build_capabilities(self, has_resources: bool) -> ServerCapabilities:
        def declared(kind: str, present: bool) -> bool:
            choice = self._declare[kind]
            return present if choice is None else choice

        return ServerCapabilities(
            tools=ToolsCapability(list_changed=True)
            if declared("tools", bool(self._tools))
            else None,
            resources=(
                ResourcesCapability(subscribe=True, list_changed=True)
                if declared("resources", has_resources)
                else None
            ),
            prompts=PromptsCapability(list_changed=True)
            if declared("prompts", bool(self._prompts))
            else None,
            completions={} if (self._prompts or self._templates or self._completers) else None,
            logging={} if self._logging else None,
            # Written only for revisions that define the field (the converter's rule).
            extensions=self._extensions
            if self.tasks is None
            else {**(self._extensions or {}), TASKS_EXTENSION: {}},
            # 2025-11-25's core tasks (the converter writes them for that revision only).
            tasks=None
            if self.tasks is None
            else {
                "cancel": {},
                **({"list": {}} if _store_lists(self.tasks.store) else {}),
                "requests": {"tools": {"call": {}}},
            },
        )

    # -- tools ------------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self, fn: None = None, /, *, scopes: Iterable[str] = (), **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...

    def tool(
        self, fn: F | None = None, /, *, scopes: Iterable[str] = (), **options: Unpack[ToolOptions]
    ) -> F | Callable[[F], F]:
        """Register a function as a tool: ``@server.tool`` or ``@server.tool(...)``.

        The tool's name is the function's unless ``name`` is given; its
        description is the docstring's first paragraph; its input schema comes
        from the parameters' type hints (see :func:`trio_mcp.server.Field`), or
        is ``input_schema`` verbatim. A parameter annotated :class:`Context`
        receives the request's context. See :class:`~trio_mcp.server.ToolSpec`
        for how return values become results. Served over HTTP with ``auth=``, a call
        whose access token lacks one of ``scopes`` is refused (``403``
        ``insufficient_scope``) before the function runs.

        ``task="optional"`` or ``"always"`` lets calls run as tasks (the tasks
        extension): the call is answered at once with a task id, the function runs in
        the server's task nursery, and the client polls ``tasks/get`` for its result.
        The function is the same as for a plain call; see :attr:`Server.tasks`.
        ``task_start="on_start_task"``: the call becomes a task only when the function
        calls :meth:`Context.start_task` (what it asks before that, it asks in input
        rounds of the request).

        The other options are those of :class:`ToolOptions` (``title``, ``description``,
        ``input_schema``, ``output_schema``, ``structured``, ``annotations``, ``icons``,
        ``meta``). Returns the function unchanged.
        """

        def build(fn: Callable[..., Any]) -> ToolSpec:
            return ToolSpec.from_function(fn, **options)

        register = _registering(scopes, build, self.add_tool)
        return register if fn is None else register(fn)

    def add_tool(
        self, fn: Callable[..., object] | ToolSpec, /, **options: Unpack[ToolOptions]
    ) -> ToolSpec:
        """Add (or replace) a tool at any time; connected clients that asked are told the
        list changed. ``options`` (:class:`~trio_mcp.server.ToolOptions`) are
        :meth:`ToolSpec.from_function`'s, for a function.

        Raises:
            ValueError: the tool links a view (``ui=``) this server does not offer (the
                Apps extension requires it to exist: add it with :meth:`app` first).
        """
        spec = fn if isinstance(fn, ToolSpec) else ToolSpec.from_function(fn, **options)
        view = spec.view
        if view is not None and not isinstance(self._resources.get(view), _lazy.AppSpec):
            raise ValueError(
                f"tool {spec.name!r} links the view {view!r}, which this server does not "
                "offer: add it with @server.app(...) before the tool"
            )
        if spec.task != "never" and self.tasks is None:
            self.tasks = TaskSettings()
        self._tools[spec.name] = spec
        self._hub.publish(("list_changed", "tools"))
        return spec

    def remove_tool(self, name: str) -> None:
        """Remove a tool; connected clients that asked are told the list changed.

        Raises:
            KeyError: no tool has that name.
        """
        del self._tools[name]
        self._hub.publish(("list_changed", "tools"))

    # -- resources --------------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        size: int | None = None,
        scopes: Iterable[str] = (),
        **options: Unpack[ResourceOptions],
    ) -> Callable[[F], F]:
        """Register a resource reader (a decorator): ``@server.resource(uri, ...)``.

        A ``uri`` with ``{variables}`` is an RFC 6570 template: the function's
        parameters of the same names receive the variables, converted to their
        annotated types. The function returns ``str`` (text), ``bytes`` (a blob),
        contents objects, or anything JSON (sent as ``application/json``). Served over
        HTTP with ``auth=``, a read (or subscription) whose access token lacks one of
        ``scopes`` is refused (``403`` ``insufficient_scope``) before the function runs.
        The other options are those of :class:`ResourceOptions`; ``size`` is for a
        resource with a fixed URI.

        Raises:
            TypeError: no URI (``@server.resource`` without one).
        """
        if not isinstance(uri, str):
            raise TypeError(
                "a resource needs its URI: use @server.resource('uri'), not @server.resource"
            )
        _check_ttl(options.get("ttl_ms"))

        def build(fn: Callable[..., Any]) -> ResourceSpec | TemplateSpec:
            if _lazy.UriTemplate(uri).is_template:
                return _lazy.TemplateSpec.from_function(uri, fn, **options)
            return _lazy.ResourceSpec.from_function(uri, fn, size=size, **options)

        return _registering(scopes, build, self._add_reader)

    def _add_reader(self, spec: ResourceSpec | TemplateSpec) -> None:
        if isinstance(spec, _lazy.TemplateSpec):
            self.add_resource_template(spec)
        else:
            self.add_resource(spec)

    def app(
        self,
        uri: str,
        *,
        csp: AppCsp | None = None,
        permissions: Iterable[Permission] = (),
        domain: str | None = None,
        prefers_border: bool | None = None,
        scopes: Iterable[str] = (),
        **options: Unpack[ResourceOptions],
    ) -> Callable[[F], F]:
        """Register a view of the MCP Apps extension (a decorator): ``@server.app("ui://...")``
        on a function returning the view's HTML document (``str``, or ``bytes`` sent as
        base64), called on each read like a resource reader. Link tools to it with
        ``@server.tool(ui="ui://...")``; hosts that render views read it with
        ``resources/read``, others keep using the tools' text content.

        The view is a resource of type ``text/html;profile=mcp-app`` whose contents (and
        listing) carry ``_meta.ui``: ``csp`` (:class:`~trio_mcp.apps.AppCsp`, the
        external origins it needs; none by default, and hosts then allow none),
        ``permissions`` (``"camera"``, ``"microphone"``, ``"geolocation"``,
        ``"clipboardWrite"``), ``domain`` (a dedicated sandbox origin, in the host's
        format) and ``prefers_border``. Declares the extension
        (``io.modelcontextprotocol/ui``). The other options are those of
        :meth:`resource`.

        Raises:
            AppFormatError: ``uri`` is not a ``ui://`` URI, a CSP source is not an origin,
                or a permission is unknown (a :class:`ValueError`).
        """
        meta = _lazy.AppMeta(
            csp=csp, permissions=permissions, domain=domain, prefers_border=prefers_border
        )
        _lazy.check_ui_uri(uri)

        def build(fn: Callable[..., Any]) -> AppSpec:
            return _lazy.AppSpec.from_app(uri, fn, meta, options)

        def add(spec: AppSpec) -> None:
            if _APPS_EXTENSION not in (self._extensions or {}):
                self._extensions = {**(self._extensions or {}), _APPS_EXTENSION: {}}
                self._capabilities_cache.clear()
            self.add_resource(spec)

        return _registering(scopes, build, add)

    def add_resource(self, spec: ResourceSpec) -> None:
        """Add (or replace) a resource; connected clients that asked are told the list
        changed."""
        self._resources[spec.resource.uri] = spec
        self._hub.publish(("list_changed", "resources"))

    def remove_resource(self, uri: str) -> None:
        """Remove a resource; connected clients that asked are told the list changed.

        Raises:
            KeyError: no resource has that URI.
        """
        del self._resources[uri]
        self._hub.publish(("list_changed", "resources"))

    def add_resource_template(self, spec: TemplateSpec) -> None:
        """Add (or replace) a resource template; connected clients that asked are told the
        list changed."""
        self._templates = [
            t for t in self._templates if t.template.uri_template != spec.template.uri_template
        ]
        self._templates.append(spec)
        self._hub.publish(("list_changed", "resources"))

    def remove_resource_template(self, uri_template: str) -> None:
        """Remove a resource template (and its completers); connected clients that asked are
        told the list changed.

        Raises:
            KeyError: no template is registered with that URI template.
        """
        kept = [t for t in self._templates if t.template.uri_template != uri_template]
        if len(kept) == len(self._templates):
            raise KeyError(uri_template)
        self._templates = kept
        for key in [k for k in self._completers if k[:2] == ("resource", uri_template)]:
            del self._completers[key]
        self._hub.publish(("list_changed", "resources"))

    def add_directory(
        self, root: str | os.PathLike[str], **options: Unpack[DirectoryOptions]
    ) -> DirectoryResources:
        """Offer the files under ``root`` as resources (never anything outside it).
        ``options`` (:class:`~trio_mcp.server.DirectoryOptions`) are
        :class:`DirectoryResources`'s."""
        directory = _lazy.DirectoryResources(root, **options)
        self._directories.append(directory)
        self._hub.publish(("list_changed", "resources"))
        return directory

    def remove_directory(self, directory: DirectoryResources) -> None:
        """Stop offering a directory that :meth:`add_directory` returned.

        Raises:
            ValueError: it is not offered.
        """
        self._directories.remove(directory)
        self._hub.publish(("list_changed", "resources"))

    def add_skills(
        self,
        skills: str | os.PathLike[str] | Skill | DynamicSkill | Iterable[Skill | DynamicSkill],
        *,
        directory_read: bool = True,
    ) -> None:
        """Serve skills (the Skills extension, ``io.modelcontextprotocol/skills``): a
        directory of ``SKILL.md`` folders (read now, see
        :func:`~trio_mcp.skills.skills_from_directory`), :class:`~trio_mcp.skills.Skill`
        objects, or :class:`~trio_mcp.skills.DynamicSkill` ones (generated content).
        Declares the extension (with ``directoryRead`` as given the first time), answers
        ``skills/list``, ``skills/get`` (and ``resources/directory/read``) and offers each
        skill file as a resource. May be called again to add more skills.

        Raises:
            SkillFormatError: a skill breaks a rule of the format (naming it and the rule).
            ValueError: a skill is served at that URI already, or ``directory_read``
                differs from the first call's.
        """
        if self._skills is not None and self._skills.directory_read != directory_read:
            raise ValueError("directory_read was set by the first add_skills() call")
        added = _lazy.as_skills(skills)
        if self._skills is None:
            self._skills = _lazy.ServedSkills(self, directory_read=directory_read)
            self._extensions = {
                **(self._extensions or {}),
                _SKILLS_EXTENSION: {"directoryRead": True} if directory_read else {},
            }
            self._capabilities_cache.clear()
        self._skills.add(added)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell subscribed clients that ``uri`` changed (never blocks)."""
        self._hub.publish(("updated", uri))

    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> None:
        """Tell clients that asked that a list changed (for lists you manage yourself)."""
        self._hub.publish(("list_changed", kind))

    # -- prompts and completion -------------------------------------------------------------

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self, fn: None = None, /, *, scopes: Iterable[str] = (), **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        fn: F | None = None,
        /,
        *,
        scopes: Iterable[str] = (),
        **options: Unpack[PromptOptions],
    ) -> F | Callable[[F], F]:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(...)``. Its ``str``
        parameters are its arguments; it returns a string (one user message), messages,
        content, or a GetPromptResult. Served over HTTP with ``auth=``, a get whose access
        token lacks one of ``scopes`` is refused (``403`` ``insufficient_scope``) before
        the function runs. The other options are those of :class:`PromptOptions`.
        Returns the function unchanged."""

        def build(fn: Callable[..., Any]) -> PromptSpec:
            return _lazy.PromptSpec.from_function(fn, **options)

        register = _registering(scopes, build, self.add_prompt)
        return register if fn is None else register(fn)

    def add_prompt(self, spec: PromptSpec) -> None:
        """Add (or replace) a prompt; connected clients that asked are told the list
        changed."""
        self._prompts[spec.name] = spec
        self._hub.publish(("list_changed", "prompts"))

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt (and its completers); connected clients that asked are told the
        list changed.

        Raises:
            KeyError: no prompt has that name.
        """
        del self._prompts[name]
        for key in [k for k in self._completers if k[:2] == ("prompt", name)]:
            del self._completers[key]
        self._hub.publish(("list_changed", "prompts"))

    def completion(
        self, *, argument: str, prompt: str | None = None, resource_template: str | None = None
    ) -> Callable[[Completer], Completer]:
        """Register a completer for one prompt argument or template variable (a decorator).

        The function takes ``(value, context)`` (what the user typed, and the
        arguments already resolved) and returns candidate strings; at most 100
        are sent, with ``total`` and ``hasMore`` telling the rest. A further
        parameter annotated :class:`Context` receives the request's context (its
        cancellation, logging, ``principal``, ...).

        Raises:
            TypeError: the Context parameter is one of the first two.
        """
        if (prompt is None) == (resource_template is None):
            raise TypeError("give exactly one of prompt= or resource_template=")
        key = (
            ("prompt", prompt, argument)
            if prompt is not None
            else ("resource", resource_template, argument)
        )

        def register(fn: Completer) -> Completer:
            self._completers[key] = _lazy.CompleterSpec(fn)  # type: ignore[index]
            return fn

        return register

    # -- extension points -------------------------------------------------------------------

    def method(self, name: str) -> Callable[[F], F]:
        """Answer a method the protocol does not define (experimental or vendor methods,
        an extension's methods); the function takes ``(context, params)`` and returns a
        result dict. To a 2026-07-28 request, ``"resultType": "complete"`` is added to
        it unless it has a ``resultType`` already.

        Raises:
            TypeError: no method name (``@server.method`` without one).
        """
        return _registering_as(self._custom_methods, "method", name)

    def on_notification(self, method: str) -> Callable[[F], F]:
        """Call ``fn(params)`` for each notification ``method`` from clients (for instance
        ``notifications/roots/list_changed``).

        Raises:
            TypeError: no method name (``@server.on_notification`` without one).
        """
        return _registering_as(self._notification_callbacks, "on_notification", method)

    # -- authorization ----------------------------------------------------------------------

    def scopes_needed(self, method: str, params: object) -> frozenset[str]:
        """The OAuth scopes a request of ``method`` with ``params`` needs: those of the tool
        it calls, the resource (or template) it reads or subscribes to, the prompt it
        gets, the prompt or template whose arguments it completes; none for anything
        else, or for a name or URI this server does not know (the request then fails on
        its own)."""
        if not isinstance(params, dict):
            return frozenset()
        # Only a string can name anything: a name of another type (a list, an object: a
        # peer's choice) is no key to look up, and the request then fails its validation
        # with -32602 like any other malformed one, after this check.
        if method == "completion/complete":
            ref = params.get("ref")
            if not isinstance(ref, dict):
                return frozenset()
            if ref.get("type") == "ref/prompt":
                return self.scopes_needed("prompts/get", {"name": ref.get("name")})
            uri = ref.get("uri")
            for template in self._templates:
                if isinstance(uri, str) and template.template.uri_template == uri:
                    return template.scopes
            return frozenset()
        name = params.get("name")
        if method == "tools/call":
            tool = self._tools.get(name) if isinstance(name, str) else None
            return tool.scopes if tool is not None else frozenset()
        if method == "prompts/get":
            prompt = self._prompts.get(name) if isinstance(name, str) else None
            return prompt.scopes if prompt is not None else frozenset()
        if method in ("resources/read", "resources/subscribe"):
            uri = params.get("uri")
            if not isinstance(uri, str):
                return frozenset()
            resource = self._resources.get(uri)
            if resource is not None:
                return resource.scopes
            for template in self._templates:
                if template.parsed.match(uri) is not None:
                    return template.scopes
        return frozenset()

    # -- serving ----------------------------------------------------------------------------

    def connection(self) -> Connection:
        """A new protocol connection for one client, with this server's current capabilities."""
        return Connection(
            "server",
            info=self.info,
            capabilities=self.capabilities(),
            instructions=self.instructions,
            versions=self.versions,
            cache_ttl_ms=self.cache_ttl_ms,
            cache_scope=self.cache_scope,
        )

    async def serve(
        self,
        stream: MessageStream,
        *,
        principal: str | None = None,
        task_runner: TaskRunner | None = None,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
        **session_options: Unpack[SessionSettings],
    ) -> None:
        """Serve one client over ``stream`` until its input ends and running requests drain
        (or this call is cancelled).

        ``principal`` names the client, when your transport authenticated it (a
        WebSocket accepted after checking a token, a socket whose peer credentials
        you read): handlers see it as :attr:`Context.principal`, and in the modern era
        every ``requestState`` is bound to it. ``task_status.started()`` reports the
        :class:`~trio_mcp.session.Session`. Other options are the session's
        (:class:`~trio_mcp.session.SessionSettings`: ``drain_timeout``,
        ``max_concurrent_requests``, ...).

        ``task_runner``: where calls that become tasks run, for a transport that serves
        many connections from one :meth:`running_tasks` block (so that a task outlives
        its connection); by default this call runs its own.

        Resource handling: the session's tasks run in a nursery of this call, and so do
        the calls that became tasks unless ``task_runner`` is given: then returning
        cancels the ones still running. The stream is closed when it returns.
        """
        dispatcher = Dispatcher(self, principal=principal)
        async with self._tasks_for_connection(task_runner) as tasks, trio.open_nursery() as nursery:
            dispatcher.tasks = tasks
            subscriptions_scope = trio.CancelScope()

            def input_ended() -> None:
                subscriptions_scope.cancel()
                dispatcher.end_subscriptions()

            session = await connect_session(
                nursery,
                stream,
                self.connection(),
                handler=dispatcher.handle,
                immediate=dispatcher.immediate,
                notification_handler=dispatcher.on_notification,
                on_input_ended=input_ended,
                **session_options,
            )

            async def forward() -> None:
                with subscriptions_scope:
                    await dispatcher.forward_changes(session)

            nursery.start_soon(forward)
            task_status.started(session)
            try:
                await session.wait_finished()
            finally:
                subscriptions_scope.cancel()
                await session.aclose()

    @asynccontextmanager
    async def running_tasks(
        self, *, default_store: str | None = None
    ) -> AsyncIterator[TaskRunner | None]:
        """Run this server's task nursery for the block, or nothing (``None``) when the
        server runs no tasks (:attr:`tasks` unset). Every serving entry point does this
        for as long as it serves; you need it only to serve a connection yourself.
        ``default_store`` replaces the in-memory store when :attr:`tasks` names no other
        (a fleet's Redis).

        Blocks while the store named by :attr:`tasks` opens. Leaving the block cancels
        the tasks still running and records them ``failed``.
        """
        if self.tasks is None:
            await trio.lowlevel.checkpoint()
            yield None
            return

        def changed(task_id: str) -> None:
            self._hub.publish(("task", task_id))

        settings = self.tasks
        if default_store is not None and settings.store == "memory:":
            settings = attrs.evolve(settings, store=default_store)
        async with _lazy.TaskRunner.open(settings, changed) as runner:
            yield runner

    @asynccontextmanager
    async def _tasks_for_connection(
        self, runner: TaskRunner | None
    ) -> AsyncIterator[TaskRunner | None]:
        if runner is not None:
            await trio.lowlevel.checkpoint()
            yield runner
        else:
            async with self.running_tasks() as own:
                yield own

    def shutdown(self) -> None:
        """End every ``subscriptions/listen`` stream gracefully (they answer and close)."""
        self._hub.close()


#: An extension identifier: a ``_meta``-style key with its mandatory prefix, such as
#: ``io.modelcontextprotocol/skills`` (dot-separated labels, a slash, then a name). A
#: pattern that :mod:`re` compiles (and caches) when a server first declares extensions.
_EXTENSION_ID = (
    r"(?:[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?/"
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
)


def _check_extensions(
    extensions: Mapping[str, Mapping[str, Any]] | None,
) -> dict[str, dict[str, Any]] | None:
    """A copy of ``extensions`` as declared, or ``None`` for none.

    Raises:
        ValueError: an identifier without its prefix (``vendor.example/name``).
        TypeError: settings that are not a mapping.
    """
    if not extensions:
        return None
    checked: dict[str, dict[str, Any]] = {}
    for identifier, settings in extensions.items():
        if not isinstance(identifier, str) or not re.fullmatch(_EXTENSION_ID, identifier):
            raise ValueError(
                f"invalid extension identifier {identifier!r}: use a prefix and a name, "
                "such as 'io.modelcontextprotocol/skills'"
            )
        if not isinstance(settings, Mapping):
            raise TypeError(
                f"the settings of extension {identifier!r} must be a mapping ({{}} for none), "
                f"not {type(settings).__name__}"
            )
        checked[identifier] = dict(settings)
    return checked


def _check_ttl(ttl_ms: int | None) -> None:
    """Refuse a negative caching hint (servers must send ``ttlMs >= 0``).

    Raises:
        ValueError: ``ttl_ms`` is negative.
    """
    if ttl_ms is not None and ttl_ms < 0:
        raise ValueError(f"ttl_ms must be 0 or more, not {ttl_ms}")


def _scope_set(scopes: Iterable[str]) -> frozenset[str]:
    """The ``scopes=`` of a tool, resource or prompt.

    Raises:
        TypeError: a single string (a list of scope names is expected).
    """
    if isinstance(scopes, str):
        raise TypeError(f"scopes must be a list of scope names, not the string {scopes!r}")
    return frozenset(scopes)


class _Scoped(Protocol):
    scopes: frozenset[str]


_Spec = TypeVar("_Spec", bound=_Scoped)


def _store_lists(store: str | TaskStore) -> bool:
    """Whether tasks kept in ``store`` can be listed (``tasks/list``): every store named by
    a URL can; a store object if its class implements ``list_owned``."""
    return isinstance(store, str) or store.can_list()


def _registering(
    scopes: Iterable[str], build: Callable[[Callable[..., Any]], _Spec], add: Callable[[_Spec], Any]
) -> Callable[[F], F]:
    """The decorator that :meth:`Server.tool`, :meth:`Server.resource` and
    :meth:`Server.prompt` return: it builds the spec of the function it decorates, gives
    it ``scopes`` (checked at once, before any function is given), adds it, and returns
    the function unchanged."""
    required = _scope_set(scopes)

    def register(fn: F) -> F:
        if not callable(fn):
            raise TypeError(
                f"{fn!r} is not a function: give a decorator's options by keyword, as in "
                "@server.tool(name='add')"
            )
        spec = build(fn)
        spec.scopes = required
        add(spec)
        return fn

    return register


def _registering_as(table: dict[str, Any], decorator: str, method: str) -> Callable[[F], F]:
    """The decorator that :meth:`Server.method` and :meth:`Server.on_notification` return:
    it files the function it decorates under ``method`` in ``table`` and returns it.

    Raises:
        TypeError: ``method`` is not a string (the decorator was written bare, which would
            otherwise register nothing and replace the function).
    """
    if not isinstance(method, str):
        raise TypeError(
            f"@server.{decorator} needs the method's name: use "
            f"@server.{decorator}('vendor/method'), not @server.{decorator}"
        )

    def register(fn: F) -> F:
        table[method] = fn
        return fn

    return register
