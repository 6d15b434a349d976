"""The verified-token cache of ``JwtVerifier`` (issue 24, item 4): a token sent again is not
checked in full again, yet what a client observes never changes: a remembered token is
refused on expiry exactly when it would be without the cache, a key rotation or withdrawal
sends it through the full check, a revocation the verifier learns of (``forget``) too, the
cache keeps at most its bound, and a token that differs in any character is never a hit."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import trio
from auth_support.issuer import ISSUER, RESOURCE, DpopKey, FakeIssuer
from joserfc import jws

from trio_mcp._auth import _jwt
from trio_mcp.auth import (
    DpopRefused,
    DpopVerifier,
    InvalidToken,
    JwtVerifier,
    ProtectedResource,
)


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tokens whose signature was checked, in order (the full check's last step)."""
    seen: list[str] = []
    real = _jwt.check_signature

    def counting(token: str, key: Any, alg: str, header: Any) -> None:
        seen.append(token)
        real(token, key, alg, header)

    monkeypatch.setattr(_jwt, "check_signature", counting)
    return seen


@pytest.fixture
def issuer() -> FakeIssuer:
    return FakeIssuer()


@pytest.fixture
async def http(issuer: FakeIssuer) -> AsyncIterator[httpx.AsyncClient]:
    async with issuer.http_client() as client:
        yield client


def verifier_for(http: httpx.AsyncClient, clock: Clock, **options: Any) -> JwtVerifier:
    return JwtVerifier(ISSUER, http_client=http, clock=clock, **options)


async def test_a_token_sent_again_is_not_checked_in_full_again(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str]
) -> None:
    verifier = verifier_for(http, Clock())
    token = issuer.token()
    first = await verifier.verify(token)
    again = await verifier.verify(token)
    assert again == first and again.subject == "alice"
    assert checks == [token]
    assert len(verifier.verified) == 1


async def test_a_remembered_token_is_refused_on_expiry_exactly_as_without_the_cache(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str]
) -> None:
    clock = Clock()
    verifier = verifier_for(http, clock, leeway=5)
    exp = int(clock.now) + 100
    token = issuer.token(exp=exp)
    await verifier.verify(token)
    clock.now = exp + 5 - 0.001  # the last moment the leeway allows
    assert (await verifier.verify(token)).subject == "alice"
    assert checks == [token]  # answered from the cache
    clock.now = exp + 5
    with pytest.raises(InvalidToken, match="expired"):
        await verifier.verify(token)
    assert len(verifier.verified) == 0


async def test_a_remembered_token_is_refused_before_its_nbf_if_the_clock_goes_back(
    issuer: FakeIssuer,
    http: httpx.AsyncClient,
) -> None:
    clock = Clock()
    verifier = verifier_for(http, clock, leeway=0)
    nbf = int(clock.now)
    token = issuer.token(nbf=nbf, iat=nbf)
    await verifier.verify(token)
    clock.now = nbf - 1  # the system clock was set back
    with pytest.raises(InvalidToken, match="not valid yet"):
        await verifier.verify(token)


async def test_a_token_signed_by_a_withdrawn_key_is_refused_once_the_keys_are_fetched_again(
    issuer: FakeIssuer,
    http: httpx.AsyncClient,
) -> None:
    clock = Clock()
    verifier = verifier_for(http, clock, jwks_max_age=100)
    old_key = issuer.key
    token = issuer.token(exp=int(clock.now) + 3600)
    await verifier.verify(token)
    issuer.rotate()
    issuer.keys.remove(old_key)  # withdrawn: compromised, say
    clock.now += 101  # the keys are old enough to be fetched again
    with pytest.raises(InvalidToken, match="no signing key"):
        await verifier.verify(token)


async def test_a_key_set_fetched_again_for_a_new_key_sends_remembered_tokens_to_the_full_check(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str]
) -> None:
    clock = Clock()
    verifier = verifier_for(http, clock, jwks_refresh_interval=30)
    token = issuer.token(exp=int(clock.now) + 3600)
    await verifier.verify(token)
    issuer.rotate()  # a new key, the old one stays published
    clock.now += 31
    newer = issuer.token(exp=int(clock.now) + 3600)
    await verifier.verify(newer)  # names a key not cached: the set is fetched again
    assert verifier.keys.statistics()["fetches"] == 2
    await verifier.verify(token)
    assert checks == [token, newer, token]


async def test_forget_drops_a_revoked_token_or_all(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str]
) -> None:
    verifier = verifier_for(http, Clock())
    one, two = issuer.token(), issuer.token()
    for token in (one, two, one, two):
        await verifier.verify(token)
    assert checks == [one, two]
    verifier.forget(one)
    await verifier.verify(one)
    await verifier.verify(two)
    assert checks == [one, two, one]
    verifier.forget()
    assert len(verifier.verified) == 0
    await verifier.verify(two)
    assert checks == [one, two, one, two]


async def test_the_cache_keeps_at_most_its_bound_forgetting_the_least_recently_used(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str]
) -> None:
    verifier = verifier_for(http, Clock(), verified_tokens=2)
    one, two, three = issuer.token(), issuer.token(), issuer.token()
    for token in (one, two, one, three):  # `one` used again: `two` is the least recent
        await verifier.verify(token)
    assert len(verifier.verified) == 2
    assert checks == [one, two, three]
    await verifier.verify(one)  # kept
    await verifier.verify(two)  # forgotten: checked in full
    assert checks == [one, two, three, two]
    assert len(verifier.verified) == 2


@pytest.mark.parametrize("where", [0, 1, 2])
async def test_a_token_differing_in_any_part_is_never_a_hit(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str], where: int
) -> None:
    verifier = verifier_for(http, Clock())
    token = issuer.token()
    await verifier.verify(token)
    parts = token.split(".")
    # The same prefix, one character changed inside a part (the header, the claims or the
    # signature; not the last one, whose low bits base64 ignores), and the token with
    # something appended.
    middle = len(parts[where]) // 2
    changed = "A" if parts[where][middle] != "A" else "B"
    parts[where] = parts[where][:middle] + changed + parts[where][middle + 1 :]
    for tampered in (".".join(parts), token + "A"):
        with pytest.raises(InvalidToken):
            await verifier.verify(tampered)
    assert len(verifier.verified) == 1


async def test_the_cache_holds_no_token(issuer: FakeIssuer, http: httpx.AsyncClient) -> None:
    verifier = verifier_for(http, Clock())
    token = issuer.token()
    await verifier.verify(token)
    (key,) = verifier.verified._entries
    assert key == verifier.verified.key(token) and len(key) == 32  # its SHA-256 only


async def test_verified_tokens_zero_remembers_none_and_a_negative_bound_is_refused(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str]
) -> None:
    verifier = verifier_for(http, Clock(), verified_tokens=0)
    token = issuer.token()
    await verifier.verify(token)
    await verifier.verify(token)
    assert checks == [token, token]
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="verified_tokens"):
            JwtVerifier(ISSUER, verified_tokens=bad)  # type: ignore[arg-type]


async def test_a_remembered_token_still_honours_cancellation(
    issuer: FakeIssuer, http: httpx.AsyncClient
) -> None:
    verifier = verifier_for(http, Clock())
    token = issuer.token()
    await verifier.verify(token)
    with trio.CancelScope() as scope:
        scope.cancel()
        await verifier.verify(token)
    assert scope.cancelled_caught


async def test_a_dpop_bound_token_remembered_still_needs_a_fresh_proof_of_its_key(
    issuer: FakeIssuer, http: httpx.AsyncClient, checks: list[str]
) -> None:
    key = DpopKey()
    resource = ProtectedResource(
        RESOURCE,
        verifier=verifier_for(http, Clock()),
        authorization_servers=[ISSUER],
        dpop=DpopVerifier(),
    )
    token = issuer.token(cnf={"jkt": key.jkt})

    async def authenticate(proof: str) -> None:
        headers = [(b"authorization", f"DPoP {token}".encode()), (b"dpop", proof.encode())]
        await resource.authenticate(method="POST", url=RESOURCE, headers=headers)

    proof = key.proof("POST", RESOURCE, token)
    await authenticate(proof)
    await authenticate(key.proof("POST", RESOURCE, token))  # a fresh proof: accepted
    with pytest.raises(Exception, match="replayed"):
        await authenticate(proof)
    with pytest.raises(Exception, match="another key"):
        await authenticate(key.proof("POST", RESOURCE, token, key=DpopKey().key))
    # The access token was checked in full once; each proof was checked on its own.
    assert checks.count(token) == 1


def test_proof_keys_are_imported_once_each_and_kept_within_their_bound() -> None:
    verifier = DpopVerifier(proof_keys=1)
    token = "token"
    one, two = DpopKey(), DpopKey()
    for key in (one, two, one, one):
        proof = key.proof("POST", RESOURCE, token)
        verifier.check(proof, method="POST", url=RESOURCE, access_token=token, jkt=key.jkt)
    assert len(verifier._keys) == 1
    # A jwk naming another algorithm is another key, and refused as unfit, cached or not.
    header_jwk = one.key.as_dict(private=False) | {"alg": "ES384"}
    claims = {"jti": "x", "htm": "POST", "htu": RESOURCE, "iat": int(time.time())}
    proof = jws.serialize_compact(
        {"typ": "dpop+jwt", "alg": "ES256", "jwk": header_jwk}, json.dumps(claims), one.key
    )
    with pytest.raises(DpopRefused, match="does not fit"):
        verifier.check(proof, method="POST", url=RESOURCE, access_token=token, jkt=one.jkt)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="proof_keys"):
            DpopVerifier(proof_keys=bad)  # type: ignore[arg-type]
