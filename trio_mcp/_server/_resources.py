"""Resources: static ones, families named by URI templates, and a directory of files."""

from __future__ import annotations

import enum
import fnmatch
import inspect
import mimetypes
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack, get_args, get_origin, get_type_hints
from urllib.parse import quote, unquote

import attrs
import trio

from .._errors import ErrorCode, McpError
from .._types._base import Icon
from .._types._content import (
    Annotations,
    BlobResourceContents,
    ResourceContents,
    TextResourceContents,
)
from .._types._resources import Resource, ResourceTemplate
from ._context import Context
from ._results import dumps_text, to_json
from ._signature import docstring_summary
from ._uritemplate import UriTemplate

__all__ = [
    "DirectoryOptions",
    "DirectoryResources",
    "ResourceOptions",
    "ResourceSpec",
    "TemplateSpec",
    "contents_for",
    "not_found",
]

Reader = Callable[..., Awaitable[Any] | Any]


class ResourceOptions(TypedDict, total=False):
    """What a resource or a template says about itself (its name is the function's, its
    description the docstring's first paragraph, unless given), and ``ttl_ms``, its
    caching hint: the options of ``@server.resource(uri, ...)`` besides ``size`` and
    ``scopes``."""

    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    annotations: Annotations | None
    icons: Sequence[Icon] | None
    meta: Mapping[str, Any] | None
    ttl_ms: int | None


def _described(fn: Reader, uri: str, options: ResourceOptions) -> dict[str, Any]:
    """The fields that a :class:`Resource` and a :class:`ResourceTemplate` share, from
    ``options`` and the function."""
    description = options.get("description")
    icons = options.get("icons")
    meta = options.get("meta")
    return {
        "name": options.get("name") or str(getattr(fn, "__name__", uri)),
        "title": options.get("title"),
        "description": description if description is not None else docstring_summary(fn),
        "mime_type": options.get("mime_type"),
        "annotations": options.get("annotations"),
        "icons": list(icons) if icons is not None else None,
        "meta": dict(meta) if meta is not None else None,
    }


def not_found(uri: str, version: str) -> McpError:
    """The resource-not-found error of ``version``: -32002 up to 2025-11-25, -32602 after."""
    code = ErrorCode.RESOURCE_NOT_FOUND if version <= "2025-11-25" else ErrorCode.INVALID_PARAMS
    return McpError(f"Resource not found: {uri}", code=code, data={"uri": uri})


def contents_for(
    uri: str, value: Any, mime_type: str | None
) -> list[TextResourceContents | BlobResourceContents]:
    """Resource contents for what a reader returned: ``str`` is text, ``bytes`` a blob,
    contents objects pass as they are, lists are several contents, anything else is JSON."""
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [value]
    if isinstance(value, str):
        return [TextResourceContents(uri=uri, text=value, mime_type=mime_type or "text/plain")]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [
            BlobResourceContents.from_bytes(
                uri, bytes(value), mime_type or "application/octet-stream"
            )
        ]
    if isinstance(value, list) and all(isinstance(v, ResourceContents) for v in value):
        return list(value)
    return [
        TextResourceContents(
            uri=uri, text=dumps_text(to_json(value)), mime_type=mime_type or "application/json"
        )
    ]


async def _call(fn: Reader, kwargs: dict[str, Any]) -> Any:
    value = fn(**kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


def _context_parameter(fn: Callable[..., Any]) -> str | None:
    hints = get_type_hints(fn)
    for name, hint in hints.items():
        if isinstance(hint, type) and issubclass(hint, Context):
            return name
    return None


@attrs.define(eq=False)
class ResourceSpec:
    """A resource with a fixed URI."""

    resource: Resource
    fn: Reader
    context_parameter: str | None
    ttl_ms: int | None = None
    #: The OAuth scopes a caller's token needs to read it (HTTP with ``auth=``).
    scopes: frozenset[str] = frozenset()

    @classmethod
    def from_function(
        cls, uri: str, fn: Reader, *, size: int | None = None, **options: Unpack[ResourceOptions]
    ) -> ResourceSpec:
        resource = Resource(uri=uri, size=size, **_described(fn, uri, options))
        return cls(resource, fn, _context_parameter(fn), options.get("ttl_ms"))

    async def read(self, context: Context) -> list[TextResourceContents | BlobResourceContents]:
        kwargs = {self.context_parameter: context} if self.context_parameter else {}
        value = await _call(self.fn, kwargs)
        return contents_for(self.resource.uri, value, self.resource.mime_type)


@attrs.define(eq=False)
class TemplateSpec:
    """A family of resources named by an RFC 6570 URI template; the function's parameters
    take the template's variables (converted to their annotated types: ``int``,
    ``float``, ``bool``, ``str``, enums, lists of these for exploded variables)."""

    template: ResourceTemplate
    parsed: UriTemplate
    fn: Reader
    converters: dict[str, Callable[[Any], Any]]
    context_parameter: str | None
    ttl_ms: int | None = None
    #: The OAuth scopes a caller's token needs to read it (HTTP with ``auth=``).
    scopes: frozenset[str] = frozenset()

    @classmethod
    def from_function(
        cls, uri_template: str, fn: Reader, **options: Unpack[ResourceOptions]
    ) -> TemplateSpec:
        parsed = UriTemplate(uri_template)
        hints = get_type_hints(fn)
        parameters = inspect.signature(fn).parameters
        context_parameter = _context_parameter(fn)
        converters = {}
        for variable in parsed.variables:
            if variable not in parameters:
                raise TypeError(
                    f"{getattr(fn, '__name__', fn)!r} must take a parameter {variable!r} for the "
                    f"template variable in {uri_template!r}"
                )
            converters[variable] = _from_text(hints.get(variable, str))
        for param in parameters.values():
            if (
                param.name not in converters
                and param.name != context_parameter
                and param.default is inspect.Parameter.empty
            ):
                raise TypeError(f"parameter {param.name!r} is not a variable of {uri_template!r}")
        template = ResourceTemplate(
            uri_template=uri_template, **_described(fn, uri_template, options)
        )
        return cls(template, parsed, fn, converters, context_parameter, options.get("ttl_ms"))

    def match(self, uri: str) -> dict[str, Any] | None:
        """Keyword arguments for ``uri``, or ``None`` if it is not of this family.

        Raises:
            McpError: -32602 when the URI matches but a variable does not convert.
        """
        values = self.parsed.match(uri)
        if values is None:
            return None
        kwargs = {}
        for name, value in values.items():
            try:
                kwargs[name] = self.converters[name](value)
            except (ValueError, TypeError) as exc:
                raise McpError(
                    f"Invalid params: {name}={value!r} in {uri}: {exc}",
                    code=ErrorCode.INVALID_PARAMS,
                ) from None
        return kwargs

    async def read(
        self, uri: str, kwargs: dict[str, Any], context: Context
    ) -> list[TextResourceContents | BlobResourceContents]:
        if self.context_parameter:
            kwargs = {**kwargs, self.context_parameter: context}
        value = await _call(self.fn, kwargs)
        return contents_for(uri, value, self.template.mime_type)


def _from_text(hint: Any) -> Callable[[Any], Any]:
    """Convert a template variable's text to ``hint``."""
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is Literal:
        allowed = {str(a): a for a in args}

        def to_literal(value: Any) -> Any:
            if value not in allowed:
                raise ValueError(f"expected one of {sorted(allowed)}")
            return allowed[value]

        return to_literal
    if origin in (list, tuple, Sequence):
        item = _from_text(args[0] if args else str)
        return lambda value: [item(v) for v in (value if isinstance(value, list) else [value])]
    if args and type(None) in args:
        inner = _from_text(next(a for a in args if a is not type(None)))
        return inner
    if hint is int:
        return lambda value: int(value)
    if hint is float:
        return lambda value: float(value)
    if hint is bool:

        def to_bool(value: str) -> bool:
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
            raise ValueError("expected true or false")

        return to_bool
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return lambda value: hint(value)
    return lambda value: value if isinstance(value, str) else ",".join(value)


class DirectoryOptions(TypedDict, total=False):
    """The keyword options of :meth:`Server.add_directory
    <trio_mcp.Server.add_directory>` (see :class:`DirectoryResources` for what each
    means and its default)."""

    uri_prefix: str | None
    max_bytes: int
    pattern: str
    include_hidden: bool


class DirectoryResources:
    """The files under a directory as resources (``file://`` URIs by default).

    Only files whose path relative to ``root`` matches ``pattern`` (a
    ``pathlib`` glob such as ``"*.py"`` or ``"docs/**/*.md"``) are listed
    *and* readable. Dotfiles and anything inside a dot-directory (``.env``,
    ``.git/config``) are neither, unless ``include_hidden=True``. Reads never
    leave ``root``: paths are resolved, symlinks included, and a URI that
    resolves outside the root (``..``, a link pointing out, an absolute path)
    or onto a hidden file is not found. A file that exists but is excluded
    is not found either, exactly like a missing one, so that nothing about
    it leaks. Files larger than ``max_bytes`` are refused.

    The filesystem work (resolving, ``stat``, reading, walking the tree) is
    blocking, so :meth:`read` and :meth:`list_resources_async` run it in a
    worker thread with :func:`trio.to_thread.run_sync` (one call each).
    Cancellation takes effect when that call returns: Trio cannot interrupt
    a thread. :meth:`list_resources` itself blocks.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        uri_prefix: str | None = None,
        max_bytes: int = 16 * 1024 * 1024,
        pattern: str = "**/*",
        include_hidden: bool = False,
    ) -> None:
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(str(self.root))
        self.uri_prefix = uri_prefix if uri_prefix is not None else self.root.as_uri() + "/"
        self.max_bytes = max_bytes
        self.pattern = pattern
        self.include_hidden = include_hidden
        self._glob = _Glob(pattern)

    def offers(self, relative: str) -> bool:
        """Whether the ``/``-separated path ``relative`` (to the root) is one this directory
        serves: it matches the pattern, has no empty, ``.`` or ``..`` part and, unless
        hidden files are included, no part starting with a dot. Pure string work; never
        blocks."""
        parts = relative.split("/")
        if any(part in ("", ".", "..") for part in parts):
            return False
        if not self.include_hidden and any(part.startswith(".") for part in parts):
            return False
        return self._glob.matches(parts)

    def _relative_for(self, uri: str) -> str | None:
        """The path ``uri`` names relative to the root, if it is one this directory serves
        (string checks only)."""
        if not uri.startswith(self.uri_prefix):
            return None

        relative = unquote(uri[len(self.uri_prefix) :])
        if not relative or relative.startswith(("/", "\\")) or "\x00" in relative:
            return None
        # Split as this OS does (a backslash separates on Windows) and check the parts as
        # written, before resolving: "docs/./x" or "docs//x" are refused, not normalized.
        parts = re.split(r"[/\\]" if os.sep == "\\" else "/", relative)
        joined = "/".join(parts)
        return joined if self.offers(joined) else None

    def path_for(self, uri: str) -> Path | None:
        """The file ``uri`` names inside the root, or ``None`` (not found) when it names
        nothing this directory serves.

        Blocks: resolves the path on the filesystem.
        """
        relative = self._relative_for(uri)
        if relative is None:
            return None
        candidate = (self.root / relative).resolve()
        if candidate == self.root or self.root not in candidate.parents:
            return None
        if not self.include_hidden and any(
            part.startswith(".") for part in candidate.relative_to(self.root).parts
        ):
            return None  # a link onto a hidden file
        return candidate if candidate.is_file() else None

    def uri_for(self, path: Path) -> str:
        return self.uri_prefix + quote(path.relative_to(self.root).as_posix())

    def list_resources(self) -> list[Resource]:
        """The files this directory serves (those :meth:`read` would read), in path order.

        Blocks: walks the tree (not into hidden directories unless they are included,
        nor into symlinked ones, nor where the pattern cannot match) and stats each
        file. From async code use :meth:`list_resources_async`, which runs it in a
        worker thread.
        """
        found = []
        for directory, subdirectories, files in os.walk(self.root):
            base = Path(directory).relative_to(self.root).parts
            subdirectories[:] = sorted(
                name
                for name in subdirectories
                if (self.include_hidden or not name.startswith("."))
                and self._glob.may_contain((*base, name))
            )
            for name in files:
                relative = "/".join((*base, name))
                if not self.offers(relative):
                    continue
                path = self.root.joinpath(*base, name)
                resolved = self.path_for(self.uri_for(path))
                if resolved is None:
                    continue
                mime, _ = mimetypes.guess_type(name)
                found.append(
                    Resource(
                        uri=self.uri_for(path),
                        name=relative,
                        mime_type=mime,
                        size=resolved.stat().st_size,
                    )
                )
        found.sort(key=lambda resource: resource.name.split("/"))
        return found

    async def list_resources_async(self) -> list[Resource]:
        """:meth:`list_resources`, run in a worker thread."""
        return await trio.to_thread.run_sync(self.list_resources)

    def _load(self, uri: str) -> tuple[Path, bytes] | None:
        """The file ``uri`` names and its bytes, or ``None``. Blocks (runs in a worker).

        Raises:
            McpError: -32602 when the file is larger than ``max_bytes``.
        """
        path = self.path_for(uri)
        if path is None:
            return None
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > self.max_bytes:
                raise McpError(
                    f"{uri} is {size} bytes; this server reads at most {self.max_bytes}",
                    code=ErrorCode.INVALID_PARAMS,
                )
            data = file.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:  # it grew since the stat
            raise McpError(
                f"{uri} is over {self.max_bytes} bytes; this server reads at most {self.max_bytes}",
                code=ErrorCode.INVALID_PARAMS,
            )
        return path, data

    async def read(self, uri: str) -> list[TextResourceContents | BlobResourceContents] | None:
        """The contents of the file ``uri`` names, or ``None`` if this directory does not
        serve it. The filesystem work runs in a worker thread (one hop per read); a URI
        outside the prefix, or one the pattern or the hidden-file rule excludes, is refused
        without touching the filesystem.

        Raises:
            McpError: -32602 when the file is larger than ``max_bytes``.
        """
        if self._relative_for(uri) is None:
            await trio.lowlevel.checkpoint()
            return None
        loaded = await trio.to_thread.run_sync(self._load, uri)
        if loaded is None:
            return None
        path, data = loaded
        mime, _ = mimetypes.guess_type(path.name)
        if (
            mime is None
            or mime.startswith("text/")
            or mime in ("application/json", "application/xml")
        ):
            try:
                return [
                    TextResourceContents(
                        uri=uri, text=data.decode("utf-8"), mime_type=mime or "text/plain"
                    )
                ]
            except UnicodeDecodeError:
                pass
        return [BlobResourceContents.from_bytes(uri, data, mime or "application/octet-stream")]


class _Glob:
    """A :meth:`pathlib.Path.glob` pattern matched against relative paths given as parts,
    segment by segment as pathlib does: each segment is an :mod:`fnmatch` pattern for one
    part (``*`` never crosses a ``/``), ``**`` is any number of parts. Case-sensitive."""

    def __init__(self, pattern: str) -> None:
        self._segments: list[re.Pattern[str] | None] = [
            None if segment == "**" else re.compile(fnmatch.translate(segment))
            for segment in pattern.split("/")
            if segment not in ("", ".")
        ]

    def _close(self, states: set[int]) -> set[int]:
        """``states`` plus the positions reached by letting each ``**`` match nothing."""
        closed = set(states)
        for k in sorted(states):
            while k < len(self._segments) and self._segments[k] is None:
                k += 1
                closed.add(k)
        return closed

    def _walk(self, parts: Sequence[str]) -> set[int]:
        states = self._close({0})
        for part in parts:
            following = set()
            for k in states:
                if k == len(self._segments):
                    continue
                segment = self._segments[k]
                if segment is None:
                    following.add(k)
                elif segment.match(part):
                    following.add(k + 1)
            states = self._close(following)
            if not states:
                break
        return states

    def matches(self, parts: Sequence[str]) -> bool:
        """Whether the path made of ``parts`` matches the whole pattern."""
        return len(self._segments) in self._walk(parts)

    def may_contain(self, parts: Sequence[str]) -> bool:
        """Whether something inside the directory made of ``parts`` could match."""
        return any(k < len(self._segments) for k in self._walk(parts))
