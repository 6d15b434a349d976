"""Asking an authorization server for a JSON document (metadata, keys, introspection), with
a deadline and a size bound."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import trio

from ._verifier import VerifierUnavailable

__all__ = ["JsonFetcher", "warn_if_insecure"]

log = logging.getLogger("trio_mcp.auth")
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def warn_if_insecure(url: str) -> None:
    """Log a warning for an authorization server reached without TLS (the MCP spec: its
    endpoints MUST be served over HTTPS), unless it is on this machine."""
    parts = urlsplit(url)
    if parts.scheme != "https" and (parts.hostname or "") not in _LOOPBACK:
        log.warning("the authorization server at %s is not served over HTTPS", url)


class JsonFetcher:
    """Fetches JSON documents for a verifier.

    Args:
        http_client: the httpx client to use (yours: its proxies, certificates,
            transport); by default each fetch opens and closes one of its own.
        timeout: seconds a fetch may take in all.
        max_bytes: the largest document accepted.
    """

    def __init__(
        self,
        http_client: httpx.AsyncClient | None = None,
        *,
        timeout: float = 10.0,
        max_bytes: int = 1024 * 1024,
    ) -> None:
        self.http_client = http_client
        self.timeout = timeout
        self.max_bytes = max_bytes

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        if self.http_client is not None:
            yield self.http_client
        else:
            async with httpx.AsyncClient(follow_redirects=False) as client:
                yield client

    async def request(
        self,
        method: str,
        url: str,
        *,
        data: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
    ) -> tuple[int, Any]:
        """``(status, parsed JSON body)``; the body is ``None`` when it is not JSON. Blocks
        for the round trip, at most :attr:`timeout` seconds.

        Raises:
            VerifierUnavailable: the server could not be reached in time, or sent more
                than :attr:`max_bytes`.
        """
        headers = {"accept": "application/json"}
        try:
            with trio.fail_after(self.timeout):
                async with self._client() as client:
                    request = client.build_request(method, url, headers=headers, data=data)
                    response = await client.send(request, auth=auth, stream=True)
                    try:
                        body = bytearray()
                        async for chunk in response.aiter_bytes():
                            body += chunk
                            if len(body) > self.max_bytes:
                                raise VerifierUnavailable(
                                    f"{url} sent more than {self.max_bytes} bytes"
                                )
                    finally:
                        await response.aclose()
        except trio.TooSlowError:
            raise VerifierUnavailable(f"{url} did not answer within {self.timeout} s") from None
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"{url} could not be reached: {exc}") from None
        try:
            return response.status_code, orjson.loads(body)
        except orjson.JSONDecodeError:
            return response.status_code, None

    async def get_json(self, url: str) -> dict[str, Any]:
        """The JSON object at ``url``.

        Raises:
            VerifierUnavailable: unreachable, not ``200``, or not a JSON object.
        """
        status, document = await self.request("GET", url)
        if status != 200 or not isinstance(document, dict):
            raise VerifierUnavailable(f"{url} answered {status} without a JSON object")
        return document
