"""RFC 6570 URI templates: expanding them, and matching URIs against them.

Expansion follows the RFC for every operator (``+ # . / ; ? &``), the
explode modifier (``*``) and prefixes (``:n``). Matching is its inverse for
the forms a resource template uses in practice: a simple ``{var}`` matches
one non-empty segment (no ``/``, ``?``, ``#``), ``{+var}`` and ``{#var}`` match
reserved characters too, ``{/var*}`` matches several path segments (a
list), and ``{?a,b}`` / ``{&c}`` match query parameters in any order.
Matched values are percent-decoded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

import attrs

__all__ = ["UriTemplate"]

_EXPRESSION = re.compile(r"\{([^{}]+)\}")
_VARSPEC = re.compile(r"([A-Za-z0-9_.%]+)(\*|:(\d{1,4}))?")
_UNRESERVED = "-._~"
_RESERVED = ":/?#[]@!$&'()*+,;="


@attrs.frozen
class _Var:
    name: str
    explode: bool
    prefix: int | None


@attrs.frozen
class _Expr:
    operator: str
    variables: tuple[_Var, ...]


# operator: (first, separator, named, if-empty, allow reserved)
_OPS: dict[str, tuple[str, str, bool, str, bool]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}


class UriTemplate:
    """A parsed URI template.

    Raises:
        ValueError: (at construction) a malformed template.
    """

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts: list[str | _Expr] = []
        position = 0
        for match in _EXPRESSION.finditer(template):
            self._parts.append(template[position : match.start()])
            self._parts.append(_parse_expression(match.group(1)))
            position = match.end()
        tail = template[position:]
        if "{" in tail or "}" in tail:
            raise ValueError(f"malformed URI template {template!r}")
        self._parts.append(tail)
        self._regex: re.Pattern[str] | None = None

    @property
    def variables(self) -> list[str]:
        return [v.name for p in self._parts if isinstance(p, _Expr) for v in p.variables]

    @property
    def is_template(self) -> bool:
        return any(isinstance(p, _Expr) for p in self._parts)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    # -- expansion --------------------------------------------------------------------------

    def expand(self, values: Mapping[str, Any]) -> str:
        """The URI for ``values`` (strings, numbers, lists or dicts; missing means undefined)."""
        out = []
        for part in self._parts:
            out.append(part if isinstance(part, str) else _expand(part, values))
        return "".join(out)

    # -- matching ---------------------------------------------------------------------------

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The variables of ``uri`` if it matches, else ``None``."""
        if self._regex is None:
            self._regex = re.compile(self._build_regex(), re.DOTALL)
        found = self._regex.fullmatch(uri)
        if found is None:
            return None
        values: dict[str, str | list[str]] = {}
        groups = found.groupdict()
        for index, part in enumerate(self._parts):
            if not isinstance(part, _Expr):
                continue
            if part.operator in ("?", "&"):
                query = groups.get(f"q{index}")
                if query:
                    wanted = {v.name for v in part.variables}
                    for key, value in parse_qsl(query, keep_blank_values=True):
                        if key in wanted:
                            values.setdefault(key, value)
                continue
            for position, var in enumerate(part.variables):
                raw = groups.get(f"v{index}_{position}")
                if raw is None:
                    continue
                if var.explode and part.operator == "/":
                    values[var.name] = [unquote(s) for s in raw.split("/") if s != ""]
                elif var.explode:
                    values[var.name] = [unquote(s) for s in raw.split(_OPS[part.operator][1])]
                else:
                    if part.operator == ";" and "=" in raw:
                        raw = raw.split("=", 1)[1]
                    values[var.name] = unquote(raw)
        return values

    def _build_regex(self) -> str:
        pattern = []
        last_expr = max((i for i, p in enumerate(self._parts) if isinstance(p, _Expr)), default=-1)
        for index, part in enumerate(self._parts):
            if isinstance(part, str):
                pattern.append(re.escape(part))
                continue
            op = part.operator
            if op in ("?", "&"):
                pattern.append(f"(?:{re.escape(op)}(?P<q{index}>[^#]*))?")
                continue
            first, sep, named, _, reserved = _OPS[op]
            greedy = index == last_expr
            if reserved:
                segment = ".+" if greedy else ".+?"
            elif op == ".":
                segment = "[^/?#.]*"
            else:
                segment = "[^/?#,]+" if op == "" else "[^/?#]*"
            pieces = []
            for position, var in enumerate(part.variables):
                group = f"v{index}_{position}"
                if var.explode and op == "/":
                    pieces.append(f"(?P<{group}>(?:/[^/?#]*)*)")
                    continue
                name = re.escape(var.name)
                body = f"{name}(?:=[^;/?#]*)?" if named else segment
                lead = re.escape(first if position == 0 else sep)
                if op in ("", "+") and position == 0:
                    pieces.append(f"(?P<{group}>{body})")
                elif op in ("", "+"):
                    pieces.append(f"(?:{lead}(?P<{group}>{body}))?")
                else:
                    pieces.append(f"(?:{lead}(?P<{group}>{body}))?")
            pattern.append("".join(pieces))
        return "".join(pattern)


def _parse_expression(text: str) -> _Expr:
    operator = text[0] if text[0] in "+#./;?&" else ""
    body = text[len(operator) :]
    if text[:1] in ("=", ",", "!", "@", "|"):
        raise ValueError(f"reserved URI template operator in {{{text}}}")
    variables = []
    for spec in body.split(","):
        match = _VARSPEC.fullmatch(spec)
        if match is None:
            raise ValueError(f"malformed URI template expression {{{text}}}")
        variables.append(
            _Var(
                match.group(1),
                match.group(2) == "*",
                int(match.group(3)) if match.group(3) else None,
            )
        )
    return _Expr(operator, tuple(variables))


def _encode(value: str, reserved: bool) -> str:
    safe = _UNRESERVED + (_RESERVED if reserved else "")
    return quote(value, safe=safe)


def _expand(expr: _Expr, values: Mapping[str, Any]) -> str:
    first, sep, named, if_empty, reserved = _OPS[expr.operator]
    pieces: list[str] = []
    for var in expr.variables:
        value = values.get(var.name)
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            items = [_encode(str(v), reserved) for v in value]
            if not items:
                continue
            if var.explode:
                pieces.append(sep.join(f"{var.name}={i}" if named else i for i in items))
            else:
                joined = ",".join(items)
                pieces.append(f"{var.name}={joined}" if named else joined)
            continue
        if isinstance(value, Mapping):
            pairs = [
                (_encode(str(k), reserved), _encode(str(v), reserved)) for k, v in value.items()
            ]
            if not pairs:
                continue
            if var.explode:
                pieces.append(sep.join(f"{k}={v}" for k, v in pairs))
            else:
                joined = ",".join(f"{k},{v}" for k, v in pairs)
                pieces.append(f"{var.name}={joined}" if named else joined)
            continue
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if var.prefix is not None:
            text = text[: var.prefix]
        encoded = _encode(text, reserved)
        if named:
            pieces.append(f"{var.name}={encoded}" if encoded else f"{var.name}{if_empty}")
        else:
            pieces.append(encoded)
    if not pieces:
        return ""
    return first + sep.join(pieces)
