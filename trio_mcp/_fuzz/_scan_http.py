"""The ``http`` class's fixed probes: what a Streamable HTTP server does with a body past
any sensible limit, a body sent slowly (does it hold up other requests?), JSON nested
past any parser's depth, an oversized header, and, on a
server that asks for credentials (401), the shape of its challenge and of its protected
resource metadata (RFC 9728).

Unlike the state machine's rules these are the same few requests every run, sent once,
each on its own POST with the headers the spec asks for (computed here, as
:mod:`._http` does): what they show is judged here, not by the
:class:`~._checker.Checker` (the report's detail says what was sent). Only the
target's own origin is contacted: a ``resource_metadata`` URL on another origin is
reported, not fetched.

Blocks for a few round trips, each bounded by ``deadline`` (the body-limit probe by the
time to send ``max_body`` bytes too). Memory: the body-limit probe holds ``max_body``
bytes while it is sent. On a server on this machine whose process it finds by its port,
the body-limit probe sends growing bodies and samples the server's memory meanwhile.

Each finding names its probe (:data:`PROBES`): a reproduction file records it, and
``trio-mcp replay`` runs that probe again (:mod:`._scan_replay`).
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Any, Final
from urllib.parse import urlsplit

import attrs
import httpx
import orjson
import trio

from .._http._headers import MCP_METHOD, MCP_PROTOCOL_VERSION
from .._versions import LATEST_LEGACY_VERSION, MODERN_VERSIONS
from ._invariants import INVARIANTS, Invariant
from ._leaks import body_sizes, local_port, process_of_port, sampled, usage
from ._messages import Speaker, dumps
from ._settings import DEFAULT_BODY_MEMORY_BOUND
from ._target import HttpTarget

__all__ = ["NESTING_DEPTH", "OVERSIZED_HEADER", "PROBES", "ScanFinding", "scan_http"]

#: How deep the nesting probe nests arrays: past the 512 to 10,000 levels parsers take
#: (orjson 1,024, Python's json about 1,000 before RecursionError), at 200 KB of body.
NESTING_DEPTH: Final = 100_000
#: The size of the oversized-header probe's one header: past the 8 to 16 KiB that HTTP
#: servers take in all.
OVERSIZED_HEADER: Final = 64 * 1024
#: The fixed probes, in the order they run (after ``"unauthorized"``, which always runs:
#: without credentials the others cannot).
PROBES: Final = ("unauthorized", "body-limit", "slow-body", "nesting", "oversized-header")
_MAX_READ: Final = 1 << 20
_BEARER: Final = re.compile(r"(?i)^\s*bearer\b(.*)$")
_PARAM: Final = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


@attrs.frozen
class ScanFinding:
    """A probe's finding: the invariant, what happened, the era of what was sent, and the
    probe that found it (a key of :data:`PROBES`: what a replay runs again)."""

    invariant: Invariant
    detail: str
    era: str
    probe: str = ""


@attrs.frozen
class _Answer:
    status: int | None
    headers: httpx.Headers
    body: bytes
    seconds: float
    error: str | None = None


class _Prober:
    def __init__(
        self, client: httpx.AsyncClient, target: HttpTarget, era: str, deadline: float
    ) -> None:
        self.client = client
        self.target = target
        self.era = era
        #: Seconds each exchange may take (the run's --deadline).
        self.deadline = deadline
        version = MODERN_VERSIONS[0] if era == "modern" else LATEST_LEGACY_VERSION
        self.speaker = Speaker(era, version)
        self.findings: list[ScanFinding] = []
        #: The probe running (a key of :data:`PROBES`), which its findings name.
        self.probe = ""
        self._ids = iter(range(1, 1 << 30))

    def fail(self, name: str, detail: str) -> None:
        self.findings.append(ScanFinding(INVARIANTS[name], detail, self.era, self.probe))

    def message(self, **meta: Any) -> dict[str, Any]:
        """A request every server of the era answers: ``server/discover`` (modern), or
        ``initialize`` (legacy; the session it opens is ended at once)."""
        id = next(self._ids)
        if self.era == "modern":
            return self.speaker.request(id, "server/discover", **meta)
        message = self.speaker.initialize(id, self.speaker.version)
        if meta:
            message["params"]["_meta"] = meta
        return message

    def headers(self, message: dict[str, Any], *, credentials: bool = True) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        if credentials:
            headers.update({k.lower(): v for k, v in self.target.headers.items()})
        if self.era == "modern":
            headers[MCP_PROTOCOL_VERSION] = self.speaker.version
            headers[MCP_METHOD] = str(message["method"])
        return headers

    async def post(self, body: bytes, headers: dict[str, str], *, slack: float = 0.0) -> _Answer:
        """POST ``body``; the answer's status, headers and (the first MiB of) body, or
        why there was none (none within the deadline, plus ``slack`` seconds to send a
        big body). Ends a legacy session the POST opened."""
        timeout = self.deadline + slack
        started = time.monotonic()
        try:
            with trio.fail_after(timeout):
                async with self.client.stream(
                    "POST", self.target.url, content=body, headers=headers
                ) as response:
                    data = await _read(response)
                    answer = _Answer(
                        response.status_code, response.headers, data, time.monotonic() - started
                    )
        except trio.TooSlowError:
            return _Answer(None, httpx.Headers(), b"", timeout, f"no answer within {timeout:g} s")
        except httpx.HTTPError as exc:
            why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return _Answer(None, httpx.Headers(), b"", time.monotonic() - started, why)
        session = answer.headers.get("mcp-session-id")
        if session:
            with trio.move_on_after(self.deadline):
                try:
                    await self.client.delete(
                        self.target.url, headers={**headers, "mcp-session-id": session}
                    )
                except httpx.HTTPError:
                    pass
        return answer

    async def alive(self) -> bool:
        """Whether the server still answers (below 500) a plain request."""
        message = self.message()
        answer = await self.post(dumps(message), self.headers(message))
        return answer.status is not None and answer.status < 500


async def _read(response: httpx.Response) -> bytes:
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > _MAX_READ:
            break
        chunks.append(chunk)
        if "text/event-stream" in response.headers.get("content-type", ""):
            break  # the stream's first event says enough
    return b"".join(chunks)


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


async def _body_limit(prober: _Prober, max_body: int, memory_bound: int) -> None:
    """POST a body of ``max_body`` bytes: a server that reads and answers it sets no body
    limit. On a server whose process is found on this machine (:func:`process_of_port`),
    bodies of a quarter, half and all of ``max_body`` go one after the other while its
    memory is sampled: growing past ``memory_bound`` over what it held before is a
    finding too, whatever it answered (a 413 sent only once the whole body is held)."""
    port = local_port(prober.target.url)
    pid = process_of_port(port) if port is not None else None
    before = usage(pid) if pid is not None else None
    sizes = [max_body] if before is None else body_sizes(max_body)
    peaks: list[tuple[int, int]] = []  # (body size, the server's RSS growth while it went)
    body = b""
    answer: _Answer | None = None
    for size in sizes:
        message, body = _padded(prober, size)
        # Time to send it at a slow 10 MB/s, on top of the deadline.
        send = partial(prober.post, body, prober.headers(message), slack=len(body) / 1e7)
        if pid is None or before is None:
            answer = await send()
            continue
        answer, peak = await sampled(pid, send)
        if peak is not None:
            peaks.append((len(body), peak.rss - before.rss))
    assert answer is not None
    if answer.status is not None and 200 <= answer.status < 300:
        prober.fail(
            "http-body-limit",
            f"a {_size(len(body))} request body (server/discover or initialize padded in "
            f"_meta; --max-body) was read and answered with HTTP {answer.status} in "
            f"{answer.seconds:.2f} s: the server sets no body limit up to that size",
        )
    elif answer.status is not None and answer.status >= 500:
        prober.fail(
            "http-no-server-error",
            f"a {_size(len(body))} request body got HTTP {answer.status}, not 413",
        )
    grown = max((growth for _, growth in peaks), default=0)
    if grown > memory_bound:
        seen = ", ".join(f"{_size(size)} body: +{_size(max(0, g))}" for size, g in peaks)
        prober.fail(
            "http-body-memory-bounded",
            f"the server's memory (pid {pid}) grew by {_size(grown)} while it was sent "
            f"growing request bodies ({seen}; bound --body-memory-bound "
            f"{_size(memory_bound)}): it holds a request body in memory whole",
        )


def _padded(prober: _Prober, size: int) -> tuple[dict[str, Any], bytes]:
    """A request every server answers, padded in ``_meta`` to ``size`` bytes."""
    empty = dumps(prober.message(**{"x-trio-mcp-fuzz/padding": ""}))
    padding = "x" * max(0, size - len(empty))
    message = prober.message(**{"x-trio-mcp-fuzz/padding": padding})
    return message, dumps(message)


async def _slow_body(prober: _Prober) -> None:
    """Send half a body, then, while the rest is held back, another request: it must be
    answered within the deadline. The held-back half goes once that is judged."""
    message = prober.message()
    body = dumps(message)
    half_sent = trio.Event()
    release = trio.Event()

    async def trickle() -> AsyncIterator[bytes]:
        yield body[: len(body) // 2]
        half_sent.set()  # (asked for the rest: the first half was written)
        await release.wait()
        yield body[len(body) // 2 :]

    async def slow_post() -> None:
        headers = {**prober.headers(message), "content-length": str(len(body))}
        try:
            async with prober.client.stream(
                "POST", prober.target.url, content=trickle(), headers=headers
            ) as response:
                await _read(response)
        except httpx.HTTPError:
            pass
        finally:
            half_sent.set()

    answer: _Answer | None = None
    with trio.move_on_after(3 * prober.deadline + 1):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_post)
            await half_sent.wait()
            answer = await prober.post(*_plain(prober))
            release.set()
    release.set()
    if answer is not None and answer.status is None:
        prober.fail(
            "http-slow-body-isolated",
            f"while one request's body was half sent, another got no answer: {answer.error}",
        )


def _plain(prober: _Prober) -> tuple[bytes, dict[str, str]]:
    message = prober.message()
    return dumps(message), prober.headers(message)


async def _nesting(prober: _Prober) -> None:
    message = prober.message(**{"x-trio-mcp-fuzz/nested": 0})
    text = dumps(message).decode()
    marker = '"x-trio-mcp-fuzz/nested":0'
    body = text.replace(marker, marker[:-1] + "[" * NESTING_DEPTH + "]" * NESTING_DEPTH).encode()
    answer = await prober.post(body, prober.headers(message))
    what = f"a request whose _meta nests arrays {NESTING_DEPTH:,} deep ({_size(len(body))})"
    if answer.status is None:
        prober.fail("http-nesting-limit", f"{what} got no answer: {answer.error}")
    elif answer.status >= 500:
        prober.fail("http-nesting-limit", f"{what} got HTTP {answer.status}")
    elif answer.status < 400:
        try:
            parsed = orjson.loads(answer.body)
        except orjson.JSONDecodeError:
            parsed = None
        if not (isinstance(parsed, dict) and isinstance(parsed.get("error"), dict)):
            prober.fail(
                "http-nesting-limit",
                f"{what} was answered with HTTP {answer.status} and no JSON-RPC error",
            )
    if not await prober.alive():
        prober.fail("server-alive", f"the server stopped answering after {what}")


async def _oversized_header(prober: _Prober) -> None:
    message = prober.message()
    headers = {**prober.headers(message), "x-trio-mcp-fuzz-padding": "x" * OVERSIZED_HEADER}
    answer = await prober.post(dumps(message), headers)
    what = f"a request with a {_size(OVERSIZED_HEADER)} header"
    if answer.status is not None and answer.status >= 500:
        prober.fail("http-no-server-error", f"{what} got HTTP {answer.status}, not 431 or 400")
    if not await prober.alive():
        prober.fail("server-alive", f"the server stopped answering after {what}")


def _challenge(value: str) -> dict[str, str] | None:
    """The parameters of a ``Bearer`` challenge in ``value``, or ``None`` if none."""
    for part in re.split(r",\s*(?=[A-Za-z][A-Za-z0-9_-]*\s+(?:[A-Za-z_]+\s*=|$))", value):
        found = _BEARER.match(part)
        if found is not None:
            return {m[0].lower(): m[1] or m[2] for m in _PARAM.findall(found.group(1))}
    return None


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


async def _unauthorized(prober: _Prober) -> _Answer:
    """Without credentials: if the server answers 401, judge its challenge and its
    protected resource metadata. Returns the answer."""
    message = prober.message()
    answer = await prober.post(dumps(message), prober.headers(message, credentials=False))
    if answer.status == 401:
        await _judge_challenge(prober, answer)
    return answer


async def _judge_challenge(prober: _Prober, answer: _Answer) -> None:
    name = "http-unauthorized-challenge"
    values = answer.headers.get_list("www-authenticate")
    header = ", ".join(values) if values else None
    if header is None:
        prober.fail(name, "a request without credentials got 401 with no WWW-Authenticate")
        return
    params = _challenge(header)
    if params is None:
        prober.fail(name, f"401 with WWW-Authenticate {header[:200]!r}: no Bearer challenge")
        return
    url = params.get("resource_metadata")
    if not url:
        prober.fail(
            name,
            f"401 with WWW-Authenticate {header[:200]!r}: no resource_metadata parameter "
            "(RFC 9728 §5.1), so a client cannot find the authorization server",
        )
        return
    if _origin(url) != _origin(prober.target.url):
        prober.fail(
            name,
            f"the resource_metadata URL {url[:200]!r} is not on the server's own origin "
            "(not fetched: the fuzzer only contacts its target)",
        )
        return
    try:
        with trio.fail_after(prober.deadline):
            response = await prober.client.get(url, headers={"accept": "application/json"})
    except (httpx.HTTPError, trio.TooSlowError) as exc:
        prober.fail(name, f"the resource_metadata URL {url!r} did not answer: {exc!r}")
        return
    try:
        metadata = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        metadata = None
    servers = metadata.get("authorization_servers") if isinstance(metadata, dict) else None
    if response.status_code != 200 or not (
        isinstance(servers, list) and servers and all(isinstance(s, str) for s in servers)
    ):
        prober.fail(
            name,
            f"the resource_metadata URL {url!r} answered HTTP {response.status_code} without "
            "a JSON object listing authorization_servers (RFC 9728 §2; MCP authorization)",
        )


async def scan_http(
    target: HttpTarget,
    *,
    eras: tuple[str, ...],
    deadline: float,
    max_body: int,
    memory_bound: int = DEFAULT_BODY_MEMORY_BOUND,
    probes: Sequence[str] = PROBES,
) -> tuple[list[ScanFinding], list[str], bool]:
    """Run the ``http`` class's fixed probes (``probes``, of :data:`PROBES`; the
    challenge check, ``"unauthorized"``, always runs first) against ``target`` in the
    first of ``eras`` it speaks (modern when it is unknown). Returns the findings, notes
    for the report, and whether the server was reached at all.

    Raises:
        ValueError: a probe that is not one of :data:`PROBES`.

    Blocks for the probes (see the module docstring); cancelling it abandons them.
    """
    unknown = [name for name in probes if name not in PROBES]
    if unknown:
        raise ValueError(f"unknown http probe {unknown[0]!r}; choose from {', '.join(PROBES)}")
    era = "modern" if "modern" in eras or not eras else eras[0]
    timeout = httpx.Timeout(deadline + 5.0)
    async with httpx.AsyncClient(
        timeout=timeout, follow_redirects=False, trust_env=False
    ) as client:
        prober = _Prober(client, target, era, deadline)
        notes: list[str] = []
        prober.probe = "unauthorized"
        first = await _unauthorized(prober)
        if first.status is None:
            notes.append(f"the http probes could not reach the server: {first.error}")
            return [], notes, False
        if first.status == 401 and not any(k.lower() == "authorization" for k in target.headers):
            notes.append(
                "the server asks for credentials (401): its challenge was checked; give "
                "--header 'Authorization: Bearer ...' to probe the rest"
            )
            return prober.findings, notes, True
        for name in probes:
            prober.probe = name
            if name == "body-limit":
                await _body_limit(prober, max_body, memory_bound)
            elif name == "slow-body":
                await _slow_body(prober)
            elif name == "nesting":
                await _nesting(prober)
            elif name == "oversized-header":
                await _oversized_header(prober)
        return prober.findings, notes, True
