"""The keys of an ``mcpServers`` entry, and the strict check of each.

A configuration file is input the host must not guess about: a string where a list belongs
(``"allowedTools": "read_*"``) would otherwise become one pattern per character, ``"false"``
would read as true, and ``NaN`` would pass every comparison. So every key is checked for its
type and range before anything is built from it, an unknown key is refused (a misspelt
``blockedTool`` must not silently block nothing), and the error names the server, the key
(with the index or member inside it) and the type of the value found::

    server 'files', key 'allowedTools': expected a list of strings, got str 'read_*'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["POLICY_KEYS", "ConfigError", "check_entry", "check_policy"]

#: The keys of a server's policy (see :func:`~trio_mcp.host.parse_policy`).
POLICY_KEYS: Final = frozenset(
    {
        "allowedTools",
        "blockedTools",
        "trustedTools",
        "allowedSkills",
        "blockedSkills",
        "roots",
        "sampling",
        "elicitation",
        "timeout",
        "rateLimit",
        "burst",
    }
)
_STDIO_KEYS: Final = frozenset({"command", "args", "env", "cwd", "grace"})
_HTTP_KEYS: Final = frozenset({"url", "headers"})
#: ``type``, which several clients write, is accepted when it agrees with the entry.
_TYPES: Final = {"stdio": "command", "http": "url", "streamable-http": "url", "sse": "url"}
_ROOT_KEYS: Final = frozenset({"uri", "name"})
_SHOWN: Final = 60  # characters of a bad value repeated in the message


class ConfigError(ValueError):
    """A configuration entry the host refuses: the message names the server, the key and
    the type of the value found.

    Attributes:
        server: the server's name (``None`` for a policy read on its own).
        key: the key (with the index or member inside it: ``roots[1].uri``).
    """

    def __init__(self, server: str | None, key: str | None, problem: str) -> None:
        where = [] if server is None else [f"server {server!r}"]
        if key is not None:
            where.append(f"key {key!r}")
        super().__init__(f"{', '.join(where)}: {problem}" if where else problem)
        self.server = server
        self.key = key


def _got(value: object) -> str:
    """``got str 'read_*'``: the type of what was found, and (shortened) the value."""
    shown = repr(value)
    if len(shown) > _SHOWN:
        shown = shown[: _SHOWN - 3] + "..."
    return f"got {type(value).__name__} {shown}"


class _Entry:
    """Checks the keys of one entry, raising :exc:`ConfigError` at the first bad one."""

    def __init__(self, server: str | None, entry: Mapping[str, Any]) -> None:
        self.server = server
        self.entry = entry

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(self.server, key, problem)

    def string(self, key: str, value: object, *, nonempty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, {_got(value)}")
        if nonempty and not value:
            raise self.fail(key, "expected a non-empty string")
        return value

    def strings(self, key: str, *, nonempty: bool = False) -> None:
        value = self.entry[key]
        if not isinstance(value, Sequence) or isinstance(value, str | bytes):
            raise self.fail(key, f"expected a list of strings, {_got(value)}")
        for index, item in enumerate(value):
            self.string(f"{key}[{index}]", item, nonempty=nonempty)

    def string_map(self, key: str) -> None:
        value = self.entry[key]
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected an object of strings, {_got(value)}")
        for name, item in value.items():
            self.string(f"{key}.{name}", name)
            self.string(f"{key}.{name}", item)

    def boolean(self, key: str) -> None:
        value = self.entry[key]
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, {_got(value)}")

    def number(self, key: str, *, positive: bool, infinite: bool = False) -> None:
        """A number (not a boolean, not NaN): above 0 if ``positive``, else 0 or more;
        infinity only if ``infinite``."""
        value = self.entry[key]
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise self.fail(key, f"expected a number, {_got(value)}")
        bad = math.isnan(value) or (value <= 0 if positive else value < 0)
        if bad or (math.isinf(value) and not infinite):
            wanted = "more than 0" if positive else "0 or more"
            raise self.fail(key, f"expected a finite number {wanted}, {_got(value)}")

    def unknown(self, allowed: frozenset[str], what: str) -> None:
        for key in self.entry:
            if key not in allowed:
                known = ", ".join(sorted(allowed))
                raise self.fail(str(key), f"unknown key for {what} (known: {known})")


def check_policy(entry: Mapping[str, Any], server: str | None = None) -> None:
    """Check the policy keys of ``entry`` (others are left alone).

    Raises:
        ConfigError: a key of the wrong type or out of range.
    """
    keys = _Entry(server, entry)
    for key in (
        "allowedTools",
        "blockedTools",
        "trustedTools",
        "allowedSkills",
        "blockedSkills",
    ):
        if key in entry:
            keys.strings(key, nonempty=True)
    if "roots" in entry:
        _check_roots(keys)
    for key in ("sampling", "elicitation"):
        if key in entry:
            keys.boolean(key)
    # null: no limit, as when the key is left out.
    for key in ("timeout", "rateLimit"):
        if entry.get(key) is not None:
            keys.number(key, positive=True)
    if entry.get("burst") is not None:
        burst = entry["burst"]
        if not isinstance(burst, int) or isinstance(burst, bool) or burst < 1:
            raise keys.fail("burst", f"expected a whole number 1 or more, {_got(burst)}")
        if entry.get("rateLimit") is None:
            raise keys.fail("burst", "only means something with 'rateLimit'")


def _check_roots(keys: _Entry) -> None:
    roots = keys.entry["roots"]
    if not isinstance(roots, Sequence) or isinstance(roots, str | bytes):
        raise keys.fail("roots", f"expected a list of URIs or {{uri, name}} objects, {_got(roots)}")
    for index, root in enumerate(roots):
        where = f"roots[{index}]"
        if isinstance(root, Mapping):
            inner = _Entry(keys.server, root)
            for key in root:
                if key not in _ROOT_KEYS:
                    raise keys.fail(f"{where}.{key}", "unknown key for a root (known: name, uri)")
            if "uri" not in root:
                raise keys.fail(f"{where}.uri", "missing")
            inner.string(f"{where}.uri", root["uri"], nonempty=True)
            if root.get("name") is not None:
                inner.string(f"{where}.name", root["name"])
        else:
            keys.string(where, root, nonempty=True)


def check_entry(server: str, entry: object) -> None:
    """Check every key of the ``mcpServers`` entry ``server``: its transport's keys, its
    policy, and that it has no other.

    Raises:
        ConfigError: the first bad key, named with the server.
    """
    if not isinstance(entry, Mapping):
        raise ConfigError(server, None, f"expected an object, {_got(entry)}")
    keys = _Entry(server, entry)
    if "command" in entry and "url" in entry:
        raise ConfigError(server, None, "give either 'command' or 'url', not both")
    if "command" not in entry and "url" not in entry:
        raise ConfigError(server, None, "give either 'command' or 'url'")
    transport = "command" if "command" in entry else "url"
    if "type" in entry:
        kind = entry["type"]
        if (_TYPES.get(kind) if isinstance(kind, str) else None) != transport:
            names = ", ".join(name for name, key in _TYPES.items() if key == transport)
            raise keys.fail(
                "type", f"expected {names} for an entry with {transport!r}, {_got(kind)}"
            )
    if transport == "command":
        keys.unknown(_STDIO_KEYS | POLICY_KEYS | {"type"}, "a stdio server")
        command = entry["command"]
        if isinstance(command, str):
            keys.string("command", command, nonempty=True)
        else:
            keys.strings("command")
            if not command:
                raise keys.fail("command", "expected the program and its arguments, got []")
        if "args" in entry:
            keys.strings("args")
        if entry.get("env") is not None:
            keys.string_map("env")
        if entry.get("cwd") is not None:
            keys.string("cwd", entry["cwd"], nonempty=True)
        if "grace" in entry:
            keys.number("grace", positive=False, infinite=True)
    else:
        keys.unknown(_HTTP_KEYS | POLICY_KEYS | {"type"}, "an HTTP server")
        url = keys.string("url", entry["url"], nonempty=True)
        if not url.startswith(("http://", "https://")):
            raise keys.fail("url", f"expected an http:// or https:// URL, {_got(url)}")
        if entry.get("headers") is not None:
            keys.string_map("headers")
    check_policy(entry, server)
