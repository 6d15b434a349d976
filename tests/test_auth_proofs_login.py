"""DPoP proofs and client assertions as signed JWTs (checked with joserfc), and the
interactive login's loopback redirect server (a real socket on 127.0.0.1, bounded)."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
import trio
from joserfc import jwt
from joserfc.jwk import ECKey

from trio_mcp._auth._client._client_auth import ClientInfo, client_assertion
from trio_mcp._auth._client._dpop_proof import DPoPKey, content_digest
from trio_mcp._auth._jose import jwk_thumbprint, pkce_pair, token_hash
from trio_mcp.auth import CallbackError, open_loopback_redirect


def test_a_dpop_proof_is_fresh_and_names_the_request() -> None:
    key = DPoPKey()
    first = key.proof("post", "http://mcp.test/mcp?x=1#f", access_token="tok", nonce="n1")
    second = key.proof("POST", "http://mcp.test/mcp", access_token="tok")
    public = ECKey.import_key(key.public_jwk)
    one, two = jwt.decode(first, public), jwt.decode(second, public)
    assert one.header["typ"] == "dpop+jwt" and one.header["alg"] == "ES256"
    assert "d" not in one.header["jwk"]
    assert one.claims["htm"] == "POST" and one.claims["htu"] == "http://mcp.test/mcp"
    assert one.claims["ath"] == token_hash("tok") and one.claims["nonce"] == "n1"
    assert "nonce" not in two.claims
    assert one.claims["jti"] != two.claims["jti"]
    assert key.thumbprint == jwk_thumbprint(key.public_jwk)
    assert "content_digest" not in one.claims
    body = b'{"jsonrpc":"2.0","method":"tools/list","id":1}'
    third = jwt.decode(key.proof("POST", "http://mcp.test/mcp", body=body), public)
    assert third.claims["content_digest"] == content_digest(body)
    assert content_digest(b"") == "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"


def test_the_rfc7638_thumbprint_example() -> None:
    # RFC 7638 §3.1's RSA key and thumbprint
    jwk = {
        "kty": "RSA",
        "e": "AQAB",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    }
    assert jwk_thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    with pytest.raises(ValueError, match="public JWK"):
        jwk_thumbprint({"kty": "oct", "k": "x"})


def test_pkce_pairs_are_s256_and_fresh() -> None:
    import base64
    import hashlib

    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    assert challenge == digest.decode()
    assert pkce_pair()[0] != verifier


def test_a_client_assertion_for_private_key_jwt() -> None:
    key = ECKey.generate_key("P-256")
    pem = key.as_pem(private=True)
    info = ClientInfo("cid", private_key=pem)
    token = jwt.decode(client_assertion(info, audience="http://as.test"), key)
    claims = token.claims
    assert claims["iss"] == claims["sub"] == "cid" and claims["aud"] == "http://as.test"
    assert claims["exp"] > claims["iat"] and claims["jti"]


@pytest.mark.slow
async def test_the_loopback_redirect_receives_one_callback_then_closes() -> None:
    opened: list[str] = []
    statuses: list[int] = []

    def browser(url: str) -> None:  # a "browser" whose user approves at once
        opened.append(url)
        try:
            urllib.request.urlopen(base + "/favicon.ico", timeout=5)
        except urllib.error.HTTPError as exc:
            statuses.append(exc.code)
        with urllib.request.urlopen(base + "/callback?code=abc&state=s1", timeout=5) as page:
            statuses.append(page.status)

    with trio.fail_after(10):
        async with open_loopback_redirect(open_browser=browser) as redirect:
            base = redirect.redirect_uri.removesuffix("/callback")
            assert base.startswith("http://127.0.0.1:")
            callback = await redirect("http://as.test/authorize?x=1")
            assert callback == redirect.redirect_uri + "?code=abc&state=s1"
            assert opened == ["http://as.test/authorize?x=1"]
            assert statuses == [404, 200]
            with pytest.raises(OSError):  # nothing listens between authorizations
                urllib.request.urlopen(redirect.redirect_uri, timeout=2)


@pytest.mark.slow
async def test_the_loopback_redirect_gives_up_after_its_timeout() -> None:
    with trio.fail_after(10):
        async with open_loopback_redirect(timeout=0.2, open_browser=lambda url: None) as redirect:
            with pytest.raises(CallbackError, match="no authorization callback"):
                await redirect("http://as.test/authorize")


def test_the_auth_module_loads_jose_only_for_dpop_and_private_keys() -> None:
    import subprocess
    import sys

    code = (
        "import sys, trio_mcp.auth; assert 'joserfc' not in sys.modules, 'eager'; "
        "from trio_mcp.auth import OAuth, AuthorizationCode, fetch_redirect; "
        "OAuth(AuthorizationCode(fetch_redirect(), 'http://127.0.0.1:1/cb')); "
        "assert 'joserfc' not in sys.modules, 'on construction'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_secrets_stay_out_of_reprs() -> None:
    from trio_mcp.auth import ClientInfo, Tokens

    info = ClientInfo("id", client_secret="hunter2", private_key="-----BEGIN KEY-----")
    tokens = Tokens("access-secret", refresh_token="refresh-secret")
    assert "hunter2" not in repr(info) and "BEGIN" not in repr(info)
    assert "secret" not in repr(tokens)
