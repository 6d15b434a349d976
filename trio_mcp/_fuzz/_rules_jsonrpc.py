"""The state machine's JSON-RPC rules: unknown methods and notifications, stray
messages, malformed input (bad JSON and UTF-8, wrong members and ids, batches, huge
and deeply nested messages), bursts of requests in flight, cancellation at random
moments, and ids of every kind."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .._errors import ErrorCode
from .._types._base import RequestId
from .._types._methods import METHODS
from ._machine_base import MachineBase, counted
from ._messages import dumps
from ._steps import Disconnect, Expect, Sleep
from ._strategies import exotic_ids, json_values

_KNOWN_METHODS = frozenset(METHODS)
_MALFORMED = (
    "invalid-json",
    "invalid-utf8",
    "not-an-object",
    "wrong-jsonrpc",
    "missing-jsonrpc",
    "no-method",
    "method-not-string",
    "null-id",
    "float-id",
    "object-id",
    "params-array",
    "params-string",
    "extra-fields",
    "empty-batch",
    "truncated",
    "control-chars",
    "batch",
    "huge-string",
    "deep-nesting",
    "many-keys",
)
_STRAY = (
    "unknown-notification",
    "cancel-unknown",
    "progress-unknown",
    "initialized-again",
    "response-result",
    "response-error",
)
_REMOVED_IN_MODERN = ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe")


def _unknown_method_names(*, header_safe: bool = False) -> st.SearchStrategy[str]:
    """Method names nobody defines; ``header_safe``: ones that fit an ``Mcp-Method``
    header as they are (visible ASCII, no surrounding space)."""
    names = st.one_of(
        st.sampled_from(["fuzz/unknown", "tools/lists", "Tools/List", "initialise", "", " "]),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz/_-.", max_size=16).map(
            lambda s: "x-fuzz/" + s
        ),
    ).filter(lambda name: name not in _KNOWN_METHODS)
    if header_safe:
        names = names.filter(lambda name: name == name.strip() and name.isascii())
    return names


__all__ = ["JsonRpcRules"]


class JsonRpcRules(MachineBase):
    """What JSON-RPC lets a client get wrong, and concurrency."""

    # -- JSON-RPC ---------------------------------------------------------------------------------

    @precondition(lambda self: self.ready)
    @rule(data=st.data())
    @counted
    def unknown_method(self, data: st.DataObject) -> None:
        """A method nobody defines (or, modern, one 2026-07-28 removed): -32601."""
        params: dict[str, Any] | None = None
        if self.era == "modern" and data.draw(st.booleans(), label="removed method"):
            method = data.draw(st.sampled_from(_REMOVED_IN_MODERN), label="method")
            params = {"level": "info"} if method == "logging/setLevel" else None
            if method.startswith("resources/"):
                params = {"uri": "fuzz://removed"}
        else:
            header_safe = self.rt.transport == "http"
            method = data.draw(_unknown_method_names(header_safe=header_safe), label="method")
        self.request(
            method,
            params,
            expect=Expect(
                error_codes=(ErrorCode.METHOD_NOT_FOUND,),
                error_invariant="method-not-found-code",
                result_ok=False,
            ),
        )

    @precondition(lambda self: self.ready)
    @rule(kind=st.sampled_from(_STRAY), data=st.data())
    @counted
    def stray(self, kind: str, data: st.DataObject) -> None:
        """Messages about nothing: unknown notifications, cancellations and progress for ids
        never sent, responses to requests the server never made. None may be answered;
        then a barrier request."""
        message: dict[str, Any]
        if kind == "unknown-notification":
            method = "notifications/" + data.draw(_unknown_method_names(), label="method")
            params = data.draw(
                st.one_of(
                    st.none(), st.dictionaries(st.text(max_size=5), json_values(3), max_size=2)
                ),
                label="params",
            )
            message = self.speaker.notification(method, params)
        elif kind == "cancel-unknown":
            message = self.speaker.notification(
                "notifications/cancelled", {"requestId": "fuzz-never-sent"}
            )
        elif kind == "progress-unknown":
            message = self.speaker.notification(
                "notifications/progress", {"progressToken": "fuzz-never-sent", "progress": 1}
            )
        elif kind == "initialized-again":
            message = self.speaker.notification("notifications/initialized")
        else:
            id = "fuzz-stray-" + str(data.draw(exotic_ids(), label="id"))
            if kind == "response-result":
                message = {"jsonrpc": "2.0", "id": id, "result": {}}
            else:
                message = {
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": -32000, "message": "stray"},
                }
        self.send(message)
        self.barrier()

    @precondition(lambda self: self.ready)
    @rule(kind=st.sampled_from(_MALFORMED), data=st.data())
    @counted
    def malformed(self, kind: str, data: st.DataObject) -> None:
        """What is not a valid JSON-RPC request (bad JSON, bad UTF-8, wrong members, bad
        ids, batches, huge or deeply nested messages); then a barrier request, by which time
        the server should have answered (and must still be answering)."""
        id = self._id()
        ping = "server/discover" if self.era == "modern" else "ping"
        request = self.speaker.request(id, ping)
        expect: Expect | None = None
        raw: bytes
        if kind in ("huge-string", "deep-nesting", "many-keys"):
            raw = self._oversized(kind, id, ping, data.draw(st.integers(0, 4), label="scale"))
            expect = Expect(answer="may", request_id=id)
        elif kind == "batch":
            size = data.draw(st.sampled_from([1, 2, 4, 8]), label="size")
            raw = dumps([self.speaker.request(self._id(), ping) for _ in range(size)])
        elif kind == "invalid-json":
            raw = data.draw(
                st.sampled_from(
                    [b"{", b"{]", b'{"jsonrpc": "2.0", "id": 1,', b"nul", b"'single'", b"[1,]"]
                ),
                label="bytes",
            )
        elif kind == "invalid-utf8":
            raw = b'{"jsonrpc": "2.0", "method": "\xff\xfe"}'
            expect = Expect(
                answer="should",
                answer_invariant="parse-error-answered",
                error_codes=(ErrorCode.PARSE_ERROR, ErrorCode.INVALID_REQUEST),
                error_invariant="parse-error-code",
                result_ok=False,
            )
        elif kind == "truncated":
            text = dumps(request)
            raw = text[: data.draw(st.integers(1, len(text) - 1), label="cut")]
        elif kind == "control-chars":
            raw = b'{"jsonrpc": "2.0", "id": ' + str(id).encode() + b', "method": "p\x01ing"}'
        elif kind == "not-an-object":
            raw = dumps(data.draw(st.sampled_from([1, "request", None, True]), label="value"))
        elif kind == "empty-batch":
            raw = b"[]"
        else:
            message = dict(request)
            if kind == "wrong-jsonrpc":
                message["jsonrpc"] = data.draw(st.sampled_from(["1.0", "2", 2.0, None]), label="v")
            elif kind == "missing-jsonrpc":
                del message["jsonrpc"]
            elif kind == "no-method":
                del message["method"]
            elif kind == "method-not-string":
                message["method"] = data.draw(st.sampled_from([1, None, ["ping"], {}]), label="m")
            elif kind == "null-id":
                message["id"] = None
            elif kind == "float-id":
                message["id"] = id + 0.5
            elif kind == "object-id":
                message["id"] = data.draw(st.sampled_from([{}, [id], True]), label="id")
            elif kind == "params-array":
                # By-position params make a valid JSON-RPC request (which MUST be
                # answered); MCP wants an object, so the answer is -32602 (or -32600).
                message["params"] = [1, 2]
                expect = Expect(
                    error_codes=(ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_PARAMS),
                    error_invariant="invalid-request-code",
                    result_ok=False,
                )
            elif kind == "params-string":
                message["params"] = "params"
                expect = Expect(
                    answer="should",
                    answer_invariant="invalid-request-answered",
                    error_codes=(ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_PARAMS),
                    error_invariant="invalid-request-code",
                    result_ok=False,
                )
            elif kind == "extra-fields":
                message["unexpected"] = data.draw(json_values(3), label="extra")
                expect = Expect(answer="may")
            raw = dumps(message)
        self.send(raw, expect)
        self.barrier()

    def _oversized(self, kind: str, id: int, method: str, scale: int) -> bytes:
        """A big message, bounded by the run's max message size."""
        size = max(64, self.rt.max_message_size >> (4 - scale) * 2)
        if kind == "deep-nesting":
            depth = max(8, size // 4)
            params = self.speaker.params({"fuzz": None}) or {}
            head, tail = dumps(params).split(b"null", 1)
            return (
                dumps({"jsonrpc": "2.0", "id": id, "method": method})[:-1]
                + b',"params":'
                + head
                + b"[" * depth
                + b"]" * depth
                + tail
                + b"}"
            )
        if kind == "many-keys":
            params = self.speaker.params({f"k{i}": i for i in range(size // 12)}) or {}
        else:
            params = self.speaker.params({"fuzz": "x" * size}) or {}
        return dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})

    @precondition(lambda self: self.ready)
    @rule(count=st.integers(2, 24), data=st.data())
    @counted
    def burst(self, count: int, data: st.DataObject) -> None:
        """Many requests in flight at once, then wait for every answer."""
        methods = ["server/discover"] if self.era == "modern" else ["ping"]
        methods += self._lists()
        ids: list[RequestId] = []
        for _ in range(count):
            method = data.draw(st.sampled_from(methods), label="method")
            id: RequestId = self._id()
            if data.draw(st.integers(0, 3), label="exotic id") == 0:
                exotic = data.draw(exotic_ids(), label="id")
                if isinstance(exotic, int) and 0 < exotic < 10**7:
                    exotic = -exotic
                if exotic not in ids:
                    id = exotic
            ids.append(id)
            self.request(method, id=id, wait=False)
        self.wait(*ids)

    @precondition(lambda self: self.ready)
    @rule(data=st.data())
    @counted
    def cancel(self, data: st.DataObject) -> None:
        """Start one to three requests, then cancel each right away, after a pause, or after
        its answer (the race the spec says both sides must survive); then a barrier
        request."""
        cat = self._catalogue()
        started: list[tuple[int, str]] = []
        for _ in range(data.draw(st.integers(1, 3), label="requests")):
            if cat.tools and data.draw(st.integers(0, 3), label="what") > 0:
                params, expect = self._tool_call(data, allow_invalid=False)
                method = "tools/call"
            else:
                method = data.draw(st.sampled_from(self._lists() or ["ping"]), label="method")
                params, expect = None, None
                if self.era == "modern" and method == "ping":
                    method = "server/discover"
            id = self._id()
            self.request(method, params, expect=expect, id=id, wait=False)
            started.append((id, method))
        for id, _ in started:
            when = data.draw(st.sampled_from(["at once", "after a pause", "after the answer"]))
            if when == "after a pause":
                self._run(Sleep(data.draw(st.sampled_from([0.001, 0.01, 0.05]), label="pause")))
            elif when == "after the answer":
                self.wait(id)
            self._cancel(id, data)
        self.barrier()

    def _cancel(self, id: int, data: st.DataObject) -> None:
        # Over HTTP a 2026-07-28 client cancels by closing the response stream; a legacy one
        # may also just lose it (which must not count as a cancellation).
        how = "notification"
        if self.rt.transport == "http":
            how = (
                "disconnect"
                if self.era == "modern"
                else data.draw(st.sampled_from(["notification", "disconnect"]), label="how")
            )
        if how == "disconnect":
            self._run(Disconnect(id))
            return
        reason = data.draw(st.sampled_from([None, "fuzz"]), label="reason")
        cancel_params: dict[str, Any] = {"requestId": id}
        if reason is not None:
            cancel_params["reason"] = reason
        self.send(self.speaker.notification("notifications/cancelled", cancel_params))

    @precondition(lambda self: self.ready)
    @rule(kind=st.sampled_from(["exotic", "duplicate", "reuse"]), data=st.data())
    @counted
    def ids(self, kind: str, data: st.DataObject) -> None:
        """Ids of every legal kind must come back exactly as sent; an id may be used again
        once answered; two requests with one id in flight is a client error the server must
        survive."""
        method = "server/discover" if self.era == "modern" else "ping"
        if kind == "exotic":
            id: str | int = data.draw(exotic_ids(), label="id")
            if isinstance(id, int) and 0 < id < 10**7:
                id = -id  # keep clear of the ids we count up
            self.request(method, id=id)
        elif kind == "reuse":
            id = self._id()
            self.request(method, id=id)
            self.request(method, id=id)
        else:
            id = self._id()
            self.request(method, id=id, wait=False)
            self.request(method, id=id, wait=False)
            self.barrier()
