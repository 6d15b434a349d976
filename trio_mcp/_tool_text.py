"""What a tool shows a user and a model, and what may hide in it: one module for the host
(which refuses tools on these grounds, :mod:`trio_mcp._host._pinning`) and the fuzzer
(which reports them, the ``tools`` check class).

Plain functions of plain JSON and strings: no Trio, no I/O.

- :func:`fold`: a name as people see it, without case or Unicode compatibility forms
  (NFKC, then case-folded), so ``Export`` and its fullwidth spelling are one.
- :func:`look_alike`: a tool name reduced further, to what a reader or a host's name
  rewriting cannot tell apart: common Cyrillic and Greek letters that look Latin are
  mapped to them, and anything but ``a-z 0-9`` becomes ``_`` (as hosts rewrite names for
  LLM APIs that take ``[A-Za-z0-9_-]``).
- :func:`schema_texts`: every ``title`` and ``description`` in a tool's schemas, with
  where it is, and how deep the schemas nest, walked without recursion.
- :func:`hidden_instruction`: why a text offered to a model hides something from the user
  who approves it (invisible or bidirectional-control characters, HTML comments,
  instructions aimed at the model), or ``None``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "TOOL_NAME",
    "fold",
    "hidden_instruction",
    "look_alike",
    "schema_texts",
]

#: The spec's tool names (2025-11-25, "Tool names"): 1 to 128 of these characters.
TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")

#: Letters of other scripts that look like Latin ones (lower case: :func:`fold` comes
#: first). Not Unicode's whole confusables table: the letters names are spoofed with.
_CONFUSABLES: Final = str.maketrans(
    # Cyrillic a c e h i j o p q s w x y, Greek o a i k v p t u x
    "\u0430\u0441\u0435\u04bb\u0456\u0458\u043e\u0440\u051b\u0455\u051d\u0445\u0443"
    "\u03bf\u03b1\u03b9\u03ba\u03bd\u03c1\u03c4\u03c5\u03c7",
    "acehijopqswxyoaikvptux",
)
_NOT_NAME: Final = re.compile(r"[^a-z0-9]+")

#: Instructions aimed at the model rather than the user (case-insensitive).
_INSTRUCTIONS: Final = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?"
    r"(?:previous|prior|above|earlier|other|system)\s+(?:instructions?|prompts?|messages?|rules?)"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert)\s+the\s+user\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|it|that)\s+to\s+the\s+user\b"
    r"|<\s*/?\s*(?:important|system|instructions?|secret)\s*>",
    re.IGNORECASE,
)
#: Characters that are not shown, or that reorder what is shown, besides the ordinary
#: whitespace (``\t``, ``\n``, ``\r``).
_SHOWN_CONTROLS: Final = frozenset("\t\n\r")


def fold(text: str) -> str:
    """``text`` without case or Unicode compatibility forms (NFKC, then case-folded)."""
    return unicodedata.normalize("NFKC", text).casefold()


def look_alike(name: str) -> str:
    """What ``name`` looks like to a reader or a host that rewrites names: :func:`fold`,
    look-alike letters of other scripts mapped to Latin, every run of characters other
    than ``a-z 0-9`` turned into ``_``. Two tool names with the same look-alike are
    names a user (or a host) can confuse."""
    return _NOT_NAME.sub("_", fold(name).translate(_CONFUSABLES))


def schema_texts(schemas: Iterable[Any]) -> tuple[list[tuple[str, str]], int]:
    """Every ``title`` and ``description`` string inside ``schemas`` (plain JSON), with
    its path (``properties.city.description``), and the deepest nesting of objects and
    arrays among them (``{}`` is 1). Walked with a stack of its own, never recursively,
    so a schema nested as deep as JSON allows cannot exhaust Python's stack."""
    texts: list[tuple[str, str]] = []
    deepest = 0
    stack: list[tuple[Any, int, str]] = [(schema, 1, "") for schema in schemas]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, Mapping):
            deepest = max(deepest, depth)
            for key, value in node.items():
                where = f"{path}.{key}" if path else str(key)
                if key in ("title", "description") and isinstance(value, str):
                    texts.append((where, value))
                else:
                    stack.append((value, depth + 1, where))
        elif isinstance(node, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1, f"{path}[{n}]") for n, item in enumerate(node))
    return texts, deepest


def hidden_instruction(text: str) -> str | None:
    """Why ``text`` (a tool's title, description, or a schema's) hides something from the
    user who approves the tool, or ``None``: a character that is not shown or that
    reorders what is shown (Unicode format characters: zero-width, bidirectional
    controls, tags; other control characters than tab and line breaks), an HTML comment,
    or an instruction aimed at the model (``ignore previous instructions``, ``do not
    tell the user``, ``<IMPORTANT>``)."""
    for char in text:
        category = unicodedata.category(char)
        if category == "Cf" or (category == "Cc" and char not in _SHOWN_CONTROLS):
            name = unicodedata.name(char, "")
            return f"an invisible character U+{ord(char):04X}" + (f" ({name})" if name else "")
    if "<!--" in text:
        return "an HTML comment (<!-- ... -->), which a rendered description hides"
    found = _INSTRUCTIONS.search(text)
    if found is not None:
        return f"an instruction aimed at the model ({found.group(0)!r})"
    return None
