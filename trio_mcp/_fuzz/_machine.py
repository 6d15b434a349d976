"""The Hypothesis state machine that drives a server.

Each example opens a fresh connection (a new process, or a new HTTP session)
in one era, then runs rules: the lifecycle (``initialize``/``initialized`` or
``server/discover`` and per-request envelopes, with good, bad and garbage
versions), every list/read/get/call the server advertises (arguments drawn
from each tool's own ``inputSchema``, valid and not), pagination cursors,
cancellation at random moments, progress tokens, bursts of requests in
flight, duplicate and exotic ids, stray responses, malformed input and
unknown methods. After every step the checker's findings are collected; a
failed ``MUST`` raises, and Hypothesis shrinks the example.

The machine runs in a worker thread (Hypothesis is synchronous); every I/O
step is a call into the Trio thread through the :class:`Link`, so all
sockets, pipes and processes stay owned by Trio tasks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._protocol._envelope import CLIENT_CAPABILITIES, LOG_LEVEL, PROTOCOL_VERSION
from .._types._base import LOGGING_LEVELS, RequestId
from .._types._methods import METHODS
from .._versions import LEGACY_VERSIONS
from ._messages import CLIENT_INFO, Speaker, dumps
from ._probe import EraCatalogue
from ._steps import Await, Disconnect, Expect, HttpRequest, Send, Settle, Sleep
from ._strategies import GARBAGE_VERSIONS, exotic_ids, invalid_values, json_values, valid_values

if TYPE_CHECKING:
    from ._runner import Link, Runtime

__all__ = ["ServerMachine"]

_LIST_FIELDS = {
    "tools/list": ("tools", "tools"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "resources"),
    "prompts/list": ("prompts", "prompts"),
}
_INVALID_CURSOR = "fuzz-invalid-cursor:"
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
_TEMPLATE_VARIABLE = re.compile(r"\{[+#./;?&]?([^}]*)\}")
F = TypeVar("F", bound=Callable[..., Any])


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


def counted(fn: F) -> F:
    """Count each run of a rule (for the progress line and the report)."""

    @functools.wraps(fn)
    def run(self: ServerMachine, *args: Any, **kwargs: Any) -> Any:
        self.rt.progress.rules[fn.__name__] += 1
        return fn(self, *args, **kwargs)

    return run  # type: ignore[return-value]


class ServerMachine(RuleBasedStateMachine):
    """Drives one connection per example. A subclass binds :attr:`runtime` for each run."""

    runtime: ClassVar[Runtime]

    def __init__(self) -> None:
        super().__init__()
        self.rt = type(self).runtime
        self.link: Link | None = None
        self.era = ""
        self.cat: EraCatalogue | None = None
        self.speaker = Speaker("legacy", "")
        self.phase = "new"
        self.next_id = 1
        self.cursors: dict[str, list[str]] = {}
        self.failed = False

    # -- plumbing ---------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether ordinary requests make sense now (after the handshake, or modern)."""
        return self.link is not None and (
            self.era == "modern" or self.phase in ("initializing", "operating")
        )

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def _link(self) -> Link:
        assert self.link is not None
        return self.link

    def send(
        self, message: dict[str, Any] | list[Any] | bytes, expect: Expect | None = None
    ) -> None:
        data = message if isinstance(message, bytes) else dumps(message)
        self._run(Send(data=data, expect=expect))

    def _run(self, step: Any) -> None:
        try:
            self._link().step(step)
        except Exception:
            self.failed = True
            raise

    def wait(self, *ids: RequestId) -> None:
        self._run(Await(ids))

    def answer(self, id: RequestId) -> rpc.ResultResponse | rpc.ErrorResponse | None:
        answer: rpc.ResultResponse | rpc.ErrorResponse | None = self._link().answer(id)
        return answer

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        expect: Expect | None = None,
        id: RequestId | None = None,
        wait: bool = True,
        envelope: bool = True,
        **meta: Any,
    ) -> rpc.ResultResponse | rpc.ErrorResponse | None:
        if id is None:
            id = self._id()
        self.send(self.speaker.request(id, method, params, envelope=envelope, **meta), expect)
        if not wait:
            return None
        self.wait(id)
        return self.answer(id)

    def barrier(self) -> None:
        """A cheap request everyone must answer; once answered, the server has read (and
        should have answered) everything sent before it."""
        if self.era == "modern":
            self.request(
                "server/discover",
                expect=Expect(error_ok=False, error_invariant="discover-answered"),
            )
        else:
            self.request(
                "ping", expect=Expect(empty_result=True, answer_invariant="request-answered")
            )

    def _catalogue(self) -> EraCatalogue:
        assert self.cat is not None
        return self.cat

    def _lists(self) -> list[str]:
        cat = self._catalogue()
        return [m for m, (_, cap) in _LIST_FIELDS.items() if cat.has(cap)]

    # -- start and end ----------------------------------------------------------------------------

    @initialize(data=st.data())
    @counted
    def connect(self, data: st.DataObject) -> None:
        era = data.draw(st.sampled_from(self.rt.eras), label="era")
        self.era = era
        self.cat = self.rt.catalogue.eras[era]
        self.link = self.rt.open_link(era)
        state = self.link.state
        if state:
            self.__dict__.update(state)
            self.failed = False
            return
        if era == "modern":
            self.speaker = Speaker("modern", self._catalogue().version)
            self.phase = "modern"
        else:
            self.speaker = Speaker("legacy", self._catalogue().version)

    def teardown(self) -> None:
        link = self.link
        if link is None:
            return
        try:
            if not self.failed and link.alive:
                if link.cancelled_unanswered() and self.ready:
                    self.barrier()
                self._run(Settle())
        finally:
            link.state = {
                "phase": self.phase,
                "next_id": self.next_id,
                "speaker": self.speaker,
                "cursors": self.cursors,
            }
            self.rt.release_link(link)

    # -- lifecycle: legacy ------------------------------------------------------------------------

    @precondition(lambda self: self.era == "legacy" and self.phase == "new")
    @rule(data=st.data())
    @counted
    def initialize_(self, data: st.DataObject) -> None:
        """``initialize`` with the version the server chose at the probe (it must echo it),
        another version we know, or a garbage version."""
        probed = self._catalogue().version
        kind = data.draw(st.sampled_from(["chosen", "known", "garbage"]), label="version kind")
        if kind == "chosen":
            version = probed
        elif kind == "known":
            version = data.draw(st.sampled_from(LEGACY_VERSIONS), label="version")
        else:
            version = data.draw(
                st.one_of(st.sampled_from(GARBAGE_VERSIONS), st.text(max_size=12)), label="version"
            )
        expect = Expect(echo_version=probed) if version == probed else Expect()
        id = self._id()
        self.send(self.speaker.initialize(id, version), expect)
        self.wait(id)
        answer = self.answer(id)
        if isinstance(answer, rpc.ResultResponse) and isinstance(
            answer.result.get("protocolVersion"), str
        ):
            self.phase = "initializing"
            self.speaker.version = answer.result["protocolVersion"]

    @precondition(lambda self: self.era == "legacy" and self.phase == "initializing")
    @rule()
    @counted
    def initialized(self) -> None:
        self.send(self.speaker.notification("notifications/initialized"))
        self.phase = "operating"

    @precondition(lambda self: self.era == "legacy" and self.phase == "new")
    @rule(method=st.sampled_from(["ping", "tools/list", "resources/list", "prompts/list"]))
    @counted
    def request_before_initialize(self, method: str) -> None:
        """Requests before the handshake: a ping must be answered with ``{}``; anything else
        must be answered somehow (an error, usually)."""
        if self.rt.transport == "http":
            # No session yet: a server that needs one may refuse with 400, as it should.
            self.request(method, expect=Expect(answer="may"))
        elif method == "ping":
            self.request("ping", expect=Expect(empty_result=True))
        else:
            self.request(method)

    @precondition(lambda self: self.era == "legacy" and self.ready)
    @rule()
    @counted
    def initialize_again(self) -> None:
        id = self._id()
        self.send(self.speaker.initialize(id, self._catalogue().version), Expect())
        self.wait(id)

    @precondition(lambda self: self.era == "legacy" and self.ready)
    @rule()
    @counted
    def ping(self) -> None:
        self.request("ping", expect=Expect(empty_result=True))

    @precondition(
        lambda self: self.era == "legacy" and self.ready and self._catalogue().has("logging")
    )
    @rule(level=st.sampled_from([*LOGGING_LEVELS, "loud", ""]))
    @counted
    def set_level(self, level: str) -> None:
        if level in LOGGING_LEVELS:
            self.request("logging/setLevel", {"level": level})
        else:
            self.request(
                "logging/setLevel",
                {"level": level},
                expect=Expect(
                    error_codes=(ErrorCode.INVALID_PARAMS,),
                    error_invariant="invalid-params-code",
                    result_ok=False,
                ),
            )

    # -- lifecycle: modern ------------------------------------------------------------------------

    @precondition(lambda self: self.era == "modern")
    @rule()
    @counted
    def discover(self) -> None:
        self.request(
            "server/discover", expect=Expect(error_ok=False, error_invariant="discover-answered")
        )

    @precondition(lambda self: self.era == "modern")
    @rule(
        kind=st.sampled_from(
            [
                "no-meta",
                "no-version",
                "no-capabilities",
                "capabilities-not-object",
                "version-not-string",
                "unsupported-version",
            ]
        ),
        data=st.data(),
    )
    @counted
    def broken_envelope(self, kind: str, data: st.DataObject) -> None:
        """Modern requests whose ``_meta`` envelope is missing or wrong."""
        method = "tools/list" if self._catalogue().has("tools") else "server/discover"
        meta: dict[str, Any] = {
            PROTOCOL_VERSION: self.speaker.version,
            CLIENT_CAPABILITIES: {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
        invalid = Expect(
            error_codes=(ErrorCode.INVALID_PARAMS,),
            error_invariant="missing-envelope-error",
            result_ok=False,
        )
        # Without a version in _meta, a dual-era server on stdio may serve the request as
        # legacy; over HTTP the MCP-Protocol-Version header still makes it modern, and then
        # "the header does not match _meta" (-32020) is a fair answer too.
        if self.rt.transport == "http":
            invalid = attrs.evolve(
                invalid, error_codes=(ErrorCode.INVALID_PARAMS, ErrorCode.HEADER_MISMATCH)
            )
        unversioned = invalid if self.rt.transport == "http" else Expect()
        if kind == "no-meta":
            params: dict[str, Any] = {}
            expect = unversioned
        elif kind == "no-version":
            del meta[PROTOCOL_VERSION]
            params = {"_meta": meta}
            expect = unversioned
        elif kind == "no-capabilities":
            del meta[CLIENT_CAPABILITIES]
            params = {"_meta": meta}
            expect = invalid
        elif kind == "capabilities-not-object":
            meta[CLIENT_CAPABILITIES] = data.draw(st.sampled_from([[], "all", 1]), label="caps")
            params = {"_meta": meta}
            expect = invalid
        elif kind == "version-not-string":
            meta[PROTOCOL_VERSION] = data.draw(st.sampled_from([20260728, None, [], {}]))
            params = {"_meta": meta}
            expect = attrs.evolve(
                invalid,
                error_codes=(*invalid.error_codes, ErrorCode.UNSUPPORTED_PROTOCOL_VERSION),
            )
        else:
            meta[PROTOCOL_VERSION] = data.draw(st.sampled_from(GARBAGE_VERSIONS), label="version")
            params = {"_meta": meta}
            expect = Expect(
                error_codes=(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,),
                error_invariant="unsupported-version-error",
                result_ok=False,
            )
        id = self._id()
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params}, expect)
        self.wait(id)

    # -- what the server offers -------------------------------------------------------------------

    @precondition(lambda self: self.ready and bool(self._lists()))
    @rule(data=st.data())
    @counted
    def list_(self, data: st.DataObject) -> None:
        """A list, from the start, from a cursor it returned, or from a bad cursor."""
        method = data.draw(st.sampled_from(self._lists()), label="method")
        own = self.cursors.get(method, [])
        others = [c for m, cs in self.cursors.items() if m != method for c in cs]
        kinds = ["first"] + (["own"] if own else []) + ["garbage"] + (["stale"] if others else [])
        kind = data.draw(st.sampled_from(kinds), label="cursor")
        if kind == "first":
            answer = self.request(method)
        elif kind == "own":
            cursor = data.draw(st.sampled_from(own), label="cursor value")
            answer = self.request(method, {"cursor": cursor}, expect=Expect(own_cursor=True))
        elif kind == "garbage":
            cursor = _INVALID_CURSOR + data.draw(st.text(max_size=12), label="cursor value")
            answer = self.request(
                method,
                {"cursor": cursor},
                expect=Expect(
                    error_codes=(ErrorCode.INVALID_PARAMS,),
                    error_invariant="invalid-cursor-error",
                    result_ok=False,
                ),
            )
        else:
            cursor = data.draw(st.sampled_from(others), label="cursor value")
            answer = self.request(
                method,
                {"cursor": cursor},
                expect=Expect(
                    error_codes=(ErrorCode.INVALID_PARAMS,), error_invariant="invalid-cursor-error"
                ),
            )
        if isinstance(answer, rpc.ResultResponse):
            next_cursor = answer.result.get("nextCursor")
            if isinstance(next_cursor, str) and len(self.cursors.get(method, [])) < 8:
                self.cursors.setdefault(method, []).append(next_cursor)

    def _tool_call(
        self, data: st.DataObject, *, allow_invalid: bool = True
    ) -> tuple[dict[str, Any], Expect]:
        cat = self._catalogue()
        kinds = ["invalid", "invalid", "unknown"] if allow_invalid else ["valid"]
        kind = data.draw(st.sampled_from(kinds if cat.tools else ["unknown"]), label="arguments")
        if kind == "unknown":
            name = data.draw(st.text(max_size=10), label="tool").join(["fuzz-no-such-tool-", ""])
            return {"name": name, "arguments": {}}, Expect(
                error_codes=(ErrorCode.INVALID_PARAMS,),
                error_invariant="invalid-params-code",
                result_ok=False,
                is_error_ok=True,
            )
        tool = data.draw(st.sampled_from(cat.tools), label="tool")
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        output = tool.get("outputSchema") if isinstance(tool.get("outputSchema"), dict) else None
        if self.era == "legacy" and self.speaker.version < "2025-06-18":
            output = None  # structured output came with 2025-06-18
        if kind == "valid":
            arguments = data.draw(valid_values(schema or {"type": "object"}), label="valid args")
            return {"name": tool["name"], "arguments": arguments}, Expect(output_schema=output)
        arguments = data.draw(invalid_values(schema or {"type": "object"}), label="invalid args")
        return {"name": tool["name"], "arguments": arguments}, Expect(
            error_invariant="tool-inputs-validated", result_ok=False, is_error_ok=True
        )

    @precondition(lambda self: self.ready and bool(self._catalogue().tools))
    @rule(data=st.data())
    @counted
    def call_tool(self, data: st.DataObject) -> None:
        """Tools (one to three calls) with arguments drawn from their own inputSchema;
        sometimes with a progress token (and, modern, a log level)."""
        for _ in range(data.draw(st.integers(1, 3), label="calls")):
            params, expect = self._tool_call(data, allow_invalid=False)
            self._call(params, expect, data)

    @precondition(lambda self: self.ready and self._catalogue().has("tools"))
    @rule(data=st.data())
    @counted
    def call_tool_badly(self, data: st.DataObject) -> None:
        """A tool with arguments its inputSchema forbids, or a tool that does not exist."""
        params, expect = self._tool_call(data)
        self._call(params, expect, data)

    def _call(self, params: dict[str, Any], expect: Expect, data: st.DataObject) -> None:
        meta: dict[str, Any] = {}
        if data.draw(st.booleans(), label="progress"):
            token = data.draw(
                st.one_of(st.integers(0, 2**31), st.text(min_size=1, max_size=8)), label="token"
            )
            meta["progressToken"] = token
        if self.era == "modern" and data.draw(st.booleans(), label="log level"):
            meta[LOG_LEVEL] = data.draw(st.sampled_from(LOGGING_LEVELS), label="level")
        self.request("tools/call", params, expect=expect, **meta)

    @precondition(lambda self: self.ready and self._catalogue().has("resources"))
    @rule(data=st.data())
    @counted
    def read_resource(self, data: st.DataObject) -> None:
        cat = self._catalogue()
        kinds = (["listed"] if cat.resources else []) + (["template"] if cat.templates else [])
        kind = data.draw(st.sampled_from([*kinds, "unknown"]), label="uri kind")
        if kind == "listed":
            uri = data.draw(st.sampled_from(cat.resources), label="resource")["uri"]
            self.request("resources/read", {"uri": uri})
            return
        if kind == "template":
            template = data.draw(st.sampled_from(cat.templates), label="template")["uriTemplate"]
            filler = st.text(
                alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=8
            )
            uri = _TEMPLATE_VARIABLE.sub(lambda _: data.draw(filler, label="variable"), template)
            self.request("resources/read", {"uri": uri})
            return
        uri = "fuzz://no-such-resource/" + data.draw(st.text(max_size=10), label="path")
        codes = (
            (ErrorCode.INVALID_PARAMS,)
            if self.era == "modern"
            else (ErrorCode.RESOURCE_NOT_FOUND, ErrorCode.INVALID_PARAMS)
        )
        self.request(
            "resources/read",
            {"uri": uri},
            expect=Expect(
                error_codes=codes, error_invariant="invalid-params-code", result_ok=False
            ),
        )

    @precondition(lambda self: self.ready and self._catalogue().has("prompts"))
    @rule(data=st.data())
    @counted
    def get_prompt(self, data: st.DataObject) -> None:
        cat = self._catalogue()
        kinds = (["complete", "missing"] if cat.prompts else []) + ["unknown"]
        kind = data.draw(st.sampled_from(kinds), label="prompt kind")
        invalid = Expect(
            error_codes=(ErrorCode.INVALID_PARAMS,),
            error_invariant="invalid-params-code",
            result_ok=False,
        )
        if kind == "unknown":
            name = "fuzz-no-such-prompt-" + data.draw(st.text(max_size=8), label="name")
            self.request("prompts/get", {"name": name}, expect=invalid)
            return
        prompt = data.draw(st.sampled_from(cat.prompts), label="prompt")
        arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict)]
        required = [a["name"] for a in arguments if a.get("required") and "name" in a]
        values: dict[str, str] = {}
        for argument in arguments:
            argument_name = argument.get("name")
            if isinstance(argument_name, str) and (
                argument_name in required or data.draw(st.booleans())
            ):
                values[argument_name] = data.draw(st.text(max_size=12), label=argument_name)
        if kind == "missing" and required:
            values.pop(data.draw(st.sampled_from(required), label="dropped"), None)
            self.request(
                "prompts/get", {"name": prompt["name"], "arguments": values}, expect=invalid
            )
            return
        self.request("prompts/get", {"name": prompt["name"], "arguments": values})

    @precondition(lambda self: self.ready and self._catalogue().has("completions"))
    @rule(data=st.data())
    @counted
    def complete(self, data: st.DataObject) -> None:
        cat = self._catalogue()
        choices: list[tuple[dict[str, Any], str]] = []
        for prompt in cat.prompts:
            for argument in prompt.get("arguments") or []:
                if isinstance(argument, dict) and isinstance(argument.get("name"), str):
                    choices.append(
                        ({"type": "ref/prompt", "name": prompt["name"]}, argument["name"])
                    )
        for template in cat.templates:
            for variable in _TEMPLATE_VARIABLE.findall(template["uriTemplate"]):
                for name in variable.split(","):
                    choices.append(
                        ({"type": "ref/resource", "uri": template["uriTemplate"]}, name.strip("*"))
                    )
        if not choices:
            choices.append(({"type": "ref/prompt", "name": "fuzz-no-such-prompt"}, "x"))
        ref, argument = data.draw(st.sampled_from(choices), label="reference")
        value = data.draw(st.text(max_size=8), label="value")
        self.request(
            "completion/complete", {"ref": ref, "argument": {"name": argument, "value": value}}
        )

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

    # -- HTTP -------------------------------------------------------------------------------------

    @precondition(lambda self: self.ready and self.rt.transport == "http")
    @rule(data=st.data())
    @counted
    def http_headers(self, data: st.DataObject) -> None:
        """Headers that disagree with the body, sessions that do not exist, a foreign Origin:
        each has the HTTP status the spec gives it."""
        modern = self.era == "modern"
        kinds = ["origin", "content-type", "accept"]
        kinds += (
            ["version-mismatch", "method-missing", "method-mismatch", "name-mismatch"]
            if modern
            else ["session-missing", "session-garbage", "version-garbage"]
        )
        kind = data.draw(st.sampled_from(kinds), label="kind")
        id = self._id()
        ping = "server/discover" if modern else "ping"
        method, params = ping, None
        mismatch = Expect(
            answer="may",
            error_codes=(ErrorCode.HEADER_MISMATCH, ErrorCode.UNSUPPORTED_PROTOCOL_VERSION),
            error_invariant="http-header-mismatch",
            result_ok=False,
        )
        headers: dict[str, str | None]
        expect: Expect | None = Expect(answer="may")
        status: tuple[int, ...] = ()
        invariant = "http-status"
        if kind == "origin":
            headers = {"origin": "http://evil.example"}
            status, invariant = (403,), "http-origin-validated"
        elif kind == "content-type":
            headers = {"content-type": "text/plain"}
        elif kind == "accept":
            headers = {"accept": "application/json"}
        elif kind == "version-mismatch":
            headers = {"mcp-protocol-version": "2099-01-01"}
            status, invariant, expect = (400,), "http-header-mismatch", mismatch
        elif kind == "method-missing":
            headers = {"mcp-method": None}
            status, invariant, expect = (400,), "http-header-mismatch", mismatch
        elif kind == "method-mismatch":
            headers = {"mcp-method": "tools/list" if method != "tools/list" else "prompts/list"}
            status, invariant, expect = (400,), "http-header-mismatch", mismatch
        elif kind == "name-mismatch":
            tools = self._catalogue().tools
            if not tools:
                return
            method = "tools/call"
            params = {"name": data.draw(st.sampled_from(tools), label="tool")["name"]}
            params["arguments"] = {}
            headers = {"mcp-name": "fuzz-" + params["name"]}
            status, invariant, expect = (400,), "http-header-mismatch", mismatch
        elif kind == "session-missing":
            headers = {"mcp-session-id": None}
            status, invariant = (400,), "http-missing-session"
        elif kind == "session-garbage":
            headers = {"mcp-session-id": "fuzz-no-such-session"}
            status = (400, 404)
        else:
            headers = {"mcp-protocol-version": "1999-01-01"}
            status = (400,)
        message = self.speaker.request(id, method, params)
        self._run(
            Send(
                data=dumps(message),
                expect=expect,
                http=HttpRequest(headers=headers, expect_status=status, status_invariant=invariant),
            )
        )
        self.wait(id)

    @precondition(lambda self: self.ready and self.rt.transport == "http" and self.era == "legacy")
    @rule(kind=st.sampled_from(["get-stream", "resume", "delete-then-reuse"]))
    @counted
    def http_session(self, kind: str) -> None:
        """The legacy session's other verbs: a standalone GET stream (an SSE stream or 405),
        resumption with Last-Event-ID, and DELETE (after which the session id gets 404)."""
        if kind == "get-stream":
            self._run(Send(data=b"", http=HttpRequest(method="GET")))
            self._run(Sleep(0.05))
            self._run(Disconnect("$get"))
        elif kind == "resume":
            self._run(
                Send(
                    data=b"",
                    http=HttpRequest(method="GET", headers={"last-event-id": "$last-event-id"}),
                )
            )
            self._run(Sleep(0.05))
            self._run(Disconnect("$get"))
        else:
            self._run(Send(data=b"", http=HttpRequest(method="DELETE")))
            if not self._link().http_session_deleted():
                self.barrier()
                return
            id = self._id()
            self._run(
                Send(
                    data=dumps(self.speaker.request(id, "ping")),
                    expect=Expect(answer="may"),
                    http=HttpRequest(
                        headers={"mcp-session-id": "$stale-session"}, expect_status=(404,)
                    ),
                )
            )
            self.wait(id)
            self.phase = "new"
