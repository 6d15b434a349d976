"""The state machine's rules for Streamable HTTP alone: headers that disagree with the
body, missing or made-up sessions, a foreign ``Origin`` (and, for a server on loopback,
a foreign ``Host``: DNS rebinding), ``GET`` streams, ``Last-Event-ID`` and ``DELETE``
then reuse."""

from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .._errors import ErrorCode
from ._machine_base import MachineBase, counted
from ._messages import dumps
from ._steps import Disconnect, Expect, HttpRequest, Send, Sleep
from ._target import HttpTarget

__all__ = ["HttpRules"]


class HttpRules(MachineBase):
    """Streamable HTTP: headers, sessions, streams."""

    # -- HTTP -------------------------------------------------------------------------------------

    @precondition(lambda self: self.ready and self.rt.transport == "http")
    @rule(data=st.data())
    @counted
    def http_headers(self, data: st.DataObject) -> None:
        """Headers that disagree with the body, sessions that do not exist, a foreign Origin:
        each has the HTTP status the spec gives it."""
        modern = self.era == "modern"
        kinds = ["origin", "content-type", "accept"]
        if self._on_loopback():
            kinds.append("host")
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
        elif kind == "host":
            # What a browser sends once a page's own name (evil.example) was pointed at
            # 127.0.0.1: a server bound there that answers it is open to DNS rebinding.
            headers = {"host": "evil.example"}
            status, invariant = (400, 403, 421), "http-host-validated"
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

    def _on_loopback(self) -> bool:
        """Whether the target's URL names the local machine (where DNS rebinding reaches)."""
        target = self.rt.opener.target
        if not isinstance(target, HttpTarget):
            return False
        host = (urlsplit(target.url).hostname or "").lower()
        return host in ("localhost", "::1") or host.startswith("127.")

    @precondition(lambda self: self.ready and self.rt.transport == "http" and self.era == "legacy")
    @rule(kind=st.sampled_from(["get-stream", "resume", "delete-then-reuse"]), data=st.data())
    @counted
    def http_session(self, kind: str, data: st.DataObject) -> None:
        """The legacy session's other verbs: a standalone GET stream (an SSE stream or 405),
        resumption with Last-Event-ID, and DELETE (after which the session id gets 404).

        Resumption: a tool call with a progress token (what makes a server stream its
        answer), whose stream the fuzzer leaves once it gave an event id and went quiet,
        then resumes with GET and Last-Event-ID: the answer must come on the resumed
        stream. A server that answers at once, gives no event ids or answers the GET with
        405 owes nothing more."""
        if kind == "get-stream":
            self._run(Send(data=b"", http=HttpRequest(method="GET")))
            self._run(Sleep(0.05))
            self._run(Disconnect("$get"))
        elif kind == "resume":
            id = self._id()
            if self._catalogue().tools:
                params, expect = self._tool_call(data, allow_invalid=False)
                message = self.speaker.request(
                    id, "tools/call", params, progressToken=f"fuzz-resume-{id}"
                )
            else:
                message, expect = self.speaker.request(id, "ping"), Expect()
            self._run(Send(data=dumps(message), expect=expect, http=HttpRequest(resume=True)))
            self.wait(id)
        else:
            # Calls in flight would lose their answers with the session: not a hang.
            self.wait_in_flight()
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
