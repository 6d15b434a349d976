"""What the ``trio-mcp`` command loads only for the subcommand or option that needs it: the
HTTP client (``--url``), the OAuth flows and a browser (``--auth``, ``--client-credentials``),
and the completion and roots models (``complete``, ``demo``). ``trio-mcp --help`` and a stdio
``list`` load none of them (see "What importing loads" in ``docs/reference/layout.md``). Code
here writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

if TYPE_CHECKING:
    import webbrowser as webbrowser

    from .._http._client import open_http_client as open_http_client
    from .._types._completion import (
        PromptReference as PromptReference,
        ResourceTemplateReference as ResourceTemplateReference,
    )
    from .._types._roots import Root as Root
    from ..auth import (
        AuthorizationCode as AuthorizationCode,
        ClientCredentials as ClientCredentials,
        ClientInfo as ClientInfo,
        FileTokenStore as FileTokenStore,
        OAuth as OAuth,
        open_loopback_redirect as open_loopback_redirect,
    )

if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        globals(),
        {
            "webbrowser": (),
            ".._http._client": ("open_http_client",),
            ".._types._completion": ("PromptReference", "ResourceTemplateReference"),
            ".._types._roots": ("Root",),
            "..auth": (
                "AuthorizationCode",
                "ClientCredentials",
                "ClientInfo",
                "FileTokenStore",
                "OAuth",
                "open_loopback_redirect",
            ),
        },
    )
