"""Content blocks: what tools return, prompts hold and sampling exchanges."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import attrs

from ._base import Icon, MetaObject, Model, Role


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Annotations(Model):
    """Hints about how a client should use or show an object."""

    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {"last_modified": "2025-06-18"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TextContent(Model):
    text: str
    type: Literal["text"] = "text"
    annotations: Annotations | None = None
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ImageContent(Model):
    """An image; ``data`` is base64. :meth:`from_bytes` encodes for you."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"
    annotations: Annotations | None = None
    meta: MetaObject | None = None

    @classmethod
    def from_bytes(cls, data: bytes, mime_type: str) -> ImageContent:
        return cls(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)

    def decode(self) -> bytes:
        return base64.b64decode(self.data, validate=True)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AudioContent(Model):
    """Audio (2025-03-26); ``data`` is base64. :meth:`from_bytes` encodes for you."""

    data: str
    mime_type: str
    type: Literal["audio"] = "audio"
    annotations: Annotations | None = None
    meta: MetaObject | None = None

    @classmethod
    def from_bytes(cls, data: bytes, mime_type: str) -> AudioContent:
        return cls(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)

    def decode(self) -> bytes:
        return base64.b64decode(self.data, validate=True)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceContents(Model):
    """What every resource content has: a URI and maybe a MIME type."""

    uri: str
    mime_type: str | None = None
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TextResourceContents(ResourceContents):
    text: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class BlobResourceContents(ResourceContents):
    """Binary resource contents; ``blob`` is base64."""

    blob: str

    @classmethod
    def from_bytes(
        cls, uri: str, data: bytes, mime_type: str | None = None
    ) -> BlobResourceContents:
        return cls(uri=uri, blob=base64.b64encode(data).decode("ascii"), mime_type=mime_type)

    def decode(self) -> bytes:
        return base64.b64decode(self.blob, validate=True)


AnyResourceContents: TypeAlias = TextResourceContents | BlobResourceContents


@attrs.frozen(kw_only=True, repr=False, eq=False)
class EmbeddedResource(Model):
    """A resource's contents carried inline."""

    resource: TextResourceContents | BlobResourceContents
    type: Literal["resource"] = "resource"
    annotations: Annotations | None = None
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceLink(Model):
    """A pointer to a resource the client may read (2025-06-18)."""

    uri: str
    name: str
    type: Literal["resource_link"] = "resource_link"
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: MetaObject | None = None

    __since__: ClassVar[Mapping[str, str]] = {"icons": "2025-11-25"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolUseContent(Model):
    """A model's request to use a tool, inside sampling (2025-11-25)."""

    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolResultContent(Model):
    """The result of a tool use, fed back to the model in sampling (2025-11-25)."""

    tool_use_id: str
    content: list[ContentBlock]
    type: Literal["tool_result"] = "tool_result"
    structured_content: Any = None
    is_error: bool | None = None
    meta: MetaObject | None = None


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)
SamplingMessageContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
)
