"""Tool names across servers, as a host sees them: the ``tools`` class's check of a host's
several servers (``trio-mcp fuzz --config FILE --across-servers``).

A host puts every server's tools in one list for the model, named
``{server}{separator}{tool}`` (:class:`trio_mcp.host.Host`: ``weather__forecast``).
Names that collide there, or that a reader or a host rewriting names cannot tell apart,
let one server's tool shadow another's (the "tool shadowing" of the MCP security best
practices). :func:`namespace_collisions` judges the names alone (pure, no IO);
:func:`list_tool_names` lists each server's tools with the fuzzer's own probe.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import trio

from .._tool_text import look_alike
from .._util import open_nursery_unwrapped
from ._connection import Timing
from ._opener import Opener
from ._probe import probe_era
from ._target import Target
from ._tool_checks import NAMESPACE_SEPARATOR
from ._validate import Validator

__all__ = ["API_NAME_LENGTH", "list_tool_names", "namespace_collisions"]

#: The longest tool name LLM APIs take (a host that passes longer namespaced names on cuts
#: them there, or leaves the tool out, as :class:`~trio_mcp.host.Host` does).
API_NAME_LENGTH: Final = 64


def namespace_collisions(
    listings: Mapping[str, Sequence[str]], *, separator: str = NAMESPACE_SEPARATOR
) -> list[str]:
    """What is wrong with the tool names of several servers (server name → its tools'
    names) once a host lists them together: for each problem, a sentence.

    - two tools of different servers with the same namespaced name (``a`` + ``b__c`` and
      ``a__b`` + ``c``);
    - namespaced names that differ only by case, Unicode look-alikes or punctuation;
    - namespaced names past :data:`API_NAME_LENGTH` that agree up to it (a host that cuts
      them there makes one of the other);
    - one tool name, or look-alike ones, on two servers: distinct only for a host that
      namespaces (one that does not, or a model told the bare names, calls one for the
      other).
    """
    problems: list[str] = []
    owners: dict[str, tuple[str, str]] = {}
    alike: dict[str, tuple[str, str]] = {}
    cut: dict[str, tuple[str, str]] = {}
    bare: dict[str, tuple[str, str]] = {}
    for server, names in listings.items():
        for tool in dict.fromkeys(names):  # (one server listing a name twice: not ours)
            full = f"{server}{separator}{tool}"
            first = owners.setdefault(full, (server, tool))
            if first[0] != server:
                problems.append(
                    f"{_who(*first)} and {_who(server, tool)} are both named {full!r} once "
                    f"namespaced ({{server}}{separator}{{tool}}): a host cannot route both"
                )
                continue
            looks = alike.setdefault(look_alike(full), (server, tool))
            if looks[0] != server:
                problems.append(
                    f"{_who(*looks)} and {_who(server, tool)} differ only by case, Unicode "
                    f"look-alikes or punctuation once namespaced ({looks[0]}{separator}"
                    f"{looks[1]} vs {full})"
                )
            if len(full) > API_NAME_LENGTH:
                head = cut.setdefault(full[:API_NAME_LENGTH], (server, tool))
                if head[0] != server:
                    problems.append(
                        f"{_who(*head)} and {_who(server, tool)} agree in the first "
                        f"{API_NAME_LENGTH} characters of their namespaced names, which is "
                        "all an LLM API takes: a host that cuts names there confuses them"
                    )
            plain = bare.setdefault(look_alike(tool), (server, tool))
            if plain[0] != server:
                how = "the same name" if plain[1] == tool else "look-alike names"
                problems.append(
                    f"{_who(*plain)} and {_who(server, tool)} have {how}: distinct only "
                    "for a host that namespaces (one that does not, or a model shown bare "
                    "names, calls one for the other)"
                )
    return problems


def _who(server: str, tool: str) -> str:
    return f"server {server!r}'s tool {tool!r}"


async def list_tool_names(
    targets: Mapping[str, Target], *, timing: Timing, validator: Validator
) -> tuple[dict[str, list[str]], list[str]]:
    """Each target's tool names (its modern listing, else its legacy one), and notes on
    the servers that could not be listed (left out of the check).

    Blocks for one probe per server, one after another (each exchange bounded by the
    deadline; a stdio server is started and shut down); cancelling it cancels the probe
    in flight and ends its process.
    """
    listings: dict[str, list[str]] = {}
    notes: list[str] = []
    for name, target in targets.items():
        async with open_nursery_unwrapped() as nursery:
            opener = Opener(target, nursery, validator, timing, 1 << 20)
            why = "it speaks neither era"
            for era in ("modern", "legacy"):
                try:
                    probed = await probe_era(opener.open, era, None)
                except (OSError, trio.TooSlowError) as exc:
                    why = f"{type(exc).__name__}: {exc}"
                    break
                if probed.catalogue is not None:
                    listings[name] = [str(tool.get("name")) for tool in probed.catalogue.tools]
                    break
                why = probed.why_not or why
            nursery.cancel_scope.cancel()
        if name not in listings:
            notes.append(f"tools across servers: {name!r} was not listed ({why})")
    return listings, notes
