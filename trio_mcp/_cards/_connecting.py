"""From a server card to the host config that connects to the server it describes, and
the card checked against what the server says once connected.

The card's Streamable HTTP remote (else its HTTP+SSE one) becomes an
:class:`~trio_mcp.host.HttpServerConfig`: its URL with the ``{variables}`` filled in, and
the headers it needs, from what the caller gives, else the card's preset values and
defaults. What the card requires and nobody supplied is an error that names it, before
anything connects.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .._host._config import HttpServerConfig
from .._host._policy import ServerPolicy
from .._types._base import Implementation
from ._model import CardError, CardInput, Remote, ServerCard

__all__ = ["card_mismatches", "config_from_card"]

_VARIABLE = re.compile(r"\{([^{}]*)\}")


def config_from_card(
    card: ServerCard,
    *,
    variables: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    policy: ServerPolicy | None = None,
) -> HttpServerConfig:
    """The host config of the server ``card`` describes (give it to
    :class:`~trio_mcp.host.Host` or :func:`~trio_mcp.host.open_host` under a name of your
    choosing).

    A card is advisory (SEP-2127): it says where the server is, not what it may do, so the
    host's ``policy`` for it is yours to give, as for any server (by default
    :class:`~trio_mcp.host.ServerPolicy`'s).

    Args:
        variables: values of the remote URL's ``{variables}`` (a variable the card gives a
            ``default`` may be left out).
        headers: values of the remote's headers, by name (``Authorization``, an API key);
            a header the card presets or gives a default may be left out.
        policy: what the host lets this server do.

    Raises:
        CardError: the card has no HTTP remote, or a variable or header it requires has
            no value; the message names it.
    """
    remote = _pick_remote(card)
    given = dict(variables or {})
    url = _fill(remote.url, remote.variables or {}, given, f"variable of {remote.url!r}")
    supplied = {name.lower(): value for name, value in (headers or {}).items()}
    sent: dict[str, str] = {}
    for header in remote.headers or ():
        value = supplied.pop(header.name.lower(), None)
        if value is None and header.value is not None:
            value = _fill(
                header.value, header.variables or {}, given, f"variable of header {header.name!r}"
            )
        if value is None:
            value = header.default
        if value is None:
            if header.is_required:
                about = f" ({header.description})" if header.description else ""
                raise CardError(
                    f"the server needs the header {header.name!r}{about}: "
                    f"pass headers={{{header.name!r}: ...}}"
                )
            continue
        if header.choices and value not in header.choices:
            raise CardError(
                f"header {header.name!r}: expected one of {header.choices}, got {value!r:.60}"
            )
        sent[header.name] = value
    sent.update(
        {name: value for name, value in (headers or {}).items() if name.lower() in supplied}
    )
    return HttpServerConfig(
        url=url, headers=sent or None, policy=policy if policy is not None else ServerPolicy()
    )


def _pick_remote(card: ServerCard) -> Remote:
    remotes = card.remotes or []
    for kind in ("streamable-http", "sse"):
        for remote in remotes:
            if remote.type == kind:
                return remote
    raise CardError(f"the card of {card.name!r} names no HTTP remote to connect to ($.remotes)")


def _fill(
    template: str, defined: Mapping[str, CardInput], given: Mapping[str, str], what: str
) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in given:
            return given[name]
        spec = defined.get(name)
        if spec is not None and spec.value is not None:
            return spec.value
        if spec is not None and spec.default is not None:
            return spec.default
        about = f" ({spec.description})" if spec is not None and spec.description else ""
        raise CardError(
            f"no value for {{{name}}}{about}, a {what}: pass variables={{{name!r}: ...}}"
        )

    return _VARIABLE.sub(value, template)


def card_mismatches(card: ServerCard, server_info: Implementation) -> list[str]:
    """Where ``card`` contradicts what the server said about itself once connected
    (``client.server_info``): its name (the server's is the card's, or the part after its
    ``/``), version, title and description, each compared only when both give it. Empty
    when they agree.

    A card is read before connecting and may be stale or crafted (SEP-2127: clients
    reconcile it with the live connection and prefer the runtime values): a host may log
    these, or refuse to go on.
    """
    found = []
    if server_info.name not in (card.name, card.name.split("/", 1)[-1]):
        found.append(f"name: the card says {card.name!r}, the server {server_info.name!r}")
    for member in ("version", "title", "description"):
        said, told = getattr(card, member), getattr(server_info, member)
        if said is not None and told is not None and said != told:
            found.append(f"{member}: the card says {said!r:.80}, the server {told!r:.80}")
    return found
