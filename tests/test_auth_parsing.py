"""Malformed input from servers never crashes or hangs the OAuth client: any
``WWW-Authenticate`` header parses (to something), any metadata document is either
used or refused with a DiscoveryError, and a whole flow against garbage ends in an
AuthorizationError, never another exception."""

from __future__ import annotations

from typing import Any

import httpx
import trio
from auth_world import MCP, World, callback_handler
from hypothesis import HealthCheck, given, settings, strategies as st

from trio_mcp._auth._client._metadata import parse_resource_metadata, parse_server_metadata
from trio_mcp.auth import (
    AuthorizationCode,
    AuthorizationError,
    DiscoveryError,
    OAuth,
    parse_challenges,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
urlish = st.sampled_from(
    ["http://as.test", "http://mcp.test/mcp", "https://x", "ftp://y", "", "http://as.test/#f"]
)
metadata_like = st.fixed_dictionaries(
    {},
    optional={
        "issuer": urlish | json_values,
        "resource": urlish | json_values,
        "authorization_servers": st.lists(urlish, max_size=3) | json_values,
        "authorization_endpoint": urlish | json_values,
        "token_endpoint": urlish | json_values,
        "registration_endpoint": urlish | json_values,
        "code_challenge_methods_supported": st.lists(st.sampled_from(["S256", "plain"]))
        | json_values,
        "scopes_supported": st.lists(st.text(max_size=8), max_size=3) | json_values,
        "authorization_response_iss_parameter_supported": json_values,
    },
)
header_text = st.text(
    alphabet=st.sampled_from(list("Bearer DPoP basic =\",\\'\t scope resource_metadata error x")),
    max_size=200,
) | st.text(max_size=200)


@given(header_text)
def test_any_www_authenticate_header_parses(header: str) -> None:
    challenges = parse_challenges(header)
    assert all(c.scheme for c in challenges)


def test_challenge_parameters_are_read() -> None:
    [dpop, bearer] = parse_challenges(
        'DPoP algs="ES256", Bearer error="insufficient_scope", scope="a b", '
        'resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"'
    )
    assert dpop.scheme == "DPoP" and dpop.param("algs") == "ES256"
    assert bearer.param("scope") == "a b" and bearer.param("ERROR") == "insufficient_scope"
    assert bearer.param("resource_metadata").endswith("/mcp")  # type: ignore[union-attr]
    [basic] = parse_challenges('Basic realm="a \\"quoted\\" realm"')
    assert basic.param("realm") == 'a "quoted" realm'
    [t68] = parse_challenges("Negotiate abc+/=")
    assert t68.token68 == "abc+/="


@given(json_values | metadata_like)
def test_any_metadata_document_is_used_or_refused_clearly(document: Any) -> None:
    for parse, kwargs in (
        (parse_resource_metadata, {"server_url": MCP}),
        (parse_server_metadata, {"issuer": "http://as.test"}),
    ):
        try:
            parse(document, **kwargs)
        except DiscoveryError:
            pass


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
async def test_a_flow_against_malformed_metadata_ends_in_an_authorization_error(
    data: st.DataObject,
) -> None:
    world = World()
    if data.draw(st.booleans()):
        world.prm_document = data.draw(metadata_like | json_values.filter(bool))
    if data.draw(st.booleans()):
        world.as_document = data.draw(metadata_like | json_values.filter(bool))
    printable = st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"\\')
    world.challenge_scope = data.draw(st.none() | st.text(printable, max_size=30))
    grant = AuthorizationCode(callback_handler(world), "http://127.0.0.1:9/callback")
    auth = OAuth(grant, http_client=httpx.AsyncClient(transport=world.transport()))
    with trio.fail_after(5):
        async with httpx.AsyncClient(transport=world.transport(), auth=auth) as http:
            try:
                response = await http.post(MCP, content=b"{}")
            except AuthorizationError:
                return
    assert response.status_code in (200, 401, 403)
