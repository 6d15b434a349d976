"""The leaks scan: bursts of ``leak_requests`` requests at once, a third of them cancelled,
against a server whose memory and open streams are sampled before and after.

Theory of operation
-------------------

A warm-up burst first (so that caches and pools the server fills once do not count),
then the server's resident memory (RSS, of the process and its descendants) and open file
descriptors are read from ``/proc``; then :data:`BURSTS` more bursts, and they are read
again. Growth past ``leak_memory_bound`` bytes, or past :data:`STREAM_BOUND` open
descriptors, is a ``leaks-memory-bounded`` finding. Every request of every burst that was
not cancelled must be answered (``leaks-requests-answered``): a burst is waited for as
long as answers keep coming, and what is unanswered once none came for the deadline is
lost. A server that loses requests, or stops answering once enough were cancelled, fails
it; one that works through a burst one request at a time does not.

The server is a fresh process for a stdio target (started and shut down by the scan,
within its ``async with``); for an HTTP one it is found by the port it listens on, when it
runs on this machine as this user (otherwise only the answers are checked).

A cancelled request is cancelled as its transport says: ``notifications/cancelled`` right
after it on stdio and in a legacy HTTP session, its stream dropped at once in 2026-07-28
HTTP. Blocks for each burst until its answers came or none came for the deadline.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import attrs
import orjson
import trio

from .. import _jsonrpc as rpc
from .._transports._process import open_process_stream
from ._messages import Speaker
from ._probe import Catalogue, EraCatalogue
from ._scan_finding import ScanFinding, Transcript
from ._scan_tools import minimal_arguments
from ._settings import FuzzSettings
from ._target import HttpTarget, StdioTarget, Target
from ._wire import CANCEL_AFTER, Wire, scan_client

__all__ = ["BURSTS", "STREAM_BOUND", "Usage", "process_of_port", "scan_leaks", "usage"]

#: Bursts after the warm-up one.
BURSTS: Final = 3
#: Open file descriptors a server may gain over the bursts before it is a finding.
STREAM_BOUND: Final = 32
#: A request every server answers at once, by era.
_QUICK: Final = {"legacy": "ping", "modern": "tools/list"}
#: Seconds the server is given to close what a burst's client closed before sampling.
SETTLE: Final = 1.0
#: Every third request of a burst is cancelled (the first of each three).
_CANCEL_EVERY = 3


@attrs.frozen
class Usage:
    """What a process (and its descendants) holds: resident bytes and open descriptors."""

    rss: int
    fds: int


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [pid], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def usage(pid: int) -> Usage | None:
    """The memory and descriptors of ``pid`` and its descendants, or ``None`` when
    ``/proc`` does not tell (another OS, another user's process, gone)."""
    rss = fds = 0
    try:
        for each in _descendants(pid):
            status = Path(f"/proc/{each}/status").read_text()
            match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
            rss += int(match.group(1)) * 1024 if match else 0
            fds += len(os.listdir(f"/proc/{each}/fd"))
    except (OSError, ValueError):
        return None
    return Usage(rss=rss, fds=fds)


def process_of_port(port: int) -> int | None:
    """The process listening on TCP ``port`` on this machine, if ``/proc`` shows it."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if (
                len(fields) > 9
                and fields[3] == "0A"
                and int(fields[1].rsplit(":", 1)[1], 16) == port
            ):
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(entry.name)
        except OSError:
            continue
    return None


def _request(speaker: Speaker, catalogue: EraCatalogue, id: str, index: int) -> dict[str, Any]:
    """Request ``index`` of a burst: a call of each tool in turn (slow ones too, so that
    cancellations reach work in progress), with arguments that fit its schema."""
    tools = catalogue.tools
    if not tools:
        return speaker.request(id, _QUICK[speaker.era])
    tool = tools[index % len(tools)]
    arguments = minimal_arguments(tool.get("inputSchema"), id)
    return speaker.request(id, "tools/call", {"name": tool["name"], "arguments": arguments})


class _Bursts:
    """Bursts of requests over one transport; ``lost`` counts the unanswered ones."""

    def __init__(self, catalogue: EraCatalogue, size: int, deadline: float) -> None:
        self.catalogue = catalogue
        self.size = size
        self.deadline = deadline
        self.lost: list[str] = []
        #: Cancelled requests answered after their cancellation was read (stdio only).
        self.late: list[str] = []
        self.sent = 0
        #: Whether open descriptors are judged: not over HTTP, where a server may keep
        #: connections the client closed until its keep-alive timeout (hypercorn: 5 s).
        self.judge_fds = True

    def _ids(self, burst: int) -> list[tuple[str, bool]]:
        return [
            (f"lk-{burst}-{i}", i % _CANCEL_EVERY == _CANCEL_EVERY - 1) for i in range(self.size)
        ]


class _StdioBursts(_Bursts):
    def __init__(
        self, stream: Any, speaker: Speaker, catalogue: EraCatalogue, size: int, deadline: float
    ) -> None:
        super().__init__(catalogue, size, deadline)
        self.stream = stream
        self.speaker = speaker
        self.answered: set[object] = set()
        #: The answered ids, in the order their answers came (bounded: one run's ids).
        self.order: list[object] = []
        #: Whether the server's stream ended (it exited, or wrote a line too long).
        self.gone = False
        self.changed = trio.Event()

    async def read(self) -> None:
        """Collect answer ids until the stream ends (run in the scan's nursery)."""
        while True:
            try:
                message = await self.stream.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError, trio.BrokenResourceError):
                self.gone = True  # (MessageTooLarge too: the stream reads no further)
                self.changed.set()
                return
            if isinstance(message, rpc.JsonRpcRequest):
                # A client that declared nothing: a ping is answered, anything else is
                # refused (the examples judge what it asked; here it must not hang on us).
                if message.method == "ping":
                    reply: dict[str, Any] = {"result": {}}
                else:
                    reply = {"error": {"code": -32601, "message": "Method not found"}}
                await self._send({"jsonrpc": "2.0", "id": message.id, **reply})
            if isinstance(message, rpc.ResultResponse | rpc.ErrorResponse):
                self.answered.add(message.id)
                self.order.append(message.id)
                self.changed.set()
                self.changed = trio.Event()

    async def _send(self, message: dict[str, Any]) -> None:
        """Write ``message``; a server that is gone reads nothing more (what it owes is
        then lost, and said so), it does not end the scan."""
        if self.gone:
            return
        try:
            await self.stream.send_raw(orjson.dumps(message) + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.gone = True

    async def _wait(self, ids: set[object]) -> None:
        """Until every one of ``ids`` is answered, or no answer at all came for a
        deadline: a server that works through a burst one request at a time is slow, not
        lost, while answers keep coming."""
        while not ids <= self.answered and not self.gone:
            with trio.move_on_after(self.deadline) as idle:
                await self.changed.wait()
            if idle.cancelled_caught:
                return

    async def start(self) -> bool:
        legacy = self.speaker.era == "legacy"
        if legacy:
            await self._send(self.speaker.initialize("lk-init", self.speaker.version))
            await self._wait({"lk-init"})
            if "lk-init" not in self.answered:
                return False
            done = self.speaker.notification("notifications/initialized")
            await self._send(done)
        # One request answered first: the server is up and reading before a burst.
        await self._send(self.speaker.request("lk-ready", _QUICK[self.speaker.era]))
        await self._wait({"lk-ready"})
        return "lk-ready" in self.answered

    async def burst(self, number: int) -> None:
        owed: set[object] = set()
        cancelled: list[str] = []
        for index, (id, cancel) in enumerate(self._ids(number)):
            await self._send(_request(self.speaker, self.catalogue, id, index))
            if cancel:
                cancelled.append(id)
            else:
                owed.add(id)
        # The cancellations follow once the server is busy with the burst: they reach
        # handlers that run, not requests not read yet.
        await trio.sleep(CANCEL_AFTER)
        for id in cancelled:
            params = {"requestId": id, "reason": "leaks scan"}
            await self._send(self.speaker.notification("notifications/cancelled", params))
        # A quick request after the cancellations: once it is answered, the server has
        # read them (stdio is one ordered stream), so a cancelled request answered later
        # was answered after its cancellation was read.
        after = f"lk-{number}-after"
        await self._send(self.speaker.request(after, _QUICK[self.speaker.era]))
        self.sent += self.size
        await self._wait({*owed, after})
        self.lost += sorted(str(i) for i in owed - self.answered)
        if after in self.answered:
            late = self.order[self.order.index(after) + 1 :]
            self.late += [str(i) for i in late if i in set(cancelled)]


class _HttpBursts(_Bursts):
    """Bursts over HTTP, each with a client of its own, closed when it ends: the
    connections it opened are not the server's to account for."""

    def __init__(
        self,
        like: Wire,
        headers: Mapping[str, str],
        catalogue: EraCatalogue,
        size: int,
        deadline: float,
    ) -> None:
        super().__init__(catalogue, size, deadline)
        self.like = like
        self.headers = headers
        self.session: str | None = None
        self.judge_fds = False
        #: When the burst last got an answer.
        self._progress = 0.0

    @asynccontextmanager
    async def _wire(self) -> AsyncIterator[Wire]:
        like = self.like
        # No timeout of httpx's own: the burst's watchdog bounds every wait.
        async with scan_client(None) as client:
            yield Wire(client, like.url, like.era, like.version, window=like.window)

    async def start(self) -> bool:
        if self.like.era == "legacy":
            async with self._wire() as wire:
                self.session = await wire.initialize(self.headers)
            return self.session is not None
        return True

    async def burst(self, number: int) -> None:
        """The burst's requests at once, each waiting for its answer for as long as some
        answer of the burst came within the last deadline (then the rest are lost)."""
        self._progress = trio.current_time()
        waiting: set[str] = set()
        done = trio.Event()
        async with self._wire() as wire, trio.open_nursery() as nursery:
            for index, (id, cancelled) in enumerate(self._ids(number)):
                if not cancelled:
                    waiting.add(id)
                nursery.start_soon(self._one, wire, id, index, cancelled, waiting, done)
            while waiting and not done.is_set():
                with trio.move_on_at(self._progress + self.deadline):
                    await done.wait()
                if not done.is_set() and trio.current_time() >= self._progress + self.deadline:
                    self.lost += sorted(waiting)
                    nursery.cancel_scope.cancel()
                    break
        self.sent += self.size

    async def _one(
        self,
        wire: Wire,
        id: str,
        index: int,
        cancelled: bool,
        waiting: set[str],
        done: trio.Event,
    ) -> None:
        request = _request(wire.speaker, self.catalogue, id, index)
        if not cancelled:
            got = await wire.post(request, self.headers, session=self.session, window=math.inf)
            waiting.discard(id)
            if not waiting:
                done.set()
            if got.answer(id) is None:
                self.lost.append(id)
            else:
                self._progress = trio.current_time()
            return
        await wire.post(request, self.headers, session=self.session, window=CANCEL_AFTER)
        if self.session is not None:
            params = {"requestId": id, "reason": "leaks scan"}
            cancel = wire.speaker.notification("notifications/cancelled", params)
            await wire.post(cancel, self.headers, session=self.session)

    async def close(self) -> None:
        if self.session is not None:
            async with self._wire() as wire:
                await wire.delete(self.headers, session=self.session)


async def scan_leaks(
    target: Target,
    settings: FuzzSettings,
    catalogue: Catalogue,
    *,
    wires: Mapping[str, Wire],
    headers: Mapping[str, str],
) -> tuple[list[ScanFinding], list[str]]:
    """Run the leaks scan against ``target`` in the newest era it speaks; returns the
    findings and notes on what could not be measured."""
    era = "modern" if "modern" in catalogue.eras else "legacy"
    entry = catalogue.eras[era]
    size, deadline = settings.leak_requests, settings.deadline
    if isinstance(target, StdioTarget):
        speaker = Speaker(era, entry.version)
        async with (
            open_process_stream(
                target.command,
                env=dict(target.env) if target.env is not None else None,
                cwd=target.cwd,
                grace=1.0,
                stderr=_ignore,
            ) as stream,
            trio.open_nursery() as nursery,
        ):
            bursts = _StdioBursts(stream, speaker, entry, size, deadline)
            nursery.start_soon(bursts.read)
            result = await _measure(bursts, stream.pid, settings, era)
            nursery.cancel_scope.cancel()
        return result
    assert isinstance(target, HttpTarget)
    wire = wires[era]
    bursts_http = _HttpBursts(wire, headers, entry, size, deadline)
    port = _port(target.url)
    pid = process_of_port(port) if port is not None else None
    findings, notes = await _measure(bursts_http, pid, settings, era)
    await bursts_http.close()
    if pid is None:
        notes.append("leaks: the server's process is not on this machine: memory not sampled")
    return findings, notes


def _port(url: str) -> int | None:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    return parts.port or (443 if parts.scheme == "https" else 80)


async def _measure(
    bursts: _StdioBursts | _HttpBursts, pid: int | None, settings: FuzzSettings, era: str
) -> tuple[list[ScanFinding], list[str]]:
    findings: list[ScanFinding] = []
    log = Transcript()
    if not await bursts.start():
        return findings, ["leaks: the server did not start a session: not scanned"]
    await bursts.burst(0)
    before = await _settled_usage(pid) if pid is not None else None
    for number in range(1, BURSTS + 1):
        await bursts.burst(number)
    after = await _settled_usage(pid) if pid is not None else None
    log.add(
        "client",
        f"{BURSTS + 1} bursts of {bursts.size} requests at once, one in {_CANCEL_EVERY} cancelled",
        lost=len(bursts.lost),
        before=attrs.asdict(before) if before else None,
        after=attrs.asdict(after) if after else None,
    )
    if bursts.lost:
        findings.append(
            log.finding(
                "leaks-requests-answered",
                f"{len(bursts.lost)} requests (of {bursts.sent} sent; none of them cancelled) "
                f"were not answered within {settings.deadline:g} s, first {bursts.lost[0]!r}",
                era,
            )
        )
    if bursts.late:
        name = "cancelled-request-not-answered" + ("" if era == "modern" else "-legacy")
        findings.append(
            log.finding(
                name,
                f"{len(bursts.late)} cancelled requests were answered after a request sent "
                f"after their cancellations (so after the server read them), first "
                f"{bursts.late[0]!r}",
                era,
            )
        )
    if before is not None and after is not None:
        grown = after.rss - before.rss
        if grown > settings.leak_memory_bound:
            findings.append(
                log.finding(
                    "leaks-memory-bounded",
                    f"the server's memory grew by {grown / 2**20:.1f} MiB over {BURSTS} bursts "
                    f"of {bursts.size} requests (bound {settings.leak_memory_bound / 2**20:g} MiB)",
                    era,
                )
            )
        elif bursts.judge_fds and after.fds - before.fds > STREAM_BOUND:
            findings.append(
                log.finding(
                    "leaks-memory-bounded",
                    f"the server's open descriptors went from {before.fds} to {after.fds} over "
                    f"{BURSTS} bursts (bound +{STREAM_BOUND})",
                    era,
                )
            )
    return findings, []


async def _settled_usage(pid: int) -> Usage | None:
    """:func:`usage` once it stops falling (connections just closed are being closed on
    the server's side too), within :data:`SETTLE` seconds."""
    last = usage(pid)
    with trio.move_on_after(SETTLE):
        while last is not None:
            await trio.sleep(SETTLE / 20)
            now = usage(pid)
            if now is None or (now.fds >= last.fds and now.rss >= last.rss):
                break
            last = now
    return last


def _ignore(line: str) -> None:
    """The server's stderr: not looked at by this scan."""
