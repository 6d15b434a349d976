"""Tools: a registered function, its schemas, and calling it."""

from __future__ import annotations

import inspect
import logging
import re
import types
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    TypeAlias,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import attrs

from .._errors import McpError
from .._jsonschema import SchemaValidator
from .._types._base import Icon
from .._types._content import TextContent
from .._types._tools import CallToolResult, Tool, ToolAnnotations, ToolExecution
from .._versions import FIRST_MODERN_VERSION
from . import _lazy
from ._context import Context
from ._results import CONTENT_TYPES, dumps_text, to_content, to_json
from ._signature import Signature, docstring_summary
from ._typeschema import Reader, SchemaError, ValueInvalid, compile_type

if TYPE_CHECKING:
    from .._apps._format import ToolUi

__all__ = ["ToolError", "ToolOptions", "ToolSpec", "validate_tool_name"]

#: How a tool takes part in the tasks extension: never as a task, as a task when the
#: client opted in, or only as a task.
TaskSupport: TypeAlias = Literal["never", "optional", "always"]
#: When a call that becomes a task does so: before the function runs, or when it calls
#: :meth:`Context.start_task`.
TaskStart: TypeAlias = Literal["immediately", "on_start_task"]

log = logging.getLogger("trio_mcp.server")


_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_UNSTRUCTURED = (str, bytes, bytearray, memoryview, type(None), CallToolResult, *CONTENT_TYPES)


class ToolError(Exception):
    """Raise from a tool to report a failure the model should see (``isError: true``),
    with exactly this message."""


def validate_tool_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"invalid tool name {name!r}: use 1 to 128 characters of A-Z, a-z, 0-9, '_', '-', '.'"
        )
    return name


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


@attrs.frozen(kw_only=True)
class _Output:
    """How a tool's return value becomes structured content."""

    schema: dict[str, Any]
    #: Checks a JSON value against the schema (typed returns) ...
    reader: Reader | None = None
    #: ... or a verbatim schema's validator.
    validator: SchemaValidator | None = None
    #: Whether the value is wrapped as ``{"result": value}`` (non-object outputs).
    wrap: bool = False


class ToolOptions(TypedDict, total=False):
    """The keyword options of :meth:`ToolSpec.from_function`, :meth:`Server.add_tool
    <trio_mcp.Server.add_tool>` and ``@server.tool(...)`` (besides ``scopes``),
    typed so that a misspelt option is an error your type checker reports; see
    :meth:`ToolSpec.from_function` for what each means."""

    name: str | None
    title: str | None
    description: str | None
    input_schema: Mapping[str, Any] | None
    output_schema: Mapping[str, Any] | None
    structured: bool | None
    annotations: ToolAnnotations | None
    icons: Sequence[Icon] | None
    meta: Mapping[str, Any] | None
    ui: str | ToolUi | None
    task: TaskSupport
    task_start: TaskStart


@attrs.define(eq=False)
class ToolSpec:
    """A tool as registered: its definition and how to call it."""

    tool: Tool
    fn: Callable[..., Awaitable[Any] | Any]
    signature: Signature | None
    input_validator: SchemaValidator | None
    output: _Output | None
    #: The function is a plain ``def`` (see :attr:`runs_inline`).
    plain: bool = False
    #: Whether calls may (``"optional"``) or must (``"always"``) run as tasks.
    task: TaskSupport = "never"
    #: When a call becomes a task: at once, or when the handler calls
    #: :meth:`Context.start_task` (after gathering input in rounds of the request).
    task_start: TaskStart = "immediately"
    #: The OAuth scopes a caller's token needs to call it (HTTP with ``auth=``).
    scopes: frozenset[str] = frozenset()
    #: The view ``ui=`` linked it to (MCP Apps), which its server must offer; a link given
    #: verbatim in ``meta`` (a proxy forwarding another server's tool) is not checked.
    view: str | None = None
    #: (tool, the tool as listed before 2026-07-28), made on first use.
    _listed_before_2026: tuple[Tool, Tool] | None = attrs.field(
        default=None, init=False, repr=False
    )

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def hides_output_before_2026(self) -> bool:
        """Whether the tool's ``outputSchema`` is not an object schema: 2026-07-28 allows
        any schema, earlier revisions only ``"type": "object"``, so peers on those get
        neither the schema nor ``structuredContent`` (the text content still goes)."""
        schema = self.tool.output_schema
        return schema is not None and schema.get("type") != "object"

    def tool_for(self, version: str) -> Tool:
        """The tool as listed to a peer on revision ``version`` (see
        :attr:`hides_output_before_2026`)."""
        if version >= FIRST_MODERN_VERSION or not self.hides_output_before_2026:
            return self.tool
        cached = self._listed_before_2026
        if cached is None or cached[0] is not self.tool:
            cached = self._listed_before_2026 = (
                self.tool,
                attrs.evolve(self.tool, output_schema=None),
            )
        return cached[1]

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., object],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        annotations: ToolAnnotations | None = None,
        icons: Sequence[Icon] | None = None,
        meta: Mapping[str, Any] | None = None,
        ui: str | ToolUi | None = None,
        task: TaskSupport = "never",
        task_start: TaskStart = "immediately",
    ) -> ToolSpec:
        """Build a tool from a function.

        The input schema comes from the parameters' type hints unless
        ``input_schema`` is given (kept exactly as given; arguments are then
        validated against it with ``jsonschema`` and passed as keyword
        arguments). The output is structured when the return annotation is
        structured data (not ``str``, ``bytes``, content blocks or ``CallToolResult``), or
        when ``output_schema`` is given; ``structured=False`` turns it off. A verbatim
        ``output_schema`` may be any JSON Schema (2026-07-28 allows structured content
        of any JSON type); if it is not an object schema, peers on earlier revisions,
        which allow only ``"type": "object"``, get the tool without ``outputSchema`` and
        its results without ``structuredContent`` (the text content is sent as ever).

        ``task`` says how calls take part in the tasks extension (``"never"``, the default;
        ``"optional"``: a task when the client declared the extension, else a plain call;
        ``"always"``: only as a task, refused with -32021 to a client without it), and
        ``task_start`` when such a call becomes one: ``"immediately"`` (the function runs
        in the task), or ``"on_start_task"`` (the function runs in the request, asking in
        input rounds, until it calls :meth:`Context.start_task`).

        ``ui`` links the tool to a view (the MCP Apps extension, see :mod:`trio_mcp.apps`):
        the ``ui://`` URI of a resource added with :meth:`Server.app
        <trio_mcp.Server.app>`, or a :class:`~trio_mcp.apps.ToolUi` to say also who
        may call it (``visibility=("app",)``: only the view, never the model). It becomes
        the tool's ``_meta.ui``.

        Raises:
            ValueError: an invalid name, schema, ``task`` or ``ui``
                (:class:`~trio_mcp.apps.AppFormatError`).
            SchemaError: a type hint with no JSON Schema form.
        """
        tool_name = validate_tool_name(name or fn.__name__)
        signature = Signature.of(fn, context_type=Context, typed=input_schema is None)
        input_validator = None
        if input_schema is not None:
            schema = dict(input_schema)
            _require_object_root(schema, "input_schema", "tool arguments are always objects")
            input_validator = SchemaValidator(schema)
        else:
            schema = signature.input_schema
        output = _output_for(fn, output_schema, structured)
        view = None
        if ui is not None:
            link = _lazy.ToolUi(ui) if isinstance(ui, str) else ui
            meta = {**(meta or {}), "ui": link.to_json()}
            view = link.resource_uri
        tool = Tool(
            name=tool_name,
            title=title,
            description=description if description is not None else docstring_summary(fn),
            input_schema=schema,
            output_schema=output.schema if output is not None else None,
            annotations=annotations,
            icons=list(icons) if icons is not None else None,
            meta=dict(meta) if meta is not None else None,
            # 2025-11-25's core tasks (listed to that revision only).
            execution=None
            if task == "never"
            else ToolExecution(task_support="required" if task == "always" else "optional"),
        )
        if task not in ("never", "optional", "always"):
            raise ValueError(f"task must be 'never', 'optional' or 'always', not {task!r}")
        if task_start not in ("immediately", "on_start_task"):
            raise ValueError(
                f"task_start must be 'immediately' or 'on_start_task', not {task_start!r}"
            )
        return cls(
            tool,
            fn,
            signature,
            input_validator,
            output,
            plain=_is_plain_function(fn),
            task=task,
            task_start=task_start,
            view=view,
        )

    async def call(self, arguments: Mapping[str, Any] | None, context: Context) -> CallToolResult:
        """Run the tool. Bad arguments, a raised exception or output that breaks the output
        schema give an ``isError`` result; an :exc:`McpError` propagates as a protocol
        error; cancellation propagates."""
        return self.convert(await self._run(arguments, context))

    async def answer(
        self, arguments: Mapping[str, Any] | None, context: Context
    ) -> CallToolResult | dict[str, Any]:
        """What :meth:`call` returns, but a plain-text answer comes as its wire form (a dict),
        skipping the models: the common case, on the hot path. Blocks and raises as
        :meth:`call` does."""
        return self._answer_for(await self._run(arguments, context), context.request.version)

    @property
    def runs_inline(self) -> bool:
        """Whether a call can be answered without a task: the function is a plain ``def``
        that takes no :class:`Context` (it never yields, so it cannot be cancelled, and
        needs no cancel scope)."""
        assert self.signature is not None
        return self.plain and self.signature.context_parameter is None

    def answer_now(
        self, arguments: Mapping[str, Any] | None, version: str
    ) -> CallToolResult | dict[str, Any]:
        """:meth:`answer` for a tool that :attr:`runs_inline`, called synchronously."""
        kwargs = self._bind(arguments)
        if isinstance(kwargs, CallToolResult):
            return kwargs
        try:
            value = self.fn(**kwargs)
        except Exception as exc:  # noqa: BLE001 - _failure sorts them out
            return self._failure(exc)
        if inspect.isawaitable(value):
            close = getattr(value, "close", None)
            if close is not None:
                close()
            return error_result(f"tool {self.name} returned an awaitable: declare it `async def`")
        return self._answer_for(value, version)

    def _answer_for(self, outcome: Any, version: str) -> CallToolResult | dict[str, Any]:
        if type(outcome) is str and self.output is None:
            wire: dict[str, Any] = {"content": [{"type": "text", "text": outcome}]}
            if version >= FIRST_MODERN_VERSION:
                wire["resultType"] = "complete"
            return wire
        result = self.convert(outcome)
        if (
            version < FIRST_MODERN_VERSION
            and result.structured_content is not None
            and (type(result.structured_content) is not dict or self.hides_output_before_2026)
        ):
            # Only 2026-07-28 allows any JSON value (and any outputSchema); before,
            # structuredContent is an object, and follows an object outputSchema if any.
            result = attrs.evolve(result, structured_content=None)
        return result

    def _bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any] | CallToolResult:
        """Keyword arguments for the function, or the error result for bad arguments."""
        assert self.signature is not None
        try:
            if self.input_validator is not None:
                _raise_problems(self.input_validator.errors(dict(arguments or {})))
                known = {p.name for p in self.signature.parameters}
                return {
                    k: v
                    for k, v in (arguments or {}).items()
                    if k in known or self.signature.accepts_extra
                }
            return self.signature.bind(arguments)
        except ValueInvalid as exc:
            return error_result(f"Invalid arguments for tool {self.name}: {exc}")

    def _failure(self, exc: Exception) -> CallToolResult:
        """The result for an exception the tool raised (protocol errors propagate)."""
        if isinstance(exc, McpError):
            raise exc
        if isinstance(exc, ToolError):
            return error_result(str(exc))
        log.info("tool %s raised %r", self.name, exc, exc_info=True)
        return error_result(f"Error executing tool {self.name}: {exc or type(exc).__name__}")

    async def _run(self, arguments: Mapping[str, Any] | None, context: Context) -> Any:
        """The tool's return value, or an error result."""
        assert self.signature is not None
        kwargs = self._bind(arguments)
        if isinstance(kwargs, CallToolResult):
            return kwargs
        if self.signature.context_parameter is not None:
            kwargs[self.signature.context_parameter] = context
        try:
            value = self.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:  # noqa: BLE001 - _failure sorts them out
            return self._failure(exc)
        return value

    def convert(self, value: Any) -> CallToolResult:
        """The result for a return value (checked against the output schema, if any)."""
        if isinstance(value, CallToolResult):
            if self.output is not None and value.is_error is not True:
                problem = self._check_output(value.structured_content)
                if problem:
                    return error_result(problem)
            return value
        if self.output is None:
            try:
                return CallToolResult(
                    content=to_content(value, blob_uri=f"tool://{self.name}/result")
                )
            except TypeError as exc:
                return error_result(f"tool {self.name} returned {exc}")
        try:
            data = to_json(value)
        except TypeError as exc:
            return error_result(f"tool {self.name} returned {exc}")
        structured = {"result": data} if self.output.wrap else data
        problem = self._check_output(structured)
        if problem:
            return error_result(problem)
        return CallToolResult(
            content=[TextContent(text=dumps_text(structured))], structured_content=structured
        )

    def _check_output(self, structured: Any) -> str | None:
        assert self.output is not None
        if structured is None:
            return f"tool {self.name} declares an outputSchema but returned no structured content"
        if self.output.validator is not None:
            problems = self.output.validator.errors(structured)
            if problems:
                return (
                    f"tool {self.name} returned output that breaks its outputSchema: "
                    + "; ".join(problems)
                )
            return None
        assert self.output.reader is not None
        try:
            self.output.reader(structured)
        except ValueInvalid as exc:
            return f"tool {self.name} returned output that breaks its outputSchema: {exc}"
        return None


def _is_plain_function(fn: Callable[..., Any]) -> bool:
    """A ``def`` (not ``async def``), so calling it never yields to Trio."""
    target = fn.__call__ if not inspect.isfunction(fn) and not inspect.ismethod(fn) else fn  # type: ignore[operator]
    return not (inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target))


def _raise_problems(problems: list[str]) -> None:
    if problems:
        raise ValueInvalid("; ".join(problems))


def _output_for(
    fn: Callable[..., Any], output_schema: Mapping[str, Any] | None, structured: bool | None
) -> _Output | None:
    if structured is False:
        return None
    if output_schema is not None:
        # Any schema: 2026-07-28 allows it. Peers on earlier revisions, whose schemas want
        # "type": "object", are sent neither it nor structuredContent (ToolSpec.tool_for).
        schema = dict(output_schema)
        return _Output(schema=schema, validator=SchemaValidator(schema))
    try:
        annotation = get_type_hints(fn, include_extras=True).get("return", Any)
    except Exception:  # noqa: BLE001 - unresolvable annotations: treat as unstructured
        return None
    if _is_unstructured(annotation) and structured is not True:
        return None
    defs: dict[str, Any] = {}
    schema, reader = compile_type(annotation, defs)
    if schema.get("$ref", "").startswith("#/$defs/"):
        name = schema["$ref"].removeprefix("#/$defs/")
        target = defs[name]
        if target.get("type") == "object":
            root = dict(target)
            others = {k: v for k, v in defs.items() if k != name}
            if others:
                root["$defs"] = others
            return _Output(schema=root, reader=reader)
    if schema.get("type") == "object":
        root = dict(schema)
        if defs:
            root["$defs"] = defs
        return _Output(schema=root, reader=reader)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        wrapped["$defs"] = defs

    def read_wrapped(value: Any) -> Any:
        if type(value) is not dict or "result" not in value:
            raise ValueInvalid("expected an object with 'result'")
        return reader(value["result"])

    return _Output(schema=wrapped, reader=read_wrapped, wrap=True)


def _require_object_root(schema: Mapping[str, Any], argument: str, why: str) -> None:
    """Refuse a verbatim schema whose root is not ``"type": "object"``, as every revision's
    schema requires of ``inputSchema``.

    Raises:
        ValueError: the root ``type`` is missing or another.
    """
    if schema.get("type") != "object":
        raise ValueError(
            f'{argument} must have "type": "object" at its root ({why}), '
            f"not {schema.get('type', 'no type')!r}"
        )


def _is_unstructured(annotation: Any) -> bool:
    if annotation is Any or annotation is object:
        return True
    if isinstance(annotation, type) and issubclass(annotation, _UNSTRUCTURED):
        return True
    origin = get_origin(annotation)
    if origin in (list, tuple, Sequence) or origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return bool(args) and all(_is_unstructured(a) for a in args)
    return False


_ = SchemaError
