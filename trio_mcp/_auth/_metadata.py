"""The Protected Resource Metadata document (RFC 9728) of an MCP server, and where it is
served."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import attrs

__all__ = [
    "WELL_KNOWN",
    "ProtectedResourceMetadata",
    "canonical_resource",
    "metadata_url",
    "same_resource",
]

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def canonical_resource(url: str) -> str:
    """``url`` checked as a canonical resource URI (RFC 8707 section 2) and normalized for
    comparison: scheme and host in lower case, default port dropped, a lone ``/`` path
    dropped.

    Raises:
        ValueError: not an absolute ``http``/``https`` URI, or it has a fragment.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an absolute http(s) URI")
    if parts.fragment or "#" in url:
        raise ValueError(f"{url!r} has a fragment: resource URIs must not")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((scheme, host, path, parts.query, ""))


def same_resource(audience: str, resource: str) -> bool:
    """Whether a token's audience value names ``resource`` (already canonical)."""
    try:
        return canonical_resource(audience) == resource
    except ValueError:
        return False


def metadata_url(resource: str) -> str:
    """Where the metadata of ``resource`` is: the well-known path inserted between host and
    path (RFC 9728 section 3.1)."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + path, "", ""))


@attrs.frozen(kw_only=True)
class ProtectedResourceMetadata:
    """What an MCP server tells clients about itself as an OAuth protected resource.

    Attributes:
        resource: its canonical URI (what tokens' audience must name).
        authorization_servers: the issuers whose tokens it accepts.
        scopes_supported: the scopes a client should ask for to start with (the minimum
            for basic use; more are asked for by 403 challenges).
        bearer_methods_supported: how tokens may be sent: the ``Authorization`` header only.
        resource_name, resource_documentation: for people.
        dpop_signing_alg_values_supported: the DPoP proof algorithms accepted, when it
            accepts DPoP.
        dpop_bound_access_tokens_required: whether every token must be DPoP-bound.
        extra: further fields, written as given.
    """

    resource: str
    authorization_servers: Sequence[str]
    scopes_supported: Sequence[str] | None = None
    bearer_methods_supported: Sequence[str] = ("header",)
    resource_name: str | None = None
    resource_documentation: str | None = None
    dpop_signing_alg_values_supported: Sequence[str] | None = None
    dpop_bound_access_tokens_required: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON document (fields without a value left out)."""
        document: dict[str, Any] = dict(self.extra)
        document["resource"] = self.resource
        document["authorization_servers"] = list(self.authorization_servers)
        document["bearer_methods_supported"] = list(self.bearer_methods_supported)
        optional: dict[str, Any] = {
            "scopes_supported": self.scopes_supported,
            "resource_name": self.resource_name,
            "resource_documentation": self.resource_documentation,
            "dpop_signing_alg_values_supported": self.dpop_signing_alg_values_supported,
            "dpop_bound_access_tokens_required": self.dpop_bound_access_tokens_required,
        }
        for name, value in optional.items():
            if value is not None:
                document[name] = list(value) if isinstance(value, (list, tuple)) else value
        return document
