"""The HTTP the client does with authorization servers (and identity providers):
fetching metadata, registering, and token requests, with DPoP proofs and the
``use_dpop_nonce`` retry (RFC 9449 §8) on the token endpoint.

Redirects are never followed here (a token request that is redirected fails), bodies
are capped at :data:`MAX_BODY`, and nothing logged carries a token or a secret.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
import orjson

from ..._resend import stream_resending
from ._challenge import parse_challenges
from ._errors import DiscoveryError, TokenRequestError
from ._tokens import Tokens

if TYPE_CHECKING:
    from ._dpop_proof import DPoPKey

__all__ = ["DEFAULT_OAUTH_TIMEOUT", "MAX_BODY", "Requester", "nonce_challenge"]

#: Bytes of a metadata, registration or token response read at most.
MAX_BODY = 256 * 1024
#: Seconds for each request to an authorization server when the flow makes its own client.
DEFAULT_OAUTH_TIMEOUT = 30.0


class Requester:
    """Requests to authorization servers, through ``http`` (yours, not closed here) or
    through a client opened for each operation and closed after it."""

    def __init__(self, http: httpx.AsyncClient | None = None) -> None:
        self._http = http
        self.nonces: dict[str, str] = {}  # DPoP nonce per origin of a token endpoint

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._http is not None:
            yield self._http
            return
        async with httpx.AsyncClient(follow_redirects=False, timeout=DEFAULT_OAUTH_TIMEOUT) as c:
            yield c

    async def _read(self, response: httpx.Response) -> bytes:
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_BODY:
                raise DiscoveryError(f"{response.request.url}: the response is too large")
        return bytes(body)

    async def get_json(self, http: httpx.AsyncClient, url: str) -> Any | None:
        """The JSON document at ``url``, or ``None`` when it is not there (any status but
        200). Raises :class:`DiscoveryError` when it cannot be fetched or read."""
        try:
            async with stream_resending(
                http, "GET", url, headers={"Accept": "application/json"}
            ) as resp:
                if resp.status_code != 200:
                    return None
                body = await self._read(resp)
        except httpx.HTTPError as exc:
            raise DiscoveryError(f"cannot fetch {url}: {exc!r}") from None
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            raise DiscoveryError(f"{url} did not answer with JSON") from None

    async def post_json(self, http: httpx.AsyncClient, url: str, document: dict[str, Any]) -> Any:
        """POST a JSON document (a registration); the JSON answer of a 2xx response.

        Raises:
            TokenRequestError: any other status, or an answer that is not JSON.
        """
        try:
            async with stream_resending(http, "POST", url, json=document) as response:
                body = await self._read(response)
        except httpx.HTTPError as exc:
            raise TokenRequestError(f"cannot reach {url}: {exc!r}") from None
        answer = _json_or_none(body)
        if not 200 <= response.status_code < 300 or not isinstance(answer, dict):
            raise _refusal(url, response.status_code, answer)
        return answer

    async def token_request(
        self,
        http: httpx.AsyncClient,
        url: str,
        form: dict[str, str],
        headers: dict[str, str] | None = None,
        *,
        dpop: DPoPKey | None = None,
        requested_scope: tuple[str, ...] = (),
        any_token_type: bool = False,
    ) -> Tokens:
        """POST a token request and read the tokens from the answer. With ``dpop``, each
        attempt carries a fresh proof, and a ``use_dpop_nonce`` answer is retried once
        with the nonce the server sent.

        ``any_token_type`` accepts a token of any ``token_type`` (an RFC 8693 exchange
        answers ``N_A``); otherwise only Bearer and DPoP tokens are.

        Raises:
            TokenRequestError: the server refused, or answered without a usable token.
        """
        for attempt in range(2):
            sent = dict(headers or {})
            sent["Accept"] = "application/json"
            if dpop is not None:
                sent["DPoP"] = dpop.proof("POST", url, nonce=self._nonce_for(url))
            try:
                async with stream_resending(http, "POST", url, data=form, headers=sent) as response:
                    body = await self._read(response)
            except httpx.HTTPError as exc:
                raise TokenRequestError(f"cannot reach {url}: {exc!r}") from None
            nonce = response.headers.get("DPoP-Nonce")
            if nonce and dpop is not None:
                self.nonces[_origin_key(url)] = nonce
            answer = _json_or_none(body)
            if response.status_code == 200 and isinstance(answer, dict):
                return _tokens(url, answer, requested_scope, any_token_type)
            error = answer.get("error") if isinstance(answer, dict) else None
            if error == "use_dpop_nonce" and nonce and dpop is not None and attempt == 0:
                continue
            raise _refusal(url, response.status_code, answer)
        raise AssertionError("unreachable")

    def _nonce_for(self, url: str) -> str | None:
        return self.nonces.get(_origin_key(url))


def _origin_key(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.netloc.decode('ascii', 'replace')}"


def _json_or_none(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def _refusal(url: str, status: int, answer: Any) -> TokenRequestError:
    error = answer.get("error") if isinstance(answer, dict) else None
    error = error if isinstance(error, str) else None
    description = answer.get("error_description") if isinstance(answer, dict) else None
    detail = f": {description[:300]}" if isinstance(description, str) else ""
    return TokenRequestError(
        f"{url} refused the request (HTTP {status}, {error or 'no error code'}){detail}",
        error=error,
        status=status,
    )


def _tokens(
    url: str, answer: dict[str, Any], requested: tuple[str, ...], any_type: bool = False
) -> Tokens:
    access = answer.get("access_token")
    kind = answer.get("token_type", "Bearer")
    if not isinstance(access, str) or not access or not isinstance(kind, str):
        raise TokenRequestError(f"{url} answered without a usable access_token")
    if kind.lower() not in ("bearer", "dpop") and not any_type:
        raise TokenRequestError(f"{url} issued a token of unknown type {kind[:40]!r}")
    expires_in = answer.get("expires_in")
    if isinstance(expires_in, bool) or not isinstance(expires_in, int | float):
        expires_in = None
    refresh = answer.get("refresh_token")
    scope = answer.get("scope")
    now = time.time()
    return Tokens(
        access_token=access,
        token_type="DPoP" if kind.lower() == "dpop" else "Bearer",
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        expires_at=None if expires_in is None else now + float(expires_in),
        scope=tuple(scope.split()) if isinstance(scope, str) else requested,
        issued_at=now,
    )


def nonce_challenge(response: httpx.Response) -> str | None:
    """The nonce a resource server asks DPoP proofs to carry (a 401 whose challenge says
    ``error="use_dpop_nonce"``, with a ``DPoP-Nonce`` header), or ``None``."""
    nonce: str | None = response.headers.get("DPoP-Nonce")
    if response.status_code != 401 or not nonce:
        return None
    header = ", ".join(response.headers.get_list("WWW-Authenticate"))
    for challenge in parse_challenges(header):
        if challenge.param("error") == "use_dpop_nonce":
            return nonce
    return None
