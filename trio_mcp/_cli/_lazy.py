"""What the ``trio-mcp`` command loads only for the subcommand or option that needs it: the
HTTP and WebSocket clients (``--url``), the OAuth flows and a browser (``--auth``,
``--client-credentials``), the server card reader (``card``), and the completion and roots
models (``complete``, ``demo``).
``trio-mcp --help`` and a stdio ``list`` load none of them (see "What importing loads" in
``docs/reference/layout.md``). Code here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    import webbrowser
    import httpx
    import trio_websocket
    from .._http.client._connect import open_http_client
    from .._types._completion import PromptReference, ResourceTemplateReference
    from .._types._roots import Root
    from ..auth import AuthorizationCode, ClientCredentials, ClientInfo, FileTokenStore, OAuth
    from ..auth import open_loopback_redirect
    from .._websocket import open_websocket_client
    from .._cards._fetching import card_url, fetch_catalog, fetch_server_card
    from .._cards._generate import CARD_META_KEY
    from .._cards._model import CardError
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
