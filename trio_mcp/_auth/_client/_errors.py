"""What goes wrong while authorizing, as one small hierarchy under ``AuthorizationError``.

Every refusal the client makes on its own (an issuer that does not match, an
authorization server without PKCE S256, a callback with the wrong ``state`` or ``iss``)
raises one of these with a sentence that says what was refused; the MCP request that
needed the token fails with it. Nothing here carries a token or a secret.
"""

from __future__ import annotations

__all__ = [
    "AuthorizationError",
    "CallbackError",
    "DiscoveryError",
    "InsecureTokenStore",
    "RegistrationError",
    "TokenRequestError",
]


class AuthorizationError(Exception):
    """The client could not obtain (or would not use) an access token."""


class DiscoveryError(AuthorizationError):
    """Protected resource or authorization server metadata is missing, malformed, or
    fails validation (an ``issuer`` or ``resource`` that does not match)."""


class RegistrationError(AuthorizationError):
    """The client has no usable client ID for the authorization server."""


class InsecureTokenStore(AuthorizationError, PermissionError):
    """A :class:`~trio_mcp.auth.FileTokenStore` refused its directory or a token file:
    others could read or change it, it belongs to another user, or a link stands in
    place of a token file. The message names the path, its mode or owner, and the fix.
    Also a :exc:`PermissionError`."""


class CallbackError(AuthorizationError):
    """The authorization response was refused: wrong ``state``, wrong or missing ``iss``,
    no code, or an error from the authorization server."""


class TokenRequestError(AuthorizationError):
    """The token endpoint refused a request. ``error`` is the OAuth error code
    (``invalid_grant``, ``invalid_client``, ...) or ``None`` when it sent none."""

    def __init__(self, message: str, *, error: str | None = None, status: int = 0) -> None:
        super().__init__(message)
        self.error = error
        self.status = status

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_token_error, (str(self), self.error, self.status))


def _rebuild_token_error(message: str, error: str | None, status: int) -> TokenRequestError:
    return TokenRequestError(message, error=error, status=status)
