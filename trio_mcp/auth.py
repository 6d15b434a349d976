"""OAuth 2.1 authorization for MCP over HTTP.

The client side is :class:`OAuth`, an ``httpx.Auth`` flow: pass it as ``auth=`` to
:func:`trio_mcp.http.open_http_client` (or to your own ``httpx.AsyncClient``) with a
grant saying how to get a token. DPoP proofs and ``private_key_jwt`` need the ``auth``
extra (``pip install trio-mcp[auth]``).

The server side: pass a :class:`ProtectedResource` as ``asgi_app(server, auth=...)`` (or
``serve(..., auth=...)``) to accept only access tokens issued for the server, checked
by a :class:`TokenVerifier` (:class:`JwtVerifier`, :class:`IntrospectionVerifier`, or
your own), with DPoP proofs when tokens are DPoP-bound (:class:`DpopVerifier`).
Needs the ``auth`` extra.
"""

from ._extras import require_extra

# DPoP and private_key_jwt import joserfc when used: httpx is what importing needs.
require_extra("auth", "trio_mcp.auth", "httpx")

from ._auth._client._challenge import Challenge as Challenge, parse_challenges as parse_challenges
from ._auth._client._client_auth import ClientInfo as ClientInfo
from ._auth._client._errors import (
    AuthorizationError as AuthorizationError,
    CallbackError as CallbackError,
    DiscoveryError as DiscoveryError,
    InsecureTokenStore as InsecureTokenStore,
    RegistrationError as RegistrationError,
    TokenRequestError as TokenRequestError,
)
from ._auth._client._grants import (
    AuthorizationCode as AuthorizationCode,
    ClientCredentials as ClientCredentials,
    EnterpriseManaged as EnterpriseManaged,
    Grant as Grant,
    JwtBearer as JwtBearer,
    RedirectHandler as RedirectHandler,
)
from ._auth._client._login import (
    LoopbackRedirect as LoopbackRedirect,
    fetch_redirect as fetch_redirect,
    open_loopback_redirect as open_loopback_redirect,
)
from ._auth._client._metadata import (
    ResourceMetadata as ResourceMetadata,
    ServerMetadata as ServerMetadata,
)
from ._auth._client._oauth import OAuth as OAuth
from ._auth._client._tokens import (
    FileTokenStore as FileTokenStore,
    MemoryTokenStore as MemoryTokenStore,
    TokenKey as TokenKey,
    Tokens as Tokens,
    TokenStore as TokenStore,
)
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
    DEFAULT_PRINCIPAL_CLAIMS as DEFAULT_PRINCIPAL_CLAIMS,
    AccessToken as AccessToken,
    InvalidToken as InvalidToken,
    TokenVerifier as TokenVerifier,
    VerifierUnavailable as VerifierUnavailable,
)
