"""A local HTTP server that hands out a JSON Schema and records every request, so a test
can show that a remote ``$ref`` was never fetched (rather than merely failing to resolve,
which an offline machine would give too)."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator

import attrs

#: Served for every path: with it, a fetched ``$ref`` would *accept* a string.
SCHEMA = b'{"type": "string"}'


@attrs.define
class SchemaHost:
    url: str
    hits: list[str]


@contextlib.contextmanager
def serving_schemas() -> Iterator[SchemaHost]:
    """Serve :data:`SCHEMA` on 127.0.0.1 (an ephemeral port) for the block's duration."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(SCHEMA)))
            self.end_headers()
            self.wfile.write(SCHEMA)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield SchemaHost(f"http://127.0.0.1:{server.server_address[1]}", hits)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
