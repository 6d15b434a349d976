"""Who the fuzzer speaks as: :class:`Identity`, a name and the headers that make a request
that principal's (``Authorization: Bearer ...``, a cookie, an API key), read from
``--identity NAME:HEADER=VALUE`` options or from an identities file.

An identities file is JSON or TOML (by its suffix, ``.toml`` for TOML), parsed strictly::

    [identities.alice.headers]
    Authorization = "Bearer alice-token"

    [identities.bob.headers]
    Authorization = "Bearer bob-token"

Header values are secrets: an :class:`Identity` never shows them in its ``repr``, and the
scans name identities, never their headers' values.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

__all__ = ["Identity", "IdentityError", "load_identities", "parse_identity_options"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token


class IdentityError(ValueError):
    """An identity option or file is malformed; the message names what is wrong."""


def _show_headers(headers: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{name}: ***" for name in headers) + "}"


@attrs.frozen(kw_only=True)
class Identity:
    """One principal the fuzzer acts as.

    Attributes:
        name: what reports call it (``alice``).
        headers: the headers sent with each of its requests (values are secrets: not in
            the ``repr``).
    """

    name: str
    headers: Mapping[str, str] = attrs.field(repr=_show_headers)


def _check_header(where: str, name: object, value: object) -> tuple[str, str]:
    if not isinstance(name, str) or not _HEADER.fullmatch(name):
        raise IdentityError(f"{where}: {name!r} is not a header name")
    if not isinstance(value, str):
        raise IdentityError(f"{where}.{name}: expected a string, got {type(value).__name__}")
    if not all(c == "\t" or " " <= c <= "~" for c in value):
        raise IdentityError(
            f"{where}.{name}: a header value is visible ASCII (no line break, NUL or other "
            "control character, nothing beyond ASCII)"
        )
    return name, value


def _check_name(where: str, name: object) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise IdentityError(
            f"{where}: {name!r} is not an identity name (letters, digits, '.', '_', '-')"
        )
    return name


def parse_identity_options(options: Iterable[str]) -> tuple[Identity, ...]:
    """Identities from ``NAME:HEADER=VALUE`` options; the options naming one identity add
    up its headers (in the order given).

    Raises:
        IdentityError: an option of another shape, a bad name or header, or one header
            given twice for one identity.
    """
    found: dict[str, dict[str, str]] = {}
    for option in options:
        name, colon, rest = option.partition(":")
        header, equals, value = rest.partition("=")
        if not colon or not equals:
            raise IdentityError(
                f"--identity {name or option!r}...: expected NAME:HEADER=VALUE "
                "(alice:Authorization=Bearer TOKEN)"
            )
        where = f"--identity {name}"
        name = _check_name(where, name)
        header, value = _check_header(where, header.strip(), value.strip())
        headers = found.setdefault(name, {})
        if header.lower() in (h.lower() for h in headers):
            raise IdentityError(f"{where}: header {header} given twice")
        headers[header] = value
    return tuple(Identity(name=name, headers=headers) for name, headers in found.items())


def load_identities(path: str | Path) -> tuple[Identity, ...]:
    """The identities of a JSON or TOML file (``{"identities": {NAME: {"headers":
    {HEADER: VALUE}}}}``).

    Raises:
        IdentityError: the file does not parse, or holds a key other than those above
            (the message names it, as ``identities.alice.header``), or a value of the
            wrong type.
        OSError: the file cannot be read.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        data: Any = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise IdentityError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise IdentityError(f"{path}: expected a table with 'identities'")
    for key in data:
        if key != "identities":
            raise IdentityError(f"{path}: unknown key {key!r} (expected 'identities')")
    table = data.get("identities")
    if not isinstance(table, dict) or not table:
        raise IdentityError(f"{path}: identities: expected a table of identities by name")
    identities = []
    for name, entry in table.items():
        where = f"identities.{name}"
        _check_name(f"{path}: identities", name)
        if not isinstance(entry, dict):
            raise IdentityError(f"{path}: {where}: expected a table with 'headers'")
        for key in entry:
            if key != "headers":
                raise IdentityError(f"{path}: {where}: unknown key {key!r} (expected 'headers')")
        headers = entry.get("headers")
        if not isinstance(headers, dict) or not headers:
            raise IdentityError(f"{path}: {where}.headers: expected a table of headers")
        checked = dict(
            _check_header(f"{path}: {where}.headers", header, value)
            for header, value in headers.items()
        )
        identities.append(Identity(name=name, headers=checked))
    return tuple(identities)
