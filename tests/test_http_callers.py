"""Who a caller is when no principal names one: the peer's network, not its exact address.

An IPv6 host usually holds a whole ``/64`` (privacy addresses, SLAAC), so per-caller caps
keyed on the exact address would give one machine as many allowances as it has
addresses: IPv6 peers are grouped by ``/64`` by default, IPv4 peers by address, both
configurable (``peer_prefixes=PeerPrefixes(...)``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from http_support import ACCEPT

from trio_mcp import Server
from trio_mcp._http.server._callers import caller_of, peer_network
from trio_mcp.http import McpAsgiApp, PeerPrefixes, asgi_app, open_asgi_app


@pytest.mark.parametrize(
    ("address", "prefixes", "network"),
    [
        ("192.0.2.7", PeerPrefixes(), "192.0.2.7"),
        ("192.0.2.7", PeerPrefixes(ipv4=24), "192.0.2.0/24"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", PeerPrefixes(), "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", PeerPrefixes(), "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", PeerPrefixes(), "2001:db8:1:3::/64"),
        ("2001:db8:1:2::1", PeerPrefixes(ipv6=48), "2001:db8:1::/48"),
        ("2001:db8:1:2::1", PeerPrefixes(ipv6=128), "2001:db8:1:2::1"),
        ("::ffff:192.0.2.7", PeerPrefixes(), "192.0.2.7"),  # IPv4 mapped into IPv6
        ("fe80::1:2%eth0", PeerPrefixes(), "fe80::/64"),  # the zone is no part of it
        ("/run/mcp.sock", PeerPrefixes(), "/run/mcp.sock"),  # not an IP address
    ],
)
def test_a_peer_is_named_by_its_network(address: str, prefixes: PeerPrefixes, network: str) -> None:
    assert peer_network(address, prefixes) == network


def test_two_addresses_of_one_ipv6_64_are_one_caller_and_the_next_64_another() -> None:
    def scope(address: str) -> dict[str, Any]:
        return {"client": (address, 50000)}

    one = caller_of(scope("2001:db8::1"), None)
    assert caller_of(scope("2001:db8::ffff:1234:5678:9abc"), None) == one
    assert caller_of(scope("2001:db8:0:1::1"), None) != one
    assert caller_of(scope("192.0.2.1"), None) != caller_of(scope("192.0.2.2"), None)
    assert caller_of({}, None) == "peer:unknown"
    assert caller_of(scope("2001:db8::1"), lambda scope: "alice") == "principal:alice"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ipv4": 33}, "ipv4 must be an int from 0 to 32, not 33"),
        ({"ipv6": -1}, "ipv6 must be an int from 0 to 128, not -1"),
        ({"ipv6": True}, "ipv6 must be an int from 0 to 128, not True"),
        ({"ipv4": "24"}, "ipv4 must be an int from 0 to 32, not '24'"),
    ],
)
def test_a_prefix_length_out_of_range_is_refused_with_its_name(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        PeerPrefixes(**options)


def test_peer_prefixes_must_be_a_peer_prefixes() -> None:
    with pytest.raises(TypeError, match="peer_prefixes must be a PeerPrefixes, not tuple"):
        asgi_app(Server("x"), peer_prefixes=(24, 48))  # type: ignore[arg-type]
    assert asgi_app(Server("x")).peer_prefixes == PeerPrefixes(ipv4=32, ipv6=64)


@asynccontextmanager
async def peer(app: McpAsgiApp, address: str) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


async def initialize(client: httpx.AsyncClient) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    return await client.post("/mcp", json=body, headers={"accept": ACCEPT})


async def test_the_app_counts_the_addresses_of_one_ipv6_64_as_one_caller(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with (
        open_asgi_app(Server("x"), max_sessions_per_principal=1) as app,
        peer(app, "2001:db8:5:6::1") as first,
        peer(app, "2001:db8:5:6:1234::99") as same_64,
        peer(app, "2001:db8:5:7::1") as next_64,
    ):
        assert (await initialize(first)).status_code == 200
        refused = await initialize(same_64)
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"] == "5"
        assert (await initialize(next_64)).status_code == 200


async def test_the_apps_prefixes_are_configurable(autojump_clock: trio.abc.Clock) -> None:
    async with (
        open_asgi_app(
            Server("x"), max_sessions_per_principal=1, peer_prefixes=PeerPrefixes(ipv4=24, ipv6=128)
        ) as app,
        peer(app, "198.51.100.1") as first,
        peer(app, "198.51.100.200") as same_24,
        peer(app, "2001:db8::1") as v6,
        peer(app, "2001:db8::2") as v6_other,
    ):
        assert (await initialize(first)).status_code == 200
        assert (await initialize(same_24)).status_code == 429
        assert (await initialize(v6)).status_code == 200
        assert (await initialize(v6_other)).status_code == 200  # each address, now
