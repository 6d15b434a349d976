"""What an MCP App's server and its host agree on (SEP-1865, ``io.modelcontextprotocol/ui``):
the identifiers, a UI resource's ``_meta.ui`` (CSP domains, permissions, dedicated
domain, border) and a tool's ``_meta.ui`` (the linked resource, who may call it), read
strictly and written back, and the Content Security Policy and permission policy a host
builds from them.

No I/O here. Reading is strict: a field of the wrong type, a URI outside ``ui://``, an
unknown visibility or a CSP source that could smuggle another directive into the policy
(a ``;``, a quote, a space, a keyword such as ``'unsafe-eval'``) is an
:class:`AppFormatError` naming the field; fields this revision does not define are ignored,
as the SEP's future settings will be.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, TypeAlias, get_args

import attrs

from .._types._capabilities import ClientCapabilities

__all__ = [
    "APPS_EXTENSION",
    "MAX_APP_BYTES",
    "APP_MIME_TYPE",
    "AppCsp",
    "AppFormatError",
    "AppMeta",
    "Permission",
    "ToolUi",
    "Visibility",
    "check_ui_uri",
    "client_extension",
    "supports_apps",
]

#: The extension's identifier in ``capabilities.extensions``.
APPS_EXTENSION: Final = "io.modelcontextprotocol/ui"
#: The one content type of the SEP's first version: an HTML5 document.
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
#: The largest UI resource a client accepts (bytes of HTML after base64 decoding).
MAX_APP_BYTES: Final = 4 * 1024 * 1024

#: Who may call a tool: the model (``"model"``) and the app's view (``"app"``).
Visibility: TypeAlias = Literal["model", "app"]
#: The browser permissions a view may ask for (the iframe's ``allow`` attribute).
Permission: TypeAlias = Literal["camera", "microphone", "geolocation", "clipboardWrite"]

_VISIBILITIES: Final = frozenset(get_args(Visibility))
_PERMISSIONS: Final = frozenset(get_args(Permission))
_POLICY_FEATURES: Final = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}
# A CSP host-source: scheme://host[:port][/path], the host maybe led by "*.".
_SOURCE = re.compile(
    r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*(?::[0-9]{1,5}|:\*)?"
    r"(?:/[A-Za-z0-9._~!$&()*+,=:@%/-]*)?"
)
_MAX_SOURCES: Final = 64
_DEFAULT_VISIBILITY: Final[tuple[Visibility, ...]] = ("model", "app")


class AppFormatError(ValueError):
    """A UI resource or a tool's ``_meta.ui`` breaks a rule of the Apps extension; the
    message names the field (and the resource or tool)."""


def check_ui_uri(uri: object, field: str = "uri") -> str:
    """``uri`` if it is a ``ui://`` URI, else :class:`AppFormatError` naming ``field``."""
    if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) == len("ui://"):
        raise AppFormatError(f"{field} must be a ui:// URI, not {uri!r:.80}")
    return uri


def _sources(field: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise AppFormatError(f"{field} must be a list of origins, not {type(value).__name__}")
    if len(value) > _MAX_SOURCES:
        raise AppFormatError(f"{field} lists {len(value)} origins; at most {_MAX_SOURCES}")
    for source in value:
        if not isinstance(source, str) or not _SOURCE.fullmatch(source):
            raise AppFormatError(
                f"{field} has {source!r:.80}, which is not an origin "
                "(scheme://host[:port], the host maybe '*.'-led)"
            )
    return tuple(value)


def _origins(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise AppFormatError(f"CSP origins are a list of strings, not the string {value!r:.80}")
    return tuple(value)


@attrs.frozen(kw_only=True)
class AppCsp:
    """The external origins a view needs (``_meta.ui.csp``); each empty by default, which
    the host's policy turns into "none".

    Attributes:
        connect_domains: fetch/XHR/WebSocket (``connect-src``).
        resource_domains: scripts, styles, images, fonts, media.
        frame_domains: nested iframes (``frame-src``).
        base_uri_domains: ``base-uri``.

    Raises:
        AppFormatError: a source that is not an origin (``scheme://host[:port]``).
    """

    connect_domains: tuple[str, ...] = attrs.field(default=(), converter=_origins)
    resource_domains: tuple[str, ...] = attrs.field(default=(), converter=_origins)
    frame_domains: tuple[str, ...] = attrs.field(default=(), converter=_origins)
    base_uri_domains: tuple[str, ...] = attrs.field(default=(), converter=_origins)

    def __attrs_post_init__(self) -> None:
        for name, wire in _CSP_FIELDS.items():
            _sources(f"csp.{wire}", getattr(self, name))

    def to_json(self) -> dict[str, list[str]]:
        return {
            wire: list(getattr(self, name))
            for name, wire in _CSP_FIELDS.items()
            if getattr(self, name)
        }

    @classmethod
    def from_json(cls, value: object, where: str) -> AppCsp:
        if not isinstance(value, Mapping):
            raise AppFormatError(f"{where}.csp must be an object")

        def sources(name: str) -> tuple[str, ...]:
            return _sources(f"{where}.csp.{name}", value.get(name, []))

        return cls(
            connect_domains=sources("connectDomains"),
            resource_domains=sources("resourceDomains"),
            frame_domains=sources("frameDomains"),
            base_uri_domains=sources("baseUriDomains"),
        )

    def policy(self) -> str:
        """The Content Security Policy the SEP has a host enforce for these origins."""

        def joined(sources: tuple[str, ...], none: str = "") -> str:
            return " ".join(sources) if sources else none

        resources = joined(self.resource_domains)
        directives = [
            "default-src 'none'",
            f"script-src 'self' 'unsafe-inline' {resources}",
            f"style-src 'self' 'unsafe-inline' {resources}",
            f"connect-src 'self' {joined(self.connect_domains)}",
            f"img-src 'self' data: {resources}",
            f"font-src 'self' {resources}",
            f"media-src 'self' data: {resources}",
            f"frame-src {joined(self.frame_domains, chr(39) + 'none' + chr(39))}",
            "object-src 'none'",
            f"base-uri {joined(self.base_uri_domains, chr(39) + 'self' + chr(39))}",
        ]
        return "; ".join(directive.rstrip() for directive in directives)


_CSP_FIELDS: Final = {
    "connect_domains": "connectDomains",
    "resource_domains": "resourceDomains",
    "frame_domains": "frameDomains",
    "base_uri_domains": "baseUriDomains",
}


def _permissions(value: Iterable[str]) -> frozenset[Permission]:
    permissions = frozenset(value)
    unknown = permissions - _PERMISSIONS
    if unknown:
        raise AppFormatError(
            f"unknown permission {sorted(unknown)[0]!r}: one of {', '.join(sorted(_PERMISSIONS))}"
        )
    return permissions  # type: ignore[return-value]  # checked against Permission's values


@attrs.frozen(kw_only=True)
class AppMeta:
    """What a UI resource says about how to render it (its contents' ``_meta.ui``).

    Attributes:
        csp: the external origins it needs (``None``: none, the restrictive default).
        permissions: the browser permissions it asks for (a host may refuse them).
        domain: a dedicated sandbox origin (its format is the host's to define).
        prefers_border: whether the host should draw a border (``None``: host decides).
    """

    csp: AppCsp | None = None
    permissions: frozenset[Permission] = attrs.field(default=frozenset(), converter=_permissions)
    domain: str | None = None
    prefers_border: bool | None = None

    def to_json(self) -> dict[str, Any]:
        ui: dict[str, Any] = {}
        if self.csp is not None:
            ui["csp"] = self.csp.to_json()
        if self.permissions:
            ui["permissions"] = {name: {} for name in sorted(self.permissions)}
        if self.domain is not None:
            ui["domain"] = self.domain
        if self.prefers_border is not None:
            ui["prefersBorder"] = self.prefers_border
        return ui

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None, where: str) -> AppMeta:
        """The ``ui`` entry of a resource contents' ``_meta`` (absent: the defaults).

        Raises:
            AppFormatError: a field of the wrong shape, named with ``where``.
        """
        ui = (meta or {}).get("ui")
        if ui is None:
            return cls()
        if not isinstance(ui, Mapping):
            raise AppFormatError(f"{where}: _meta.ui must be an object")
        csp = ui.get("csp")
        permissions = ui.get("permissions", {})
        if not isinstance(permissions, Mapping) or not all(
            isinstance(setting, Mapping) for setting in permissions.values()
        ):
            raise AppFormatError(f"{where}: _meta.ui.permissions must map names to objects")
        domain = ui.get("domain")
        if domain is not None and not isinstance(domain, str):
            raise AppFormatError(f"{where}: _meta.ui.domain must be a string")
        border = ui.get("prefersBorder")
        if border is not None and not isinstance(border, bool):
            raise AppFormatError(f"{where}: _meta.ui.prefersBorder must be true or false")
        try:
            known = _permissions(permissions)
        except AppFormatError as exc:
            raise AppFormatError(f"{where}: _meta.ui.permissions: {exc}") from None
        return cls(
            csp=None if csp is None else AppCsp.from_json(csp, f"{where}: _meta.ui"),
            permissions=known,
            domain=domain,
            prefers_border=border,
        )

    def content_security_policy(self) -> str:
        """The CSP a host enforces on the view: the SEP's restrictive default when the
        resource declares no ``csp``, else one built from its origins (never looser)."""
        if self.csp is None:
            return (
                "default-src 'none'; script-src 'self' 'unsafe-inline'; "
                "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                "media-src 'self' data:; connect-src 'none'"
            )
        return self.csp.policy()

    def permission_policy(self) -> str:
        """The iframe ``allow`` attribute for the permissions asked for (``""``: none)."""
        return "; ".join(_POLICY_FEATURES[name] for name in sorted(self.permissions))


def _visibility(value: Iterable[str]) -> tuple[Visibility, ...]:
    visibility = tuple(value)
    if not visibility or not set(visibility) <= _VISIBILITIES:
        raise AppFormatError(
            f"visibility must be a non-empty list of 'model' and 'app', not {list(visibility)!r}"
        )
    return visibility  # type: ignore[return-value]  # checked against Visibility's values


def _check_link(_: object, __: object, uri: str | None) -> None:
    if uri is not None:
        check_ui_uri(uri, "resource_uri")


@attrs.frozen
class ToolUi:
    """A tool's link to its view (its ``_meta.ui``).

    Attributes:
        resource_uri: the ``ui://`` resource that renders its results (``None``: the tool
            has no view of its own, as an app-only helper of another tool's view).
        visibility: who may call it: ``"model"`` (listed to the model) and/or ``"app"``
            (callable from a view of the same server); both by default.

    Raises:
        AppFormatError: a URI outside ``ui://`` or a bad visibility.
    """

    resource_uri: str | None = attrs.field(default=None, validator=_check_link)
    visibility: tuple[Visibility, ...] = attrs.field(
        default=_DEFAULT_VISIBILITY, converter=_visibility
    )

    @property
    def model_visible(self) -> bool:
        """Whether the model may see and call the tool."""
        return "model" in self.visibility

    @property
    def app_callable(self) -> bool:
        """Whether a view of the tool's server may call it."""
        return "app" in self.visibility

    def to_json(self) -> dict[str, Any]:
        ui: dict[str, Any] = {"visibility": list(self.visibility)}
        if self.resource_uri is not None:
            ui["resourceUri"] = self.resource_uri
        return ui

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None, where: str) -> ToolUi | None:
        """The link in a tool's ``_meta`` (``ui``, or the deprecated flat
        ``ui/resourceUri``), or ``None`` for a tool without one.

        Raises:
            AppFormatError: a link of the wrong shape, named with ``where``.
        """
        meta = meta or {}
        ui = meta.get("ui")
        if ui is None:
            flat = meta.get("ui/resourceUri")
            if flat is None:
                return None
            ui = {"resourceUri": flat}
        if not isinstance(ui, Mapping):
            raise AppFormatError(f"{where}: _meta.ui must be an object")
        visibility = ui.get("visibility", list(_DEFAULT_VISIBILITY))
        if not isinstance(visibility, list) or not all(isinstance(v, str) for v in visibility):
            raise AppFormatError(f"{where}: _meta.ui.visibility must be a list of strings")
        try:
            return cls(ui.get("resourceUri"), visibility)
        except AppFormatError as exc:
            raise AppFormatError(f"{where}: _meta.ui: {exc}") from None


def client_extension() -> dict[str, dict[str, Any]]:
    """What a client that renders views declares (``extensions=`` of a client):
    ``{"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}``."""
    return {APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}


def supports_apps(capabilities: ClientCapabilities | None) -> bool:
    """Whether a client's capabilities (a tool's ``ctx.client_capabilities``) declare
    views of this MIME type, so that a server may offer its UI-linked tools (the SEP's
    advice) or text-only ones."""
    extensions = (capabilities.extensions if capabilities is not None else None) or {}
    settings = extensions.get(APPS_EXTENSION)
    if not isinstance(settings, Mapping):
        return False
    types = settings.get("mimeTypes")
    return isinstance(types, list) and APP_MIME_TYPE in types
