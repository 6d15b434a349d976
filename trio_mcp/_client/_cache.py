"""Client-side caching of modern results by their ``ttlMs`` hint (2026-07-28).

Entries are keyed by method and the parameters that affect the result (the
cursor of a list page, the URI of a read). Freshness is measured on the
Trio clock, so tests drive it with ``MockClock``. A list-changed or
resource-updated notification invalidates the matching entries at once.

An answer may arrive after a notification that invalidated what it says (the
server built the list, then changed it and said so; the notification overtook
the answer): caching it would serve the stale list until it expires. So each
method has a *generation*, bumped by every invalidation that touches it; a
request takes the generation before it is sent, and its answer is cached only
if the generation is still the same.
"""

from __future__ import annotations

from typing import Any

import trio

__all__ = ["ResultCache"]

_LIST_METHODS = {
    "tools": ("tools/list",),
    "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list"),
}


class ResultCache:
    def __init__(self, *, max_entries: int = 256) -> None:
        self._entries: dict[tuple[str, str], tuple[float, Any]] = {}
        #: Invalidations so far, per method (only methods that had one), and of all.
        self._generations: dict[str, int] = {}
        self._cleared = 0
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0

    def generation(self, method: str) -> int:
        """How many invalidations touched ``method`` so far: take it before sending a
        request, and give it to :meth:`put` with the answer."""
        return self._cleared + self._generations.get(method, 0)

    def get(self, method: str, key: str) -> Any | None:
        entry = self._entries.get((method, key))
        if entry is None or trio.current_time() >= entry[0]:
            self.misses += 1
            return None
        self.hits += 1
        return entry[1]

    def put(self, method: str, key: str, result: Any, *, generation: int | None = None) -> None:
        """Keep ``result`` for its ``ttlMs``, unless ``method`` was invalidated since
        ``generation`` (what :meth:`generation` said when the request was sent): then the
        answer may predate the change."""
        if generation is not None and generation != self.generation(method):
            return
        ttl_ms = getattr(result, "ttl_ms", None)
        if not ttl_ms or ttl_ms <= 0:
            return
        if len(self._entries) >= self.max_entries:
            self._entries.pop(next(iter(self._entries)))
        self._entries[(method, key)] = (trio.current_time() + ttl_ms / 1000, result)

    def invalidate_list(self, kind: str) -> None:
        """Forget every page of the ``kind`` list (``"tools"``, ``"prompts"``,
        ``"resources"``: its resources and templates)."""
        for method in _LIST_METHODS.get(kind, ()):
            self.invalidate_method(method)

    def invalidate_method(self, method: str) -> None:
        """Forget every cached result of ``method`` (and refuse answers already on their
        way)."""
        self._generations[method] = self._generations.get(method, 0) + 1
        for entry in [k for k in self._entries if k[0] == method]:
            del self._entries[entry]

    def invalidate_resource(self, uri: str) -> None:
        """Forget the cached read of ``uri`` (and refuse the reads already on their way:
        of any URI, for simplicity)."""
        self._generations["resources/read"] = self._generations.get("resources/read", 0) + 1
        self._entries.pop(("resources/read", uri), None)

    def clear(self) -> None:
        self._cleared += 1
        self._entries.clear()
