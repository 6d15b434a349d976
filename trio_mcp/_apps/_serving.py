"""A view as a resource of a server: ``@server.app("ui://...")`` builds an
:class:`AppSpec`, a resource whose contents always carry the Apps MIME type and the
view's ``_meta.ui``, whatever the function returns (HTML text, or bytes of HTML sent as
base64)."""

from __future__ import annotations

from typing import Any

import attrs

from .._server._context import Context
from .._server._resources import Reader, ResourceOptions, ResourceSpec
from .._types._content import BlobResourceContents, TextResourceContents
from ._format import APP_MIME_TYPE, AppFormatError, AppMeta, check_ui_uri

__all__ = ["AppSpec"]


@attrs.define(eq=False)
class AppSpec(ResourceSpec):
    """A UI resource (``ui://``, ``text/html;profile=mcp-app``) and how to read it."""

    meta: AppMeta = attrs.field(factory=AppMeta, kw_only=True)

    @classmethod
    def from_app(cls, uri: str, fn: Reader, meta: AppMeta, options: ResourceOptions) -> AppSpec:
        """The view at ``uri`` that ``fn`` renders.

        Raises:
            AppFormatError: ``uri`` is not a ``ui://`` URI, or ``mime_type`` is given and is
                not the Apps type.
        """
        check_ui_uri(uri)
        mime_type = options.get("mime_type")
        if mime_type not in (None, APP_MIME_TYPE):
            raise AppFormatError(f"a view's mime_type is {APP_MIME_TYPE!r}, not {mime_type!r}")
        listed_meta: dict[str, Any] = dict(options.get("meta") or {})
        if meta.to_json():
            listed_meta["ui"] = meta.to_json()
        listed: ResourceOptions = {
            **options,
            "mime_type": APP_MIME_TYPE,
            "meta": listed_meta or None,
        }
        resource = ResourceSpec.from_function(uri, fn, **listed)
        return cls(
            resource.resource, resource.fn, resource.context_parameter, resource.ttl_ms, meta=meta
        )

    async def read(self, context: Context) -> list[TextResourceContents | BlobResourceContents]:
        contents = await super().read(context)
        ui = self.meta.to_json()
        return [
            attrs.evolve(
                content,
                mime_type=APP_MIME_TYPE,
                meta={**(content.meta or {}), "ui": ui} if ui else content.meta,
            )
            for content in contents
        ]
