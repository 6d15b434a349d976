"""The state machine's lifecycle rules: ``initialize`` and ``initialized`` with good,
other and garbage versions, requests before the handshake, a second ``initialize``
(legacy); ``server/discover`` and broken ``_meta`` envelopes (modern)."""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._protocol._envelope import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from .._types._base import LOGGING_LEVELS
from .._versions import LEGACY_VERSIONS
from ._machine_base import MachineBase, counted
from ._messages import CLIENT_INFO
from ._steps import Expect
from ._strategies import GARBAGE_VERSIONS

__all__ = ["LifecycleRules"]


class LifecycleRules(MachineBase):
    """The lifecycle of both eras."""

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
