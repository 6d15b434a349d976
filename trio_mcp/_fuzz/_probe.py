"""Before fuzzing: which eras the server speaks and what it offers (tools and their
schemas, resources, templates, prompts), so that the state machine can aim at it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from .. import _jsonrpc as rpc
from .._versions import LATEST_LEGACY_VERSION, LATEST_VERSION, LEGACY_VERSIONS
from ._checker import Finding
from ._connection import Connection
from ._messages import Speaker, dumps
from ._steps import Await, Expect, Send, Step

__all__ = ["Catalogue", "EraCatalogue", "probe_era"]

_MAX_PAGES = 5


@attrs.frozen(kw_only=True)
class EraCatalogue:
    """What the server offers in one era.

    Attributes:
        era: ``"modern"`` or ``"legacy"``.
        version: the version spoken (modern) or negotiated (legacy).
        capabilities: the server's capabilities as sent.
        tools, resources, templates, prompts: the listed items (plain JSON).
    """

    era: str
    version: str
    capabilities: dict[str, Any]
    tools: tuple[dict[str, Any], ...] = ()
    resources: tuple[dict[str, Any], ...] = ()
    templates: tuple[dict[str, Any], ...] = ()
    prompts: tuple[dict[str, Any], ...] = ()

    def has(self, *path: str) -> bool:
        node: Any = self.capabilities
        for name in path:
            if not isinstance(node, dict) or node.get(name) in (None, False):
                return False
            node = node[name]
        return True


@attrs.frozen(kw_only=True)
class Catalogue:
    """What the probes found, by era (an era the server does not speak is absent)."""

    eras: dict[str, EraCatalogue]
    #: Why an era is missing, for the report.
    notes: tuple[str, ...] = ()


@attrs.define
class ProbeResult:
    catalogue: EraCatalogue | None
    why_not: str | None
    findings: list[Finding]
    steps: list[Step]


_LISTS = (
    ("tools/list", "tools", ("tools",)),
    ("resources/list", "resources", ("resources",)),
    ("resources/templates/list", "resourceTemplates", ("resources",)),
    ("prompts/list", "prompts", ("prompts",)),
)


async def probe_era(
    open_connection: Callable[[str], Awaitable[Connection]],
    era: str,
    version: str | None,
    *,
    relist_tools: bool = False,
) -> ProbeResult:
    """Talk to a fresh connection in ``era``: ``server/discover`` (modern) or the
    ``initialize`` handshake (legacy), then every list the capabilities announce (with
    ``relist_tools``, tools/list twice: the ``tools`` checks compare the two).

    Blocks for a few round trips (each bounded by the connection's deadline).
    The connection is closed before returning.
    """
    if era == "modern":
        speaker = Speaker("modern", version or LATEST_VERSION)
    else:
        speaker = Speaker("legacy", version or LATEST_LEGACY_VERSION)
    connection = await open_connection(era)
    findings: list[Finding] = []
    try:
        ids = iter(range(1, 1000))

        async def ask(message: dict[str, Any], expect: Expect | None = None) -> Any:
            await connection.run(Send(data=dumps(message), expect=expect))
            await connection.run(Await((message["id"],)))
            findings.extend(connection.findings())
            return connection.checker.answers.get(message["id"])

        if era == "modern":
            answer = await ask(speaker.request(next(ids), "server/discover"))
            if not isinstance(answer, rpc.ResultResponse):
                return ProbeResult(
                    None, _why("server/discover", answer), findings, connection.steps
                )
            result = answer.result
            supported = result.get("supportedVersions")
            if not isinstance(supported, list) or speaker.version not in supported:
                return ProbeResult(
                    None,
                    f"server/discover lists {supported!r}, not {speaker.version}",
                    findings,
                    connection.steps,
                )
            capabilities = result.get("capabilities") or {}
            negotiated = speaker.version
        else:
            answer = await ask(speaker.initialize(next(ids), speaker.version))
            if not isinstance(answer, rpc.ResultResponse):
                return ProbeResult(None, _why("initialize", answer), findings, connection.steps)
            chosen = answer.result.get("protocolVersion")
            if not isinstance(chosen, str) or chosen not in LEGACY_VERSIONS:
                return ProbeResult(
                    None,
                    f"initialize chose protocol version {chosen!r}, which we do not speak",
                    findings,
                    connection.steps,
                )
            negotiated = chosen
            capabilities = answer.result.get("capabilities") or {}
            speaker.version = negotiated
            await connection.run(
                Send(data=dumps(speaker.notification("notifications/initialized")))
            )
        if not isinstance(capabilities, dict):
            capabilities = {}
        found: dict[str, list[dict[str, Any]]] = {}
        lists = _LISTS + (_LISTS[:1] if relist_tools else ())
        for method, field, capability in lists:
            items: list[dict[str, Any]] = []
            if field in found:
                items = found[field]  # listed again only to be compared: keep the first
            if all(capability_path in capabilities for capability_path in capability):
                cursor: str | None = None
                for _ in range(_MAX_PAGES):
                    params = {"cursor": cursor} if cursor is not None else None
                    answer = await ask(speaker.request(next(ids), method, params))
                    if not isinstance(answer, rpc.ResultResponse):
                        break
                    page = answer.result.get(field)
                    if isinstance(page, list) and field not in found:
                        items.extend(item for item in page if isinstance(item, dict))
                    cursor = answer.result.get("nextCursor")
                    if not isinstance(cursor, str):
                        break
            found[field] = items
        catalogue = EraCatalogue(
            era=era,
            version=negotiated,
            capabilities=capabilities,
            tools=tuple(t for t in found["tools"] if isinstance(t.get("name"), str)),
            resources=tuple(r for r in found["resources"] if isinstance(r.get("uri"), str)),
            templates=tuple(
                t for t in found["resourceTemplates"] if isinstance(t.get("uriTemplate"), str)
            ),
            prompts=tuple(p for p in found["prompts"] if isinstance(p.get("name"), str)),
        )
        return ProbeResult(catalogue, None, findings, connection.steps)
    finally:
        await connection.aclose()
        findings.extend(connection.findings())


def _why(method: str, answer: Any) -> str:
    if isinstance(answer, rpc.ErrorResponse):
        return f"{method} was answered with error {answer.error.code}: {answer.error.message}"
    return f"{method} got no answer"
