"""The base of the fuzzer's state machine: the plumbing every rule uses (sending a
message, waiting for answers, the barrier request), and the start and end of an
example (a fresh connection in one era; then waiting for everything owed, and closing).

The machine runs in a worker thread (Hypothesis is synchronous); every I/O
step is a call into the Trio thread through the :class:`~._runner.Link`, so
all sockets, pipes and processes stay owned by Trio tasks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize

from .. import _jsonrpc as rpc
from .._errors import ErrorCode
from .._types._base import RequestId
from ._messages import Speaker, dumps
from ._probe import EraCatalogue
from ._steps import Await, Expect, Send, Settle
from ._strategies import invalid_values, valid_values

if TYPE_CHECKING:
    from ._runtime import Link, Runtime

__all__ = ["LIST_FIELDS", "MachineBase", "counted"]

#: The list methods: the field of their result, and the capability that offers them.
LIST_FIELDS = {
    "tools/list": ("tools", "tools"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "resources"),
    "prompts/list": ("prompts", "prompts"),
}
#: The most requests an example keeps in flight without waiting for them (see
#: :meth:`MachineBase.request_in_flight`); past it, it waits for the older half.
MAX_IN_FLIGHT = 16
F = TypeVar("F", bound=Callable[..., Any])


def counted(fn: F) -> F:
    """Count each run of a rule (for the progress line and the report)."""

    @functools.wraps(fn)
    def run(self: MachineBase, *args: Any, **kwargs: Any) -> Any:
        self.rt.progress.rules[fn.__name__] += 1
        return fn(self, *args, **kwargs)

    return run  # type: ignore[return-value]


class MachineBase(RuleBasedStateMachine):
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
        #: Requests sent by :meth:`request_in_flight` and not waited for yet.
        self.in_flight: list[RequestId] = []
        #: Ids of the tasks the server created (the tasks extension), newest last.
        self.tasks: list[str] = []

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

    def request_in_flight(
        self, method: str, params: dict[str, Any] | None, *, expect: Expect | None, **meta: Any
    ) -> RequestId:
        """Send a request and go on without waiting for its answer, so that a slow tool
        does not hold the example up and the server gets many calls at once.

        The answer is owed all the same, within the deadline: the checker looks after
        every step, the example's end waits for it, and a request still unanswered at its
        deadline is a hang. At most :data:`MAX_IN_FLIGHT` are left in flight; past that,
        the older half is waited for first."""
        if len(self.in_flight) >= MAX_IN_FLIGHT:
            older = self.in_flight[: MAX_IN_FLIGHT // 2]
            del self.in_flight[: MAX_IN_FLIGHT // 2]
            self.wait(*older)
        id = self._id()
        self.request(method, params, expect=expect, id=id, wait=False, **meta)
        self.in_flight.append(id)
        return id

    def wait_in_flight(self) -> None:
        """Wait for every request :meth:`request_in_flight` left in flight."""
        if self.in_flight:
            ids, self.in_flight = self.in_flight, []
            self.wait(*ids)

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
        return [m for m, (_, cap) in LIST_FIELDS.items() if cat.has(cap)]

    # -- start and end ----------------------------------------------------------------------------

    @initialize(data=st.data())
    @counted
    def connect(self, data: st.DataObject) -> None:
        era = data.draw(st.sampled_from(self.rt.eras), label="era")
        # Over HTTP, most examples start with the handshake done: left to the rules alone,
        # it is often never done (Hypothesis turns a random set of rules off in each
        # example), and the HTTP rules that need a session would go untested. The rest try
        # requests before it, and other versions. (Drawn even when it is not used, on a
        # connection kept from an earlier example: an example draws the same way every
        # time it runs. Not drawn on stdio, whose runs draw as they always did.)
        handshake_first = (
            self.rt.transport == "http"
            and data.draw(st.integers(0, 3), label="handshake first") > 0
        )
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
            if handshake_first:
                self.handshake()

    def handshake(self) -> None:
        """``initialize`` with the version the server chose at the probe (which it must
        echo), then ``notifications/initialized``."""
        version = self._catalogue().version
        id = self._id()
        self.send(self.speaker.initialize(id, version), Expect(echo_version=version))
        self.wait(id)
        answer = self.answer(id)
        if isinstance(answer, rpc.ResultResponse) and isinstance(
            answer.result.get("protocolVersion"), str
        ):
            self.speaker.version = answer.result["protocolVersion"]
            self.send(self.speaker.notification("notifications/initialized"))
            self.phase = "operating"

    def teardown(self) -> None:
        link = self.link
        if link is None:
            return
        # What is still owed (calls left in flight, late answers to cancelled requests)
        # is waited for here, or, while nothing has failed yet, by the runtime in the
        # background, as the next example runs (see Runtime.release_link).
        owed = not self.failed and link.alive
        try:
            if owed and link.cancelled_unanswered() and self.ready:
                self.barrier()
            if owed and not self.rt.settles_in_background(link):
                self._run(Settle())
                owed = False
        finally:
            link.state = {
                "phase": self.phase,
                "next_id": self.next_id,
                "speaker": self.speaker,
                "cursors": self.cursors,
                "tasks": self.tasks,
            }
            self.rt.release_link(link, settle=owed and not self.failed)

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
