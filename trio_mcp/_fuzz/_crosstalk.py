"""The cross-talk scan: many clients at once, with the same request ids, cancellations and
progress tokens, each checking that everything it gets belongs to its own requests.

Theory of operation
-------------------

In each era the server speaks, each of ``clients`` clients (a legacy session each, or
plain 2026-07-28 POSTs) sends :data:`REQUESTS_PER_CLIENT` requests at once, numbered 1,
2, 3 like every other client's. Each request carries a *marker* unique to the client and
request (``xt-4-2``): as its progress token and, when the server has a tool with a
required string argument (an ``echo``), as that argument, where the answer is likely to
repeat it. The last request of each client is cancelled (its stream dropped after
:data:`~._wire.CANCEL_AFTER` seconds, and ``notifications/cancelled`` posted in the
initialize era).

A client must get no answer for an id it did not send on that stream, no answer or
notification carrying another client's marker, and no progress for a token that is not
its own. Messages without markers say nothing either way.

The clients run in a nursery this scan opens and closes; each exchange is bounded by the
wire's window, so the scan blocks for about one window at most.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import trio

from ._probe import Catalogue, EraCatalogue
from ._scan_finding import ScanFinding, Transcript, json_text
from ._scan_tools import minimal_arguments, text_tools
from ._wire import CANCEL_AFTER, Exchange, Wire

__all__ = ["REQUESTS_PER_CLIENT", "scan_crosstalk"]

#: Requests each client has in flight at once (the last one cancelled).
REQUESTS_PER_CLIENT: Final = 3
_MARKER = re.compile(r"xt-(\d+)-(\d+)")


async def scan_crosstalk(
    wires: Mapping[str, Wire],
    headers: Mapping[str, str],
    catalogue: Catalogue,
    *,
    clients: int,
) -> tuple[list[ScanFinding], list[str]]:
    """Run ``clients`` clients at once in each era the server speaks (legacy clients
    each in a session of their own); returns the findings (at most one per invariant and
    era) and notes."""
    findings: list[ScanFinding] = []
    notes: list[str] = []
    for era, wire in sorted(wires.items()):
        scan = _Crosstalk(wire, dict(headers), catalogue.eras[era], era)
        async with trio.open_nursery() as nursery:
            for client in range(clients):
                nursery.start_soon(scan.client, client)
        findings += scan.findings.values()
        if scan.tool is None and not notes:
            notes.append(
                "cross-talk: no tool with a string argument to carry markers: answers "
                "checked by id only"
            )
    return findings, notes


class _Crosstalk:
    def __init__(
        self, wire: Wire, headers: dict[str, str], catalogue: EraCatalogue, era: str
    ) -> None:
        self.wire = wire
        self.headers = headers
        self.era = era
        tools = text_tools(catalogue.tools)
        self.tool: tuple[dict[str, Any], str] | None = None
        for name, argument in tools:
            tool = next(t for t in catalogue.tools if t["name"] == name)
            self.tool = (tool, argument)
            break
        self.findings: dict[str, ScanFinding] = {}

    def _request(self, id: int, marker: str) -> dict[str, Any]:
        if self.tool is not None:
            tool, argument = self.tool
            arguments = minimal_arguments(tool.get("inputSchema"), marker)
            arguments[argument] = marker
            params = {"name": tool["name"], "arguments": arguments}
            return self.wire.request(id, "tools/call", params, progressToken=marker)
        if self.era == "legacy":
            return self.wire.request(id, "ping", None, progressToken=marker)
        return self.wire.request(id, "tools/list", None, progressToken=marker)

    async def client(self, client: int) -> None:
        """One client: its session (legacy), then its requests at once."""
        session = None
        if self.era == "legacy":
            session = await self.wire.initialize(self.headers)
            if session is None:
                return
        results: dict[int, Exchange] = {}

        async def one(id: int) -> None:
            marker = f"xt-{client}-{id}"
            request = self._request(id, marker)
            if id == REQUESTS_PER_CLIENT:
                # Cancelled: the stream is dropped at once (and said so in the legacy era).
                await self.wire.post(request, self.headers, session=session, window=CANCEL_AFTER)
                if session is not None:
                    cancel = self.wire.speaker.notification(
                        "notifications/cancelled", {"requestId": id, "reason": "cross-talk scan"}
                    )
                    await self.wire.post(cancel, self.headers, session=session)
                return
            results[id] = await self.wire.post(request, self.headers, session=session)

        async with trio.open_nursery() as nursery:
            for id in range(1, REQUESTS_PER_CLIENT + 1):
                nursery.start_soon(one, id)
        for id, exchange in results.items():
            self._judge(client, id, exchange)
        if session is not None:
            await self.wire.delete(self.headers, session=session)

    def _judge(self, client: int, id: int, exchange: Exchange) -> None:
        own = f"xt-{client}-{id}"
        for message in exchange.messages:
            is_response = "method" not in message
            if is_response and message.get("id") != id:
                self._found(
                    "crosstalk-answer-own-request",
                    f"client {client}'s request {id} got an answer for id "
                    f"{message.get('id')!r} on its stream",
                    client,
                    message,
                )
                continue
            foreign = _foreign_markers(message, own)
            if foreign:
                invariant = (
                    "crosstalk-answer-own-request"
                    if is_response
                    else "crosstalk-progress-own-request"
                )
                what = "its answer" if is_response else f"a {message.get('method')} notification"
                self._found(
                    invariant,
                    f"client {client}'s request {id} (marker {own}) got {what} carrying "
                    f"another request's marker {foreign[0]}",
                    client,
                    message,
                )
            elif message.get("method") == "notifications/progress":
                params = message.get("params")
                token = params.get("progressToken") if isinstance(params, dict) else None
                if token != own:
                    self._found(
                        "crosstalk-progress-own-request",
                        f"client {client}'s request {id} got progress for token {token!r}, "
                        f"not its own {own!r}",
                        client,
                        message,
                    )

    def _found(self, invariant: str, detail: str, client: int, message: dict[str, Any]) -> None:
        if invariant in self.findings:
            return
        log = Transcript()
        log.add(f"client {client}", f"{REQUESTS_PER_CLIENT} requests at once", received=message)
        self.findings[invariant] = log.finding(invariant, detail, self.era)


def _foreign_markers(message: dict[str, Any], own: str) -> list[str]:
    """The markers of other requests that ``message`` carries."""
    text = json_text(message)
    return [m.group(0) for m in _MARKER.finditer(text) if m.group(0) != own]
