"""Streamable HTTP benchmark: trio_mcp's echo server against a bare Hypercorn app (the
ceiling) and the official SDK's low-level server, measured the same way in the same run.

The load generator is neutral: raw HTTP/1.1 over non-blocking sockets in one selector loop,
no MCP library (the engine follows /work/shared/bench/load_http.py). Every server exposes
one tool, ``echo(text) -> text``.

    python benchmarks/http_bench.py                      # 3 interleaved rounds, everything
    python benchmarks/http_bench.py --rounds 5 --json out.json
    python benchmarks/http_bench.py --only trio_mcp,sdk --skip-sessions

Measured per server and era, each a median over interleaved rounds:

* calls/s with 1 (sequential), 8 and 32 connections, one call in flight on each;
  p50/p99 latency; server CPU microseconds per call (from /proc, the process tree);
* legacy era: memory per idle session (RSS growth over 1,000 open sessions, after the
  engines went dormant), sessions opened per second;
* seconds from SIGTERM to exit, with those sessions open;
* stateless era: two Hypercorn worker processes against one.

The machine may be shared: the report prints the spread (min-max over rounds) next to each
median, and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")
MODERN = "2026-07-28"
LEGACY = "2025-11-25"

#: name -> (command with {port}, eras it is measured in)
SERVERS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "trio_mcp": (
        [PY, str(ROOT / "examples" / "echo_server.py"), "--http", "{port}"],
        ("legacy", "modern"),
    ),
    "sdk": (
        [PY, str(ROOT / "benchmarks" / "servers" / "sdk_http.py"), "{port}"],
        ("legacy", "modern"),
    ),
    "hypercorn": (
        [PY, str(ROOT / "benchmarks" / "servers" / "hypercorn_bare.py"), "{port}"],
        ("legacy", "modern"),
    ),
    "trio_mcp-2w": (
        [PY, str(ROOT / "examples" / "echo_server.py"), "--http", "{port}", "--workers", "2"],
        ("modern",),
    ),
    "hypercorn-2w": (
        [PY, str(ROOT / "benchmarks" / "servers" / "hypercorn_bare.py"), "{port}", "2"],
        ("modern",),
    ),
    # The TypeScript SDK 1.x speaks the initialize era only.
    "ts": (["node", "{ts}", "{port}"], ("legacy",)),
}

#: Where the TypeScript SDK is installed (the interop tests' npm folder, shared).
NPM_CACHE = Path(os.environ.get("TRIO_MCP_NPM_CACHE", Path.home() / ".cache" / "trio-mcp-npm"))
TS_SDK_VERSION = "1.32.2"


def ts_server() -> str:
    """``servers/ts_sdk_http.mjs``, copied beside the TypeScript SDK in :data:`NPM_CACHE`
    (installed there with npm the first time)."""
    installed = NPM_CACHE / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    try:
        version = json.loads(installed.read_text())["version"]
    except (OSError, ValueError, KeyError):
        version = None
    if version != TS_SDK_VERSION:
        NPM_CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(NPM_CACHE),
                "--no-audit",
                "--no-fund",
                f"@modelcontextprotocol/sdk@{TS_SDK_VERSION}",
                "zod@4",
            ],
            check=True,
        )
    target = NPM_CACHE / "ts_sdk_http.mjs"
    target.write_bytes((ROOT / "benchmarks" / "servers" / "ts_sdk_http.mjs").read_bytes())
    return str(target)


def use_front_ends(front_ends: list[str]) -> None:
    """Run trio_mcp's servers on ``front_ends``: one front end replaces serve's default;
    several make one server per front end, named ``trio_mcp:<front end>``."""
    for name in [n for n in SERVERS if n.startswith("trio_mcp")]:
        command, eras = SERVERS.pop(name)
        for front_end in front_ends:
            key = name if len(front_ends) == 1 else f"{name}:{front_end}"
            SERVERS[key] = ([*command, "--front-end", front_end], eras)


# -- /proc --------------------------------------------------------------------------------------


def tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            parent = int(stat[stat.rfind(b")") + 2 :].split()[1])
            children.setdefault(parent, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(children.get(p, ()))
    return out


def cpu_seconds(pid: int) -> float:
    total = 0.0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        total += (int(fields[11]) + int(fields[12])) / CLK_TCK
    return total


def rss_kb(pid: int) -> int:
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


# -- a minimal HTTP/1.1 client engine ------------------------------------------------------------

Request = tuple[list[tuple[str, str]], bytes]
Worker = Generator[Request | None, "Response | None", None]


class Response:
    __slots__ = ("body", "elapsed", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes, elapsed: float) -> None:
        self.status, self.headers, self.body, self.elapsed = status, headers, body, elapsed

    def messages(self) -> list[Any]:
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            return [
                orjson.loads(line[5:])
                for line in self.body.splitlines()
                if line.startswith(b"data:") and line[5:].strip()
            ]
        return [orjson.loads(self.body)] if self.body else []


class Connection:
    """One keep-alive connection, one request at a time (Content-Length or chunked bodies)."""

    def __init__(self, engine: Engine, worker: Worker) -> None:
        self.engine, self.worker = engine, worker
        self.sock: socket.socket | None = None

    def connect(self) -> None:
        sock = socket.create_connection((self.engine.host, self.engine.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        self.sock = sock
        self.engine.selector.register(sock, selectors.EVENT_READ, self)

    def close(self) -> None:
        if self.sock is not None:
            self.engine.selector.unregister(self.sock)
            self.sock.close()
            self.sock = None

    def send(self, headers: list[tuple[str, str]], body: bytes) -> None:
        if self.sock is None:
            self.connect()
        head = [f"POST {self.engine.path} HTTP/1.1", f"host: {self.engine.host}:{self.engine.port}"]
        head += [f"{k}: {v}" for k, v in headers]
        head.append(f"content-length: {len(body)}")
        self.buffer = bytearray()
        self.head: tuple[int, dict[str, str], Any] | None = None
        self.started = time.perf_counter()
        assert self.sock is not None
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def readable(self) -> None:
        assert self.sock is not None
        try:
            data = self.sock.recv(1 << 18)
        except BlockingIOError:
            return
        if not data:
            self.close()
            self.engine.advance(self, None)
            return
        self.buffer += data
        self.parse()

    def parse(self) -> None:
        buf = self.buffer
        if self.head is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ", 2)[1])
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            del buf[: end + 4]
            if "chunked" in headers.get("transfer-encoding", ""):
                mode: Any = "chunked"
            else:
                mode = int(headers.get("content-length", "0"))
            self.head = (status, headers, mode)
        status, headers, mode = self.head
        if mode == "chunked":
            chunks, pos = [], 0
            while True:
                line_end = buf.find(b"\r\n", pos)
                if line_end < 0:
                    return
                size = int(bytes(buf[pos:line_end]).split(b";")[0], 16)
                if size == 0:
                    if buf.find(b"\r\n", line_end + 2) < 0:
                        return
                    body = b"".join(chunks)
                    break
                if len(buf) < line_end + 2 + size + 2:
                    return
                chunks.append(bytes(buf[line_end + 2 : line_end + 2 + size]))
                pos = line_end + 2 + size + 2
        else:
            if len(buf) < mode:
                return
            body = bytes(buf[:mode])
        if headers.get("connection", "").lower() == "close":
            self.close()
        self.engine.advance(
            self, Response(status, headers, body, time.perf_counter() - self.started)
        )


class Engine:
    def __init__(self, port: int, path: str = "/mcp") -> None:
        self.host, self.port, self.path = "127.0.0.1", port, path
        self.selector = selectors.DefaultSelector()
        self.active = 0

    def advance(self, connection: Connection, response: Response | None) -> None:
        try:
            request = connection.worker.send(response)
        except StopIteration:
            self.active -= 1
            connection.close()
            return
        assert request is not None
        connection.send(*request)

    def run(self, workers: list[Worker], limit: float = 120.0) -> None:
        connections = [Connection(self, w) for w in workers]
        for connection in connections:
            self.active += 1
            first = next(connection.worker)
            assert first is not None
            connection.send(*first)
        deadline = time.perf_counter() + limit
        while self.active > 0:
            if time.perf_counter() > deadline:
                raise TimeoutError("the load phase stalled")
            for key, _ in self.selector.select(1.0):
                key.data.readable()
        for connection in connections:
            connection.close()


# -- MCP over it -------------------------------------------------------------------------------

ACCEPT = ("accept", "application/json, text/event-stream")
JSON = ("content-type", "application/json")
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "http_bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def open_session() -> Generator[Request, Response | None, dict[str, str] | None]:
    """Initialize + initialized; returns the session headers (None on failure)."""
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "http_bench", "version": "1"},
            },
        }
    )
    response = yield ([JSON, ACCEPT], body)
    if response is None or response.status != 200:
        return None
    headers = {"mcp-protocol-version": response.messages()[0]["result"]["protocolVersion"]}
    if "mcp-session-id" in response.headers:
        headers["mcp-session-id"] = response.headers["mcp-session-id"]
    notified = yield (
        [JSON, ACCEPT, *headers.items()],
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    )
    if notified is None or notified.status >= 300:
        return None
    return headers


def call_request(era: str, rid: int, session: dict[str, str] | None) -> Request:
    if era == "modern":
        body = orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hello"}, "_meta": META},
            }
        )
        headers = [JSON, ACCEPT, ("mcp-protocol-version", MODERN), ("mcp-method", "tools/call")]
        return [*headers, ("mcp-name", "echo")], body
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hello"}},
        }
    )
    return [JSON, ACCEPT, *(session or {}).items()], body


def calls(
    era: str,
    session: dict[str, str] | None,
    budget: list[int],
    latencies: list[float],
    errors: list[Any],
) -> Worker:
    """``echo`` calls in ``session`` (``None``: the stateless era), one at a time, until the
    shared ``budget`` is spent; each answered call's latency goes to ``latencies``, the first
    three failures to ``errors``."""
    rid = 0
    while budget[0] > 0:
        budget[0] -= 1
        rid += 1
        response = yield call_request(era, rid, session)
        try:
            ok = response is not None and any(
                m.get("id") == rid and m["result"]["content"][0]["text"] == "hello"
                for m in response.messages()
            )
        except (KeyError, ValueError, IndexError, TypeError):
            ok = False
        if ok:
            assert response is not None
            latencies.append(response.elapsed)
        elif len(errors) < 3:
            errors.append(response and (response.status, response.body[:200]))


def caller(era: str, budget: list[int], latencies: list[float], errors: list[Any]) -> Worker:
    """A connection's calls: in a session it opens first in the initialize era."""
    session = (yield from open_session()) if era == "legacy" else None
    yield from calls(era, session, budget, latencies, errors)


def opener(count: list[int], opened: list[dict[str, str]], errors: list[Any]) -> Worker:
    while count[0] > 0:
        count[0] -= 1
        headers = yield from open_session()
        if headers is None:
            errors.append("refused")
        else:
            opened.append(headers)


# -- one server ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes], limit: float = 60) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return time.perf_counter() - start
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("the server did not start")


def phase(pid: int, port: int, era: str, connections: int, calls: int) -> dict[str, Any]:
    engine = Engine(port)
    budget, latencies, errors = [calls], [], []
    workers = [caller(era, budget, latencies, errors) for _ in range(connections)]
    cpu0, t0, own0 = cpu_seconds(pid), time.perf_counter(), time.process_time()
    engine.run(workers)
    elapsed, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    own = time.process_time() - own0
    latencies.sort()
    done = len(latencies)
    if not done:
        raise RuntimeError(f"no call succeeded: {errors}")
    return {
        "calls_per_s": done / elapsed,
        "p50_ms": latencies[done // 2] * 1000,
        "p99_ms": latencies[min(done - 1, int(done * 0.99))] * 1000,
        "cpu_us_per_call": cpu / done * 1e6,
        # The load generator's own CPU: on a machine whose cores it shares with the
        # server, what it takes is not the server's to use.
        "loadgen_cpu_us_per_call": own / done * 1e6,
        "errors": calls - done,
    }


class Spawned:
    """A server process on a free port, killed (its whole group) on exit."""

    def __init__(self, name: str) -> None:
        command, _ = SERVERS[name]
        self.port = free_port()
        if "{ts}" in command:
            command = [ts_server() if part == "{ts}" else part for part in command]
        self.process = subprocess.Popen(
            [part.replace("{port}", str(self.port)) for part in command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            start_new_session=True,
        )
        self.pid = self.process.pid

    def __enter__(self) -> Spawned:
        wait_listening(self.port, self.process)
        time.sleep(0.3)  # workers and lifespans settle
        return self

    def sigterm(self) -> float:
        """Seconds from SIGTERM to exit."""
        signalled = time.perf_counter()
        os.killpg(self.pid, signal.SIGTERM)
        self.process.wait(timeout=60)
        return time.perf_counter() - signalled

    def __exit__(self, *exc: object) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()


def measure_calls(name: str, era: str, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"server": name, "era": era}
    with Spawned(name) as server:
        phase(server.pid, server.port, era, 1, args.warmup)
        for connections in (1, 8, 32):
            result[f"c{connections}"] = phase(server.pid, server.port, era, connections, args.calls)
        result["sigterm_exit_s"] = server.sigterm()
    return result


def measure_sessions(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """In a fresh process (memory freed by earlier load would hide the growth): open one
    session to warm up, then ``--sessions`` more; then SIGTERM with them open."""
    result: dict[str, Any] = {"server": name, "era": "legacy"}
    with Spawned(name) as server:
        Engine(server.port).run([opener([1], [], [])])
        time.sleep(args.settle)
        before = rss_kb(server.pid)
        opened: list[dict[str, str]] = []
        errors: list[Any] = []
        count = [args.sessions]
        t0 = time.perf_counter()
        Engine(server.port).run([opener(count, opened, errors) for _ in range(8)])
        result["sessions_per_s"] = len(opened) / (time.perf_counter() - t0)
        time.sleep(args.settle)  # engines go dormant: what stays is what an idle session costs
        result["kb_per_idle_session"] = (rss_kb(server.pid) - before) / max(1, len(opened))
        result["sessions_opened"] = len(opened)
        result["session_errors"] = len(errors)
        result["sigterm_exit_with_sessions_s"] = server.sigterm()
    return result


def measure_instructions(name: str, era: str, calls: int) -> float:
    """User-space instructions the server executes per sequential call, counted by
    valgrind's callgrind (immune to a noisy machine): the difference between a run of
    ``calls + 50`` calls and one of 50, divided by ``calls``."""
    totals = []
    for count in (50, calls + 50):
        command, _ = SERVERS[name]
        port = free_port()
        log = Path(f"/tmp/http_bench_callgrind.{os.getpid()}.log")
        process = subprocess.Popen(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                f"--log-file={log}",
                *[part.replace("{port}", str(port)) for part in command],
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            start_new_session=True,
        )
        try:
            wait_listening(port, process, limit=300)
            engine = Engine(port)
            budget: list[int] = [count]
            engine.run([caller(era, budget, [], [])], limit=600)
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=300)
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        collected = [line for line in log.read_text().splitlines() if "Collected" in line]
        log.unlink()
        # A multi-process server logs one line per process: add them up.
        totals.append(sum(int(line.split()[-1]) for line in collected))
    return (totals[1] - totals[0]) / calls


# -- report -------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def collect(
    rows: list[dict[str, Any]], server: str, era: str, key: Callable[[dict[str, Any]], float]
) -> list[float]:
    out = []
    for row in rows:
        if row.get("server") == server and row.get("era") == era and "error" not in row:
            try:
                out.append(key(row))
            except KeyError:
                pass
    return out


def cell(values: list[float], fmt: str = "{:.0f}") -> str:
    if not values:
        return "-"
    text = fmt.format(median(values))
    if len(values) > 1:
        text += f" ({fmt.format(min(values))}-{fmt.format(max(values))})"
    return text


def report(rows: list[dict[str, Any]], plan: list[tuple[str, str]]) -> dict[str, Any]:
    print()
    print("median (min-max over rounds)")
    header = f"{'server':<24}{'era':<8}{'seq/s':>16}{'8 conc/s':>16}{'32 conc/s':>16}"
    header += f"{'p50 ms':>14}{'p99 ms':>14}{'CPU us/call (8)':>20}{'load gen us (8)':>20}"
    print(header)
    for server, era in plan:
        values = [
            collect(rows, server, era, lambda r: r["c1"]["calls_per_s"]),
            collect(rows, server, era, lambda r: r["c8"]["calls_per_s"]),
            collect(rows, server, era, lambda r: r["c32"]["calls_per_s"]),
            collect(rows, server, era, lambda r: r["c1"]["p50_ms"]),
            collect(rows, server, era, lambda r: r["c1"]["p99_ms"]),
            collect(rows, server, era, lambda r: r["c8"]["cpu_us_per_call"]),
            collect(rows, server, era, lambda r: r["c8"]["loadgen_cpu_us_per_call"]),
        ]
        line = f"{server:<24}{era:<8}"
        line += "".join(f"{cell(v):>16}" for v in values[:3])
        line += "".join(f"{cell(v, '{:.2f}'):>14}" for v in values[3:5])
        line += f"{cell(values[5]):>20}{cell(values[6]):>20}"
        print(line)
    print()
    print(f"{'server':<24}{'KB/idle session':>20}{'sessions/s':>16}{'SIGTERM->exit s':>20}")
    print(f"{'':<24}{'':>20}{'':>16}{'(sessions open)':>20}")
    for server in dict.fromkeys(s for s, _ in plan):
        kb = collect(rows, server, "legacy", lambda r: r["kb_per_idle_session"])
        rate = collect(rows, server, "legacy", lambda r: r["sessions_per_s"])
        exits = collect(rows, server, "legacy", lambda r: r["sigterm_exit_with_sessions_s"])
        exits = exits or collect(rows, server, "modern", lambda r: r["sigterm_exit_s"])
        print(f"{server:<24}{cell(kb, '{:.1f}'):>20}{cell(rate):>16}{cell(exits, '{:.2f}'):>20}")

    def ratio(a: list[float], b: list[float]) -> float | None:
        return median(a) / median(b) if a and b else None

    summary: dict[str, Any] = {}
    for era in ("legacy", "modern"):
        ours = collect(rows, "trio_mcp", era, lambda r: r["c8"]["cpu_us_per_call"])
        bare = collect(rows, "hypercorn", era, lambda r: r["c8"]["cpu_us_per_call"])
        summary[f"{era}: CPU per call over bare hypercorn (8 conc)"] = ratio(ours, bare)
        ours1 = collect(rows, "trio_mcp", era, lambda r: r["c1"]["cpu_us_per_call"])
        bare1 = collect(rows, "hypercorn", era, lambda r: r["c1"]["cpu_us_per_call"])
        summary[f"{era}: CPU per call over bare hypercorn (sequential)"] = ratio(ours1, bare1)
        for c in ("c1", "c8"):
            ours_rate = collect(rows, "trio_mcp", era, lambda r, c=c: r[c]["calls_per_s"])
            sdk_rate = collect(rows, "sdk", era, lambda r, c=c: r[c]["calls_per_s"])
            summary[f"{era}: calls/s vs SDK ({c})"] = ratio(ours_rate, sdk_rate)
            if era == "legacy":
                ts_rate = collect(rows, "ts", era, lambda r, c=c: r[c]["calls_per_s"])
                summary[f"{era}: calls/s vs TypeScript SDK ({c})"] = ratio(ours_rate, ts_rate)
    for era in ("legacy", "modern"):
        fast, slow = "trio_mcp:httptools", "trio_mcp:hypercorn"
        for c in ("c1", "c8"):
            summary[f"{era}: httptools vs hypercorn front end, calls/s ({c})"] = ratio(
                collect(rows, fast, era, lambda r, c=c: r[c]["calls_per_s"]),
                collect(rows, slow, era, lambda r, c=c: r[c]["calls_per_s"]),
            )
            summary[f"{era}: httptools vs hypercorn front end, CPU/call ({c})"] = ratio(
                collect(rows, fast, era, lambda r, c=c: r[c]["cpu_us_per_call"]),
                collect(rows, slow, era, lambda r, c=c: r[c]["cpu_us_per_call"]),
            )
    summary["memory per idle session vs SDK"] = ratio(
        collect(rows, "trio_mcp", "legacy", lambda r: r["kb_per_idle_session"]),
        collect(rows, "sdk", "legacy", lambda r: r["kb_per_idle_session"]),
    )
    for c in ("c8", "c32"):
        summary[f"modern: 2 workers vs 1 ({c})"] = ratio(
            collect(rows, "trio_mcp-2w", "modern", lambda r, c=c: r[c]["calls_per_s"]),
            collect(rows, "trio_mcp", "modern", lambda r, c=c: r[c]["calls_per_s"]),
        )
        summary[f"modern: bare hypercorn 2 workers vs 1 ({c})"] = ratio(
            collect(rows, "hypercorn-2w", "modern", lambda r, c=c: r[c]["calls_per_s"]),
            collect(rows, "hypercorn", "modern", lambda r, c=c: r[c]["calls_per_s"]),
        )
    print()
    for key, value in summary.items():
        print(f"{key:<64}{'-' if value is None else f'{value:.2f}x'}")
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000, help="calls per phase")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--settle", type=float, default=4.0, help="seconds before reading RSS")
    parser.add_argument("--skip-sessions", action="store_true")
    parser.add_argument("--only", default=None, help="comma list of servers")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--front-end",
        default=None,
        help="comma list of the HTTP front ends trio_mcp's servers run on (httptools, "
        "hypercorn; default: serve's); with two, each trio_mcp server is measured on both, "
        "named trio_mcp:<front end>",
    )
    parser.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="N",
        help="instead: count server instructions per call under callgrind over N calls",
    )
    args = parser.parse_args()

    if args.front_end:
        use_front_ends(args.front_end.split(","))
    names = args.only.split(",") if args.only else list(SERVERS)
    if args.only and args.front_end and "," in args.front_end:
        names = [n for n in SERVERS if n.split(":")[0] in names]
    plan = [(name, era) for name in names for era in SERVERS[name][1]]
    rows: list[dict[str, Any]] = []
    if args.instructions:
        counted = {}
        for name, era in plan:
            if name.endswith("-2w"):
                continue
            counted[f"{name} {era}"] = measure_instructions(name, era, args.instructions)
            print(
                f"{name:<24}{era:<8}{counted[f'{name} {era}']:>12,.0f} instructions/call",
                flush=True,
            )
        for era in ("legacy", "modern"):
            bare, ours = counted.get(f"hypercorn {era}"), counted.get(f"trio_mcp {era}")
            if bare and ours:
                print(f"{era}: trio_mcp over bare hypercorn {ours / bare - 1:+.0%}")
        if args.json is not None:
            args.json.write_text(json.dumps(counted, indent=1))
        return 0
    load = os.getloadavg()
    print(
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs", flush=True
    )
    jobs: list[tuple[str, str, bool]] = [(name, era, False) for name, era in plan]
    if not args.skip_sessions:
        jobs += [(name, "legacy", True) for name in names if "legacy" in SERVERS[name][1]]
    for round_ in range(args.rounds):
        for name, era, is_sessions in jobs:
            try:
                row = (
                    measure_sessions(name, args) if is_sessions else measure_calls(name, era, args)
                )
            except Exception as exc:  # noqa: BLE001 - one failed server must not end the run
                row = {"server": name, "era": era, "error": f"{type(exc).__name__}: {exc}"}
            row["round"] = round_
            rows.append(row)
            brief = {k: v for k, v in row.items() if k not in ("c1", "c8", "c32")}
            if "c1" in row:
                brief["seq/s"] = round(row["c1"]["calls_per_s"])
                brief["8/s"] = round(row["c8"]["calls_per_s"])
            print(json.dumps(brief, default=lambda v: round(v, 3)), flush=True)
    summary = report(rows, plan)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
