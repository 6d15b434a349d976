"""Elicitation: a tool asks the user for input, through the client, in the middle of a
call. The handler code is the same in both eras.

* Legacy era (2025-11-25 and before): the server sends ``elicitation/create`` to
  the client and waits for the answer.
* Modern era (2026-07-28): servers send no requests. ``ctx.elicit`` unwinds the
  tool, the server answers ``input_required`` with the question and a sealed
  ``requestState``, the client asks its handler and retries the call with the
  answer, and the tool runs again from the top; this time ``ctx.elicit``
  returns the answer at once. (So do the asking before any work you would not
  want repeated.)

Run it: ``python examples/elicitation.py``
"""

from __future__ import annotations

from typing import Any

import trio

from trio_mcp import Context, Server
from trio_mcp.testing import connect
from trio_mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

server = Server("bookings")

TABLE_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 1},
        "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
        "seating": {"type": "string", "enum": ["inside", "terrace"], "default": "inside"},
        "extras": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "cake", "title": "Birthday cake"},
                    {"const": "flowers", "title": "Flowers"},
                ]
            },
            "default": [],
        },
        "confirm": {"type": "boolean", "default": True},
    },
    "required": ["name"],
}


@server.tool()
async def book_table(date: str, ctx: Context) -> str:
    """Book a table; asks who is coming."""
    print(f"  [server] book_table runs (round {ctx.round}, {ctx.era} era)")
    answer = await ctx.elicit(f"Booking for {date}: a few details, please", TABLE_FORM)
    if answer.action != "accept" or answer.content is None:
        return f"No booking ({answer.action})"
    details = answer.content
    return (
        f"Booked {details['guests']} seats ({details['seating']}) for {details['name']} on {date}"
    )


@server.tool()
async def pay_deposit(ctx: Context) -> str:
    """Send the user to a payment page (URL mode: the card never passes the client)."""
    answer = await ctx.elicit_url("Pay the deposit", "https://pay.example.com/d/42")
    return f"payment page {answer.action}ed"


async def fill_in(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    """The client side: a real client shows a form (pre-filled with the defaults)."""
    if isinstance(params, ElicitRequestURLParams):
        print(f"  [client] open {params.url}? yes")
        return ElicitResult(action="accept")
    properties: dict[str, Any] = params.requested_schema["properties"]
    content = {name: prop["default"] for name, prop in properties.items() if "default" in prop}
    content.update(name="Ada", guests=4)
    print(f"  [client] {params.message!r} -> {content}")
    return ElicitResult(action="accept", content=content)


async def main() -> None:
    for version in ["2025-11-25", "2026-07-28"]:
        print(f"{version}:")
        async with connect(
            server, protocol_version=version, elicitation=fill_in, elicitation_modes=("form", "url")
        ) as client:
            result = await client.call_tool("book_table", {"date": "Friday"})
            print("  ->", result.content[0].text)  # type: ignore[union-attr]
            paid = await client.call_tool("pay_deposit")
            print("  ->", paid.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    trio.run(main)
