"""Protected resource metadata (RFC 9728) and authorization server metadata (RFC 8414,
OpenID Connect Discovery) as plain values, with the sans-IO rules around them: which
well-known URLs to try, in which order, and what makes a document unusable.

Every parser takes whatever JSON arrived and returns a value or raises
:class:`DiscoveryError` with a sentence that says what is wrong; nothing else escapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import attrs

from ._errors import DiscoveryError

__all__ = [
    "ResourceMetadata",
    "ServerMetadata",
    "canonical_resource",
    "parse_resource_metadata",
    "parse_server_metadata",
    "resource_metadata_urls",
    "resource_matches",
    "same_origin",
    "server_metadata_urls",
]


@attrs.frozen
class ResourceMetadata:
    """What an MCP server says about itself (RFC 9728 §2)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None


@attrs.frozen
class ServerMetadata:
    """What an authorization server says about itself (RFC 8414 §2), the fields this
    client reads. ``legacy`` marks endpoints guessed for a 2025-03-26 server."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    dpop_signing_alg_values_supported: tuple[str, ...] | None = None
    legacy: bool = False


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 §2): lower-case scheme and host, no
    fragment, no trailing slash on an empty path."""
    parts = urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def same_origin(a: str, b: str) -> bool:
    """Whether two URLs share scheme, host and port (default ports filled in)."""
    return _origin(a) == _origin(b)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port


def resource_matches(server_url: str, resource: str) -> bool:
    """Whether protected resource metadata naming ``resource`` may speak for the MCP
    endpoint at ``server_url`` (RFC 9728 §3.3): the same origin, and a path that is the
    endpoint's path or a parent of it, segment by segment."""
    if not same_origin(server_url, resource):
        return False
    want = urlsplit(server_url).path.rstrip("/").split("/")
    have = urlsplit(resource).path.rstrip("/").split("/")
    return want[: len(have)] == have


def resource_metadata_urls(server_url: str) -> list[str]:
    """Where to look for protected resource metadata without a ``resource_metadata``
    hint: the path-based well-known URL first (when the endpoint has a path), then the
    root one."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    urls = []
    if path:
        urls.append(_at(parts, "/.well-known/oauth-protected-resource" + path))
    urls.append(_at(parts, "/.well-known/oauth-protected-resource"))
    return urls


def server_metadata_urls(issuer: str) -> list[str]:
    """The well-known URLs of an issuer's metadata in the order the spec gives: RFC 8414
    with path insertion, OpenID Connect with path insertion, OpenID Connect with path
    appending (an issuer without a path: RFC 8414, then OpenID Connect)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    if not path:
        return [
            _at(parts, "/.well-known/oauth-authorization-server"),
            _at(parts, "/.well-known/openid-configuration"),
        ]
    return [
        _at(parts, "/.well-known/oauth-authorization-server" + path),
        _at(parts, "/.well-known/openid-configuration" + path),
        _at(parts, path + "/.well-known/openid-configuration"),
    ]


def _at(parts: SplitResult, path: str) -> str:
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _http_url(value: object, what: str) -> str:
    if not isinstance(value, str) or len(value) > 2048:
        raise DiscoveryError(f"{what} is not a URL")
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or parts.fragment:
        raise DiscoveryError(f"{what} is not an http(s) URL without a fragment: {value[:200]!r}")
    return value


def _strings(document: Mapping[str, Any], name: str) -> tuple[str, ...] | None:
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise DiscoveryError(f"{name} is not a list of strings")
    return tuple(value)


def parse_resource_metadata(document: object, *, server_url: str) -> ResourceMetadata:
    """Validate a protected resource metadata document fetched for ``server_url``.

    Raises:
        DiscoveryError: not an object, no usable ``resource`` or ``authorization_servers``,
            or a ``resource`` that does not belong to ``server_url``.
    """
    if not isinstance(document, dict):
        raise DiscoveryError("protected resource metadata is not a JSON object")
    resource = _http_url(document.get("resource"), "the protected resource's resource")
    if not resource_matches(server_url, resource):
        raise DiscoveryError(
            f"protected resource metadata names {resource[:200]!r}, not this server "
            f"({server_url}): refusing to authorize for it"
        )
    servers = _strings(document, "authorization_servers")
    if not servers:
        raise DiscoveryError("protected resource metadata lists no authorization_servers")
    for server in servers:
        _http_url(server, "an authorization server")
    return ResourceMetadata(resource, servers, _strings(document, "scopes_supported"))


def parse_server_metadata(document: object, *, issuer: str) -> ServerMetadata:
    """Validate an authorization server metadata document fetched for ``issuer``.

    Raises:
        DiscoveryError: not an object, an ``issuer`` that is not identical to ``issuer``
            (RFC 8414 §3.3), or missing or malformed endpoints.
    """
    if not isinstance(document, dict):
        raise DiscoveryError("authorization server metadata is not a JSON object")
    found = document.get("issuer")
    if found != issuer:
        shown = found[:200] if isinstance(found, str) else type(found).__name__
        raise DiscoveryError(
            f"authorization server metadata fetched for {issuer} names issuer {shown!r}: "
            "refusing to use it"
        )
    authorize = document.get("authorization_endpoint")
    register = document.get("registration_endpoint")
    for name in ("authorization_response_iss_parameter_supported",
                 "client_id_metadata_document_supported"):  # fmt: skip
        if not isinstance(document.get(name, False), bool):
            raise DiscoveryError(f"{name} is not a boolean")
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=None
        if authorize is None
        else _http_url(authorize, "authorization_endpoint"),
        token_endpoint=_http_url(document.get("token_endpoint"), "token_endpoint"),
        registration_endpoint=None
        if register is None
        else _http_url(register, "registration_endpoint"),
        scopes_supported=_strings(document, "scopes_supported"),
        grant_types_supported=_strings(document, "grant_types_supported"),
        code_challenge_methods_supported=_strings(document, "code_challenge_methods_supported"),
        token_endpoint_auth_methods_supported=_strings(
            document, "token_endpoint_auth_methods_supported"
        ),
        iss_parameter_supported=document.get(
            "authorization_response_iss_parameter_supported", False
        ),
        client_id_metadata_document_supported=document.get(
            "client_id_metadata_document_supported", False
        ),
        dpop_signing_alg_values_supported=_strings(document, "dpop_signing_alg_values_supported"),
    )


def legacy_server_metadata(server_url: str) -> ServerMetadata:
    """The endpoints a 2025-03-26 server without metadata has by default: ``/authorize``,
    ``/token`` and ``/register`` at the MCP server's origin."""
    parts = urlsplit(server_url)
    base = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    return ServerMetadata(
        issuer=base,
        authorization_endpoint=base + "/authorize",
        token_endpoint=base + "/token",
        registration_endpoint=base + "/register",
        code_challenge_methods_supported=("S256",),
        legacy=True,
    )
