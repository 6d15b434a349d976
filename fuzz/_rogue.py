"""Hypothesis strategies for what a peer that follows no rules sends: requests with any
method, envelope and progress token; initialize with any version; cancellations, progress
and answers naming real, finished and impossible ids; batches.

Each strategy gives a :class:`Rogue`: the bytes and what the receiver needs to know to
judge them (whether the params have the right shape).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from hypothesis import strategies as st

from trio_mcp import McpError, jsonrpc as rpc
from trio_mcp._types._converter import unstructure
from trio_mcp.protocol import LEGACY_VERSIONS
from trio_mcp.types import (
    PromptsCapability,
    ResourcesCapability,
    ServerCapabilities,
    ToolsCapability,
)

from ._corpus import (
    ALIEN_IDS,
    ENVELOPES,
    INVALID_PARAMS,
    MALFORMED_ANSWERS,
    REQUEST_METHODS,
    VALID_PARAMS,
    malformed_answer,
    with_meta,
)

SERVER_CAPS = st.builds(
    ServerCapabilities,
    logging=st.none() | st.just({}),
    completions=st.none() | st.just({}),
    tools=st.none() | st.builds(ToolsCapability, list_changed=st.none() | st.booleans()),
    prompts=st.none() | st.builds(PromptsCapability, list_changed=st.none() | st.booleans()),
    resources=st.none()
    | st.builds(
        ResourcesCapability,
        subscribe=st.none() | st.booleans(),
        list_changed=st.none() | st.booleans(),
    ),
)


@attrs.frozen
class Rogue:
    data: bytes
    label: str
    params_ok: bool = True


def initialize_params(version: Any) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "rogue", "version": "1"},
    }


@st.composite
def requests(draw: st.DrawFn, id: Any) -> Rogue:
    """Any method, valid or invalid params, any modern envelope (good or broken), any
    progress token (strings and integers, and the floats, lists and booleans that are not
    tokens)."""
    method = draw(st.sampled_from([*REQUEST_METHODS, "initialize"]))
    valid = draw(st.booleans())
    params = VALID_PARAMS.get(method) if valid else INVALID_PARAMS.get(method)
    params_ok = valid or method not in INVALID_PARAMS
    if method == "initialize":
        params, params_ok = initialize_params("2025-11-25"), True
    envelope = draw(st.sampled_from(ENVELOPES))
    params = with_meta(params, envelope.meta)
    token = draw(st.sampled_from([None, None, "t", 7, 1.5, [1], True]))
    if token is not None:
        params = dict(params or {})
        meta = params.get("_meta")
        params["_meta"] = {**(meta if type(meta) is dict else {}), "progressToken": token}
    label = f"{method} ({envelope.name} envelope, token {token!r})"
    return Rogue(rpc.dumps(rpc.JsonRpcRequest(id, method, params)), label, params_ok)


@st.composite
def initializes(draw: st.DrawFn, id: Any) -> Rogue:
    """initialize with supported, unsupported, modern and garbage versions."""
    version = draw(st.sampled_from([*LEGACY_VERSIONS, "2026-07-28", "2099-01-01", "1.0.0", 5]))
    params = initialize_params(version)
    shape = draw(st.sampled_from(["complete", "no capabilities", "no clientInfo"]))
    if shape == "no capabilities":
        del params["capabilities"]
    elif shape == "no clientInfo":
        del params["clientInfo"]
    if draw(st.booleans()):
        params["_meta"] = dict(ENVELOPES[0].meta)
    return Rogue(rpc.dumps(rpc.JsonRpcRequest(id, "initialize", params)), f"initialize {version!r}")


def _ids(known: Sequence[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from([*known, *ALIEN_IDS])


@st.composite
def cancellations(draw: st.DrawFn, known: Sequence[Any]) -> Rogue:
    target = draw(_ids(known))
    params: dict[str, Any] = {"requestId": target}
    reason = draw(st.sampled_from([None, "why", 5]))
    if reason is not None:
        params["reason"] = reason
    note = rpc.JsonRpcNotification("notifications/cancelled", params)
    return Rogue(rpc.dumps(note), f"cancel {target!r}")


@st.composite
def progress(draw: st.DrawFn, known: Sequence[Any]) -> Rogue:
    token = draw(_ids(known))
    params: dict[str, Any] = {"progressToken": token}
    value = draw(st.sampled_from([1, 2.5, "half", None, True]))
    if value is not None:
        params["progress"] = value
    if draw(st.booleans()):
        params["total"] = draw(st.sampled_from([10, "ten"]))
    note = rpc.JsonRpcNotification("notifications/progress", params)
    return Rogue(rpc.dumps(note), f"progress {token!r}: {value!r}")


@st.composite
def answers(draw: st.DrawFn, id: Any) -> Rogue:
    """An answer to ``id``: empty, an error, broken, or a made-up initialize or discover
    result (with any capabilities and versions)."""
    kind = draw(st.sampled_from(["empty", "error", "initialize", "discover", *MALFORMED_ANSWERS]))
    if kind in MALFORMED_ANSWERS:
        return Rogue(malformed_answer(id, kind), f"{kind} answer to {id!r}")
    if kind == "error":
        message: rpc.Message = rpc.ErrorResponse(id, McpError("no", code=-32603).error)
    elif kind == "initialize":
        result = {
            "protocolVersion": draw(st.sampled_from([*LEGACY_VERSIONS, "2026-07-28", "1.0"])),
            "capabilities": unstructure(draw(SERVER_CAPS)),
            "serverInfo": {"name": "rogue", "version": "1"},
        }
        message = rpc.ResultResponse(id, result)
    elif kind == "discover":
        result = {
            "supportedVersions": ["2026-07-28"],
            "capabilities": unstructure(draw(SERVER_CAPS)),
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "public",
        }
        message = rpc.ResultResponse(id, result)
    else:
        message = rpc.ResultResponse(id, {})
    return Rogue(rpc.dumps(message), f"{kind} answer to {id!r}")


def batch(id: Any) -> Rogue:
    items: list[rpc.Message] = [
        rpc.JsonRpcRequest(id, "ping", None),
        rpc.JsonRpcNotification("x/note", None),
    ]
    return Rogue(rpc.dumps(items), "batch of ping and a notification")
