"""What each side declares it can do (``capabilities``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from ._base import Model


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RootsCapability(Model):
    list_changed: bool | None = None

    __until__: ClassVar[Mapping[str, str]] = {"list_changed": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SamplingCapability(Model):
    #: Present if the client honours ``includeContext`` other than ``"none"``.
    context: dict[str, Any] | None = None
    #: Present if the client accepts ``tools`` and ``toolChoice``.
    tools: dict[str, Any] | None = None

    __since__: ClassVar[Mapping[str, str]] = {"context": "2025-11-25", "tools": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ElicitationCapability(Model):
    """Elicitation modes; an empty object means form mode only (backwards compatible)."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None

    __since__: ClassVar[Mapping[str, str]] = {"form": "2025-11-25", "url": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ClientCapabilities(Model):
    experimental: dict[str, dict[str, Any]] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    #: Task-augmented requests (2025-11-25 only; an extension from 2026-07-28 on).
    tasks: dict[str, Any] | None = None

    # ``extensions`` goes to every revision: 2026-07-28 defines it, and hosts of the MCP
    # Apps extension declare it on initialize-era connections too (older servers ignore
    # keys they do not know).
    __since__: ClassVar[Mapping[str, str]] = {
        "elicitation": "2025-06-18",
        "tasks": "2025-11-25",
    }
    __until__: ClassVar[Mapping[str, str]] = {"tasks": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptsCapability(Model):
    list_changed: bool | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourcesCapability(Model):
    subscribe: bool | None = None
    list_changed: bool | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolsCapability(Model):
    list_changed: bool | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ServerCapabilities(Model):
    experimental: dict[str, dict[str, Any]] | None = None
    extensions: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: dict[str, Any] | None = None

    __since__: ClassVar[Mapping[str, str]] = {
        "completions": "2025-03-26",
        "extensions": "2026-07-28",
        "tasks": "2025-11-25",
    }
    __until__: ClassVar[Mapping[str, str]] = {"tasks": "2025-11-25"}
