"""OAuth 2.1 authorization for MCP over HTTP.

The server side: pass a :class:`ProtectedResource` as ``asgi_app(server, auth=...)`` (or
``serve(..., auth=...)``) to accept only access tokens issued for the server, checked
by a :class:`TokenVerifier` (:class:`JwtVerifier`, :class:`IntrospectionVerifier`, or
your own), with DPoP proofs when tokens are DPoP-bound (:class:`DpopVerifier`).
Needs the ``auth`` extra: ``pip install 'trio-mcp[auth]'``.
"""

from ._auth._dpop_verify import (
    DpopRefused as DpopRefused,
    DpopVerifier as DpopVerifier,
)
from ._auth._introspection import IntrospectionVerifier as IntrospectionVerifier
from ._auth._jwks import JwksCache as JwksCache
from ._auth._jwt import JwtVerifier as JwtVerifier
from ._auth._metadata import ProtectedResourceMetadata as ProtectedResourceMetadata
from ._auth._resource_server import (
    AuthRefusal as AuthRefusal,
    ProtectedResource as ProtectedResource,
)
from ._auth._verifier import (
    AccessToken as AccessToken,
    InvalidToken as InvalidToken,
    TokenVerifier as TokenVerifier,
    VerifierUnavailable as VerifierUnavailable,
)
