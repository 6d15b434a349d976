"""What asking the client for input looks like on the wire, in each era.

The tool's code is the same; the conversation is not:

* 2025-11-25 (and every initialize-era revision): the server sends an
  ``elicitation/create`` request to the client in the middle of the call and
  waits for the answer.
* 2026-07-28: servers send no requests. The call is answered at once with
  ``resultType: "input_required"``, the question and a sealed ``requestState``;
  the client asks its handler and sends the call again with ``inputResponses``
  and the same ``requestState``; the tool runs again from the top.

Last, a client with no elicitation handler: it does not declare the capability, so
``ctx.elicit`` raises before anything is sent, and the call fails with -32021.

Run it: ``python examples/input_rounds.py``
"""

from __future__ import annotations

from typing import Any

import trio

from trio_mcp import Context, MissingRequiredClientCapability, Server, jsonrpc, open_client
from trio_mcp.testing import connect
from trio_mcp.transports import MemoryMessageStream, MessageStream, memory_stream_pair
from trio_mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

server = Server("greeter")


@server.tool()
async def greet(ctx: Context) -> str:
    """Greet the user, asking for their name."""
    print(f"  (greet runs, round {ctx.round})")
    answer = await ctx.elicit(
        "What is your name?",
        {"properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    if answer.action != "accept" or answer.content is None:
        return "Hello, stranger"
    return f"Hello, {answer.content['name']}"


async def ask_user(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    """The client's elicitation handler: a real client would show a form."""
    return ElicitResult(action="accept", content={"name": "Ada"})


def summary(message: jsonrpc.Message) -> str:
    """One line per message: what it is, and the parts that matter here."""
    if isinstance(message, jsonrpc.JsonRpcRequest):
        params = message.params or {}
        keys = sorted(k for k in params if k in ("inputResponses", "requestState"))
        return f"request {message.method} (id {message.id}) {' '.join(keys)}".rstrip()
    if isinstance(message, jsonrpc.JsonRpcNotification):
        return f"notification {message.method}"
    if isinstance(message, jsonrpc.ResultResponse):
        result: dict[str, Any] = message.result
        if result.get("resultType") == "input_required":
            asks = {key: ask["method"] for key, ask in result["inputRequests"].items()}
            return f"result (id {message.id}) input_required {asks} requestState"
        if "action" in result:  # the client's answer to elicitation/create
            return f"result (id {message.id}) {result['action']} {result.get('content')}"
        texts = [block["text"] for block in result.get("content", []) if "text" in block]
        return f"result (id {message.id}) {' '.join(texts)}".rstrip()
    return repr(message)


class Tap(MessageStream):
    """A client stream that prints a summary of every message that goes by."""

    def __init__(self, inner: MemoryMessageStream) -> None:
        self.inner = inner

    async def send(self, message: jsonrpc.Message, *, related: object = None) -> None:
        print("  client ->", summary(message))
        await self.inner.send(message)

    async def receive(self) -> jsonrpc.Message | jsonrpc.Batch | jsonrpc.InvalidMessage:
        message = await self.inner.receive()
        print("  server ->", summary(message))  # type: ignore[arg-type]
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()


async def main() -> None:
    for version in ["2025-11-25", "2026-07-28"]:
        print(f"{version}:")
        client_end, server_end = memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, server_end)
            # validate_output=False: no tools/list to learn the tool's outputSchema, which
            # keeps the transcript short.
            async with open_client(
                Tap(client_end),
                protocol_version=version,
                elicitation=ask_user,
                validate_output=False,
            ) as client:
                result = await client.call_tool("greet")
                print("  =>", result.content[0].text)  # type: ignore[union-attr]

    print("a client without an elicitation handler:")
    async with connect(server) as client:
        try:
            await client.call_tool("greet")
        except MissingRequiredClientCapability as exc:
            print(f"  error {exc.code}: needs {exc.required_capabilities}")


if __name__ == "__main__":
    trio.run(main)
