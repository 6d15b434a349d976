"""The state machine's rules for what a server offers: every list (from the start, from
its own cursor, from a stale or garbage one), tool calls with arguments drawn from
each tool's own ``inputSchema`` (valid or not), resources, templates, prompts and
completion."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._protocol._envelope import LOG_LEVEL
from .._types._base import LOGGING_LEVELS
from ._machine_base import MachineBase, counted
from ._steps import Expect

_INVALID_CURSOR = "fuzz-invalid-cursor:"
_TEMPLATE_VARIABLE = re.compile(r"\{[+#./;?&]?([^}]*)\}")

__all__ = ["FeatureRules"]


class FeatureRules(MachineBase):
    """Lists, tools, resources, prompts, completion."""

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

    @precondition(lambda self: self.ready and bool(self._catalogue().tools))
    @rule(data=st.data())
    @counted
    def call_tool(self, data: st.DataObject) -> None:
        """Tools (one to eight calls) with arguments drawn from their own inputSchema;
        sometimes with a progress token (and, modern, a log level). Calls are left in
        flight (:meth:`~._machine_base.MachineBase.request_in_flight`): the example goes
        on while a slow tool works, and each answer is still owed within the deadline."""
        for _ in range(data.draw(st.integers(1, 8), label="calls")):
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
            # Unique among the requests in flight, as a client must keep it (the answer to
            # an earlier call with this token may not have come yet: a tool left in flight).
            if not self._link().progress_token_active(token):
                meta["progressToken"] = token
        if self.era == "modern" and data.draw(st.booleans(), label="log level"):
            meta[LOG_LEVEL] = data.draw(st.sampled_from(LOGGING_LEVELS), label="level")
        self.request_in_flight("tools/call", params, expect=expect, **meta)

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
