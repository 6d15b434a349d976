"""Protocol revisions this library speaks, and the two eras they fall into.

Revision strings are ISO dates, so plain string comparison orders them.

* **Modern** revisions (2026-07-28 and later) carry version, identity and
  capabilities in every request's ``_meta``; there is no handshake.
* **Legacy** revisions (2025-11-25 back to 2024-11-05) open with the
  ``initialize`` handshake and keep a session.
"""

from __future__ import annotations

from typing import Final, Literal

#: The modern (stateless) revisions we speak, newest first.
MODERN_VERSIONS: Final = ("2026-07-28",)
#: The legacy (``initialize``-handshake) revisions we speak, newest first.
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: Every revision we speak, newest first.
SUPPORTED_VERSIONS: Final = MODERN_VERSIONS + LEGACY_VERSIONS
LATEST_VERSION: Final = MODERN_VERSIONS[0]
LATEST_LEGACY_VERSION: Final = LEGACY_VERSIONS[0]
#: The first revision without the ``initialize`` handshake.
FIRST_MODERN_VERSION: Final = "2026-07-28"

Era = Literal["modern", "legacy"]


def era_of(version: str) -> Era:
    """The era a revision string belongs to (by date; unknown dates included)."""
    return "modern" if version >= FIRST_MODERN_VERSION else "legacy"


def allows_batches(version: str) -> bool:
    """Whether peers of ``version`` may send JSON-RPC batches.

    Batching was added in 2025-03-26 and removed again in 2025-06-18; the
    2024-11-05 revision inherited plain JSON-RPC 2.0, which has batches.
    """
    return version in ("2024-11-05", "2025-03-26")
