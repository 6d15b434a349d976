"""Regenerate docs/reference/lifecycle.md from the protocol tables.

python docs/reference/generate.py
"""

from __future__ import annotations

from pathlib import Path

from trio_mcp import protocol
from trio_mcp.types import METHODS

PAGE = Path(__file__).with_name("lifecycle.md")


def render() -> str:
    phases = []
    for (role, phase), methods in protocol.SENDABLE.items():
        accepted = protocol.ACCEPTED[(role, phase)]
        phases.append(
            f"| {role} | {phase.value} | {', '.join(sorted(methods)) or '(nothing)'} "
            f"| {', '.join(sorted(accepted)) or '(nothing)'} |"
        )
    methods = [
        f"| `{name}` | {'request' if spec.is_request else 'notification'} | {spec.sender} "
        f"| {spec.since} | {spec.until or '—'} | {'.'.join(spec.capability) or '—'} |"
        for name, spec in METHODS.items()
    ]
    return (
        f"""# Lifecycle reference

Generated from the tables in `trio_mcp/_protocol/_lifecycle.py` and
`trio_mcp/_types/_methods.py` by `python docs/reference/generate.py`; a test fails when this
page and the tables disagree.

## Phases of a client

```mermaid
{protocol.mermaid("client")}
```

## Phases of a server

```mermaid
{protocol.mermaid("server")}
```

## What may be sent and accepted in each phase

`*` means every method of the negotiated revision.

| role | phase | may send | accepts from the peer |
|---|---|---|---|
"""
        + "\n".join(phases)
        + """

## Methods

The receiver must have declared the capability (for notifications: the sender).

| method | kind | sent by | since | until | capability |
|---|---|---|---|---|---|
"""
        + "\n".join(methods)
        + "\n"
    )


if __name__ == "__main__":
    PAGE.write_text(render())
