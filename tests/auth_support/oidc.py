"""A real OAuth 2.1 authorization server for the tests: the npm package ``oidc-provider``
(which nobody here wrote), configured by ``oidc_provider.mjs`` beside this file.

The package is installed with npm into :data:`OIDC_CACHE` on first use (later runs need
no network). Tests that need it skip when node, npm or the package cannot be had; with
``TRIO_MCP_REQUIRE_OIDC=1`` (CI sets it) they fail instead.

Use the ``oidc_provider`` fixture (in tests/conftest.py): a running provider, shared by
the session, with a confidential client for ``client_credentials``
(:data:`CLIENT_ID` / :data:`CLIENT_SECRET`) and one for a resource server that
introspects tokens (:data:`RESOURCE_SERVER_ID`); tokens for a resource whose path starts
with ``/opaque/`` are opaque, all others JWTs. Dynamic registration and PKCE (required)
are on for interactive clients, with the provider's development login pages. :func:`start_oidc_provider` starts more
(with keys of your choosing, say to rotate them). :func:`act_as_user` plays the user at the
browser for the authorization code flow (the provider's development login and consent
pages).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import attrs
import pytest

#: The package, at the version these tests were written against.
OIDC_PACKAGE = "oidc-provider"
OIDC_VERSION = "9.13.3"
OIDC_CACHE = Path(os.environ.get("TRIO_MCP_OIDC_CACHE", Path.home() / ".cache" / "trio-mcp-oidc"))
REQUIRE_OIDC = "TRIO_MCP_REQUIRE_OIDC"
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")

CLIENT_ID = "mcp-service"
CLIENT_SECRET = "mcp-service-secret-that-is-long-enough"
#: A client for the resource server itself (it introspects tokens, RFC 7662).
RESOURCE_SERVER_ID = "mcp-resource-server"
RESOURCE_SERVER_SECRET = "mcp-resource-server-secret-long-enough"
SCOPES = ("mcp:tools", "mcp:read")


def unavailable(reason: str) -> NoReturn:
    """Skip the test that needs the provider, or fail it where it is required."""
    if os.environ.get(REQUIRE_OIDC) == "1":
        pytest.fail(f"{reason} ({REQUIRE_OIDC}=1: the oidc-provider tests must run)")
    pytest.skip(reason)


def install(cache: Path = OIDC_CACHE) -> tuple[str, Path]:
    """node, and the folder ``oidc-provider`` is installed in (installing it if needed)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        unavailable("node and npm are needed for oidc-provider")
    manifest = cache / "node_modules" / OIDC_PACKAGE / "package.json"
    try:
        installed = json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError):
        installed = None
    if installed != OIDC_VERSION:
        cache.mkdir(parents=True, exist_ok=True)
        command = [
            npm,
            "install",
            "--prefix",
            str(cache),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{OIDC_PACKAGE}@{OIDC_VERSION}",
        ]
        try:
            subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
        except subprocess.CalledProcessError as exc:
            unavailable(f"npm could not install {OIDC_PACKAGE}: {exc.stderr.strip()[-500:]}")
        except subprocess.TimeoutExpired:
            unavailable(f"npm could not install {OIDC_PACKAGE} within 300 s")
    return node, cache


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def private_jwks() -> dict[str, Any]:
    """A fresh signing key set for the provider: an RSA key (ID tokens) and an EC P-256
    key (JWT access tokens), each with a random ``kid``."""
    from joserfc import jwk

    rsa = jwk.RSAKey.generate_key(2048, auto_kid=True)
    ec = jwk.ECKey.generate_key("P-256", auto_kid=True)
    return {"keys": [rsa.as_dict(private=True), ec.as_dict(private=True)]}


@attrs.frozen
class OidcProvider:
    """A running provider."""

    issuer: str
    port: int
    #: The keys it signs with (private JWKs).
    jwks: dict[str, Any]
    client_id: str = CLIENT_ID
    client_secret: str = CLIENT_SECRET
    resource_server_id: str = RESOURCE_SERVER_ID
    resource_server_secret: str = RESOURCE_SERVER_SECRET

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token"

    @property
    def introspection_endpoint(self) -> str:
        return f"{self.issuer}/token/introspection"

    @property
    def revocation_endpoint(self) -> str:
        return f"{self.issuer}/token/revocation"


@contextmanager
def start_oidc_provider(
    *,
    port: int | None = None,
    jwks: dict[str, Any] | None = None,
    clients: Sequence[dict[str, Any]] | None = None,
    scopes: Sequence[str] = SCOPES,
    access_token_ttl: int | None = None,
    startup_timeout: float = 30.0,
) -> Iterator[OidcProvider]:
    """Run oidc-provider on 127.0.0.1 for the block (then stop it). ``access_token_ttl``:
    the seconds its access tokens live (default: the script's 300)."""
    node, cache = install()
    port = port if port is not None else free_port()
    jwks = jwks if jwks is not None else private_jwks()
    if clients is None:
        clients = [
            {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "grant_types": ["client_credentials"],
                "response_types": [],
                "redirect_uris": [],
                "token_endpoint_auth_method": "client_secret_basic",
                "scope": " ".join(scopes),
            },
            {
                "client_id": RESOURCE_SERVER_ID,
                "client_secret": RESOURCE_SERVER_SECRET,
                "grant_types": [],
                "response_types": [],
                "redirect_uris": [],
            },
        ]
    config: dict[str, Any] = {
        "port": port,
        "jwks": jwks,
        "clients": list(clients),
        "scopes": list(scopes),
    }
    if access_token_ttl is not None:
        config["accessTokenTTL"] = access_token_ttl
    with tempfile.TemporaryDirectory(prefix="trio-mcp-oidc-") as folder:
        config_path = Path(folder) / "config.json"
        config_path.write_text(json.dumps(config))
        env = {**os.environ, "NODE_PATH": str(cache / "node_modules")}
        # The script imports 'oidc-provider': run it from a copy inside the cache, whose
        # node_modules ESM resolution finds (NODE_PATH does not apply to import).
        script = cache / SCRIPT.name
        script.write_text(SCRIPT.read_text())
        process = subprocess.Popen(
            [node, str(script), str(config_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        try:
            line = _first_line(process, startup_timeout)
            if not line.startswith("listening "):
                stderr = process.stderr.read() if process.stderr else ""
                unavailable(f"oidc-provider did not start: {line!r} {stderr[-1000:]}")
            yield OidcProvider(issuer=line.split()[1], port=port, jwks=jwks)
        finally:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    """The first line the process prints, or ``""`` if it exits (or the time is up)."""
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                return process.stdout.readline().strip()
            if process.poll() is not None:
                return ""
    return ""


async def act_as_user(issuer: str, authorization_url: str, *, login: str = "alice") -> str:
    """Play the user at the browser for an authorization request: follow ``authorization_url``
    through oidc-provider's development login and consent pages (any login name is
    accepted, with any password) and return the URL the provider finally redirects to (the
    client's ``redirect_uri`` with ``code``, ``state`` and ``iss``), without fetching it.

    For tests of interactive clients: pass the URL the client would open in a browser.
    """
    import re

    import httpx

    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as browser:
        response = await browser.get(authorization_url)
        for _ in range(10):
            if response.status_code in (302, 303):
                location = str(response.headers["location"])
                if location.startswith("/"):
                    location = issuer + location
                if not location.startswith(issuer):
                    return location
                response = await browser.get(location)
            elif response.status_code == 200 and "<form" in response.text:
                action = re.search(r'<form[^>]*action="([^"]+)"', response.text)
                assert action is not None, response.text[:500]
                if 'name="login"' in response.text:
                    data = {"prompt": "login", "login": login, "password": "any"}
                else:
                    data = {"prompt": "consent"}
                response = await browser.post(action.group(1), data=data)
            else:
                raise AssertionError(
                    f"unexpected page: {response.status_code} {response.text[:500]}"
                )
    raise AssertionError("the authorization did not end in a redirect to the client")
