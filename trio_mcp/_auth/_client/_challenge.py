"""Parsing ``WWW-Authenticate`` (RFC 9110 §11.6.1) into challenges, sans-IO.

The parser is lenient and total: any string gives a (possibly empty) list of
challenges, never an exception, and the work is linear in the header's length (which
is capped at :data:`MAX_HEADER`). Parts it cannot read are skipped.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["MAX_HEADER", "Challenge", "parse_challenges"]

#: Characters of ``WWW-Authenticate`` looked at; the rest is ignored.
MAX_HEADER = 8192

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_PARAM = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL)
_TOKEN68 = re.compile(r"[A-Za-z0-9._~+/-]+=*")
_SPACE = re.compile(r"[ \t,]*")


@attrs.frozen
class Challenge:
    """One challenge: its scheme (as sent) and its parameters (names lower-cased)."""

    scheme: str
    params: dict[str, str] = attrs.field(factory=dict)
    token68: str | None = None

    def param(self, name: str) -> str | None:
        return self.params.get(name.lower())


def parse_challenges(header: str) -> list[Challenge]:
    """The challenges of a ``WWW-Authenticate`` value (several headers joined by ``,``)."""
    text = header[:MAX_HEADER]
    challenges: list[Challenge] = []
    pos = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    while pos < len(text):
        scheme = _TOKEN.match(text, pos)
        if scheme is None:  # not a challenge: skip to the next comma
            comma = text.find(",", pos + 1)
            pos = len(text) if comma < 0 else comma + 1
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            continue
        pos = scheme.end()
        params: dict[str, str] = {}
        token68: str | None = None
        after = re.compile(r"[ \t]+").match(text, pos)
        if after is not None:
            pos = after.end()
            pos, token68 = _read_params(text, pos, params)
        challenges.append(Challenge(scheme.group(), params, token68))
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    return challenges


def _read_params(text: str, pos: int, params: dict[str, str]) -> tuple[int, str | None]:
    """Read ``name=value`` pairs (or one token68) from ``pos``; stop before the next
    challenge's scheme. Returns the new position and the token68, if any."""
    first = True
    while pos < len(text):
        param = _PARAM.match(text, pos)
        if param is None or (not first and _starts_challenge(text, pos)):
            if first:
                t68 = _TOKEN68.match(text, pos)
                if t68 is not None and _at_end_of_item(text, t68.end()):
                    return t68.end(), t68.group()
            return pos, None
        pos = param.end()
        quoted = _QUOTED.match(text, pos)
        if quoted is not None:
            value = re.sub(r"\\(.)", r"\1", quoted.group(1), flags=re.DOTALL)
            pos = quoted.end()
        else:
            token = _TOKEN.match(text, pos)
            value = token.group() if token is not None else ""
            pos = token.end() if token is not None else pos
        params.setdefault(param.group(1).lower(), value)
        first = False
        # skip to the comma that ends this parameter (or the end)
        spaces = re.compile(r"[ \t]*").match(text, pos)
        pos = spaces.end() if spaces is not None else pos
        if pos < len(text) and text[pos] != ",":
            comma = text.find(",", pos)
            pos = len(text) if comma < 0 else comma
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    return pos, None


def _starts_challenge(text: str, pos: int) -> bool:
    """Whether a new challenge (``scheme SP``, or a bare ``scheme`` then a comma) starts
    at ``pos`` rather than another parameter."""
    token = _TOKEN.match(text, pos)
    if token is None:
        return False
    rest = text[token.end() : token.end() + 1]
    return rest in ("", ",") or (rest in (" ", "\t") and _PARAM.match(text, pos) is None)


def _at_end_of_item(text: str, pos: int) -> bool:
    rest = text[pos:].lstrip(" \t")
    return rest == "" or rest.startswith(",")
