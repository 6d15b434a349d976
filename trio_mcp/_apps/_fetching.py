"""Reading a view from a server (the client's and host's side of MCP Apps): the view a tool
links, read with ``resources/read`` and checked before it is handed to whatever renders
it."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Protocol

import attrs

from .._types._content import BlobResourceContents, TextResourceContents
from .._types._tools import Tool
from ._format import APP_MIME_TYPE, MAX_APP_BYTES, AppFormatError, AppMeta, ToolUi, check_ui_uri

if TYPE_CHECKING:
    from .._types._resources import ReadResourceResult

__all__ = ["AppView", "read_view", "tool_ui", "view_from_result"]


class _Reader(Protocol):
    """What :func:`read_view` needs of a client."""

    async def read_resource(self, uri: str) -> ReadResourceResult: ...


@attrs.frozen(kw_only=True)
class AppView:
    """A view, checked, for the application that renders it in a sandboxed iframe.

    Attributes:
        uri: its ``ui://`` URI.
        html: the HTML document.
        meta: what it asks of its renderer (CSP origins, permissions, domain, border).
        server: the host's name of the server it came from (``None`` when read with a
            plain client); its calls go to that server only.
    """

    uri: str
    html: str
    meta: AppMeta
    server: str | None = None

    @property
    def content_security_policy(self) -> str:
        """The CSP to enforce on the iframe (see :meth:`AppMeta.content_security_policy`)."""
        return self.meta.content_security_policy()

    @property
    def permission_policy(self) -> str:
        """The iframe's ``allow`` attribute (``""``: no permission asked)."""
        return self.meta.permission_policy()


def tool_ui(tool: Tool) -> ToolUi | None:
    """The view link of ``tool`` (its ``_meta.ui``), or ``None`` for a tool without one.

    Raises:
        AppFormatError: the link is malformed (naming the tool and the field).
    """
    return ToolUi.from_meta(tool.meta, f"tool {tool.name!r}")


def view_from_result(uri: str, result: ReadResourceResult, server: str | None = None) -> AppView:
    """The view at ``uri`` in a ``resources/read`` result, checked: one contents of that
    URI, of type ``text/html;profile=mcp-app``, at most :data:`MAX_APP_BYTES` of UTF-8
    HTML (text, or base64 in a blob), its ``_meta.ui`` well formed.

    Raises:
        AppFormatError: what is wrong, naming the URI.
    """
    check_ui_uri(uri)
    matching = [content for content in result.contents if content.uri == uri]
    if len(matching) != 1:
        raise AppFormatError(
            f"view {uri}: the server's read gave {len(matching)} contents of that URI, not 1"
        )
    content = matching[0]
    if content.mime_type != APP_MIME_TYPE:
        raise AppFormatError(
            f"view {uri}: its type is {content.mime_type!r}, not {APP_MIME_TYPE!r} (a view must "
            "declare it; anything else is not rendered)"
        )
    if isinstance(content, TextResourceContents):
        html = content.text
        if len(html) > MAX_APP_BYTES:  # characters: a cheap bound before encoding
            raise AppFormatError(f"view {uri}: larger than {MAX_APP_BYTES} bytes")
        if len(html.encode()) > MAX_APP_BYTES:
            raise AppFormatError(f"view {uri}: larger than {MAX_APP_BYTES} bytes")
    else:
        assert isinstance(content, BlobResourceContents)
        if len(content.blob) > (MAX_APP_BYTES + 2) // 3 * 4:
            raise AppFormatError(f"view {uri}: larger than {MAX_APP_BYTES} bytes")
        try:
            html = base64.b64decode(content.blob, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise AppFormatError(f"view {uri}: its blob is not base64 of UTF-8 ({exc})") from None
    return AppView(
        uri=uri, html=html, meta=AppMeta.from_meta(content.meta, f"view {uri}"), server=server
    )


async def read_view(client: _Reader, uri: str) -> AppView:
    """Read the view at ``uri`` from ``client``'s server and check it (see
    :func:`view_from_result`). Blocks for one ``resources/read``; cancelling it cancels
    the request.

    Raises:
        AppFormatError: the view is malformed (or ``uri`` is not a ``ui://`` URI).
        McpError: the server refused the read.
    """
    check_ui_uri(uri)
    return view_from_result(uri, await client.read_resource(uri))
