"""Programs pay at start-up for the features they use: a tools-only server or client loads
none of the modules of resources, prompts, completion, subscriptions, sampling, roots,
elicitation, input rounds (MRTR), tasks or rate limits, and each of those features still
works when its first use loads them.

Both checks run in a fresh interpreter: in this one, other tests (and pytest plugins) have
imported everything already. Start-up *time* is measured by the benchmarks, not here.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The ``_lazy`` modules, and ``trio_mcp/__init__.py``, whose client names load on first use.
LAZY_MODULES = [*sorted((ROOT / "trio_mcp").rglob("_lazy.py")), ROOT / "trio_mcp/__init__.py"]

#: Loaded on first use of their feature, never by ``import trio_mcp`` nor by serving or
#: calling tools.
LAZY = (
    "trio_mcp._client._handlers",
    "trio_mcp._server._completion",
    "trio_mcp._server._forms",
    "trio_mcp._server._prompts",
    "trio_mcp._server._rate_limit",
    "trio_mcp._server._request_state",
    "trio_mcp._server._resources",
    "trio_mcp._server._uritemplate",
    "trio_mcp._types._completion",
    "trio_mcp._types._elicitation",
    "trio_mcp._types._inputs",
    "trio_mcp._types._meta",
    "trio_mcp._types._prompts",
    "trio_mcp._types._resources",
    "trio_mcp._types._roots",
    "trio_mcp._types._sampling",
    "trio_mcp._types._subscriptions",
    "trio_mcp._types._tasks",
)

#: Loaded by the stdio client when it spawns: a server program never does.
SPAWNING = ("trio_mcp._transports._process", "shlex")


def _run(script: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_echo_server_loads_no_feature_module() -> None:
    loaded = _run(
        f"""
        import sys
        sys.path.insert(0, "examples")
        import echo_server
        print(sorted(m for m in {LAZY + SPAWNING!r} if m in sys.modules))
        """
    )
    assert loaded.strip() == "[]"


def test_a_server_loads_no_client_module() -> None:
    """``import trio_mcp.server``, and a stdio server that answers a call, never import the
    client: ``trio_mcp``'s client names load on first use."""
    script = """
        import atexit, sys
        import trio_mcp.server

        def client_modules():
            print(sorted(m for m in sys.modules if m.startswith("trio_mcp._client")), flush=True)

        client_modules()
        atexit.register(client_modules)
        sys.path.insert(0, "examples")
        import echo_server

        trio_mcp.run(echo_server.server)
        """
    calls = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        },
    ]
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        input="".join(json.dumps(call) + "\n" for call in calls),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    imported, initialized, called, at_exit = run.stdout.strip().splitlines()
    assert imported == "[]"
    assert json.loads(called)["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert at_exit == "[]"


def test_serving_and_calling_tools_loads_no_feature_module() -> None:
    """A tools-only server and client talk in every era (a plain tool answered at once, an
    async one in a task and, in the modern era, through the input-round machinery)."""
    out = _run(
        f"""
        import sys
        import trio
        import trio_mcp
        from trio_mcp._transports._memory import memory_stream_pair

        server = trio_mcp.Server("tools-only")

        @server.tool()
        def echo(text: str) -> str:
            return text

        @server.tool()
        async def shout(text: str, ctx: trio_mcp.Context) -> str:
            await ctx.info("shouting")
            await trio.lowlevel.checkpoint()
            return text.upper()

        async def main():
            for version in (None, "2026-07-28", "2025-11-25", "2024-11-05"):
                client_end, server_end = memory_stream_pair()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(server.serve, server_end)
                    async with trio_mcp.open_client(client_end, protocol_version=version) as c:
                        names = [tool.name for tool in await c.list_tools()]
                        a = await c.call_tool("echo", {{"text": "hi"}})
                        b = await c.call_tool("shout", {{"text": "hi"}})
                        await c.ping()
                        print(c.protocol_version, names, a.content[0].text, b.content[0].text)
                    nursery.cancel_scope.cancel()

        trio.run(main)
        print(sorted(m for m in {LAZY!r} if m in sys.modules))
        """
    )
    *calls, loaded = out.strip().splitlines()
    assert calls == [
        "2026-07-28 ['echo', 'shout'] hi HI",
        "2026-07-28 ['echo', 'shout'] hi HI",
        "2025-11-25 ['echo', 'shout'] hi HI",
        "2024-11-05 ['echo', 'shout'] hi HI",
    ]
    assert loaded == "[]"


def test_each_feature_works_when_its_first_use_loads_it() -> None:
    """One tour of every lazily loaded feature, from a fresh interpreter: the models and
    modules arrive when the feature is first used, and the feature works."""
    out = _run(
        f"""
        import sys
        import trio
        import trio_mcp
        from trio_mcp._transports._memory import memory_stream_pair

        server = trio_mcp.Server("tour")

        @server.tool()
        async def ask(ctx: trio_mcp.Context) -> str:
            form = await ctx.elicit("Name?", {{"properties": {{"name": {{"type": "string"}}}}}})
            sample = await ctx.sample("Say hi", max_tokens=5)
            roots = await ctx.list_roots()
            return f"{{form.content['name']}} {{sample.content.text}} {{roots[0].uri}}"

        @server.tool()
        def pay(ctx: trio_mcp.Context) -> str:
            from trio_mcp._types._elicitation import ElicitRequestURLParams

            if ctx.round > 0:  # the modern era's retry, once the user was there
                return "paid"
            url = ElicitRequestURLParams(message="Pay", url="https://pay", elicitation_id="p1")
            raise trio_mcp.URLElicitationRequired([url])

        @server.resource("config://app")
        def config() -> str:
            return "debug = true"

        @server.resource("users://{{user_id}}")
        def user(user_id: int) -> str:
            return f"user {{user_id}}"

        @server.prompt()
        def review(code: str) -> str:
            return f"Review {{code}}"

        @server.completion(prompt="review", argument="code")
        def codes(value: str, context: object) -> list[str]:
            return [c for c in ("print", "pass") if c.startswith(value)]

        async def elicitation(params):
            from trio_mcp._types._elicitation import ElicitResult

            return ElicitResult(action="accept", content={{"name": "Ada"}})

        async def sampling(params):
            from trio_mcp._types._content import TextContent
            from trio_mcp._types._sampling import CreateMessageResult

            return CreateMessageResult(role="assistant", content=TextContent(text="hi"), model="m")

        async def roots():
            from trio_mcp._types._roots import Root

            return [Root(uri="file:///work")]

        async def main():
            for version in ("2026-07-28", "2025-11-25"):
                client_end, server_end = memory_stream_pair()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(server.serve, server_end)
                    async with trio_mcp.open_client(
                        client_end,
                        protocol_version=version,
                        elicitation=elicitation,
                        elicitation_modes=("form", "url"),
                        sampling=sampling,
                        roots=roots,
                    ) as c:
                        print(version, (await c.call_tool("ask")).content[0].text)
                        try:
                            print((await c.call_tool("pay")).content[0].text)
                        except trio_mcp.URLElicitationRequired as exc:
                            print("go to", [e.url for e in exc.elicitations])
                        print([r.uri for r in await c.list_resources()])
                        print([t.uri_template for t in await c.list_resource_templates()])
                        print((await c.read_resource("users://7")).contents[0].text)
                        print((await c.get_prompt("review", {{"code": "x"}})).messages[0].content.text)
                        from trio_mcp._types._completion import PromptReference

                        print((await c.complete(PromptReference(name="review"), "code", "p")).values)
                        async with c.listen(tools=True) as listener:
                            server.add_tool(lambda: "new", name="new")
                            async for change in listener:
                                print("changed", change.kind, change.uri)
                                break
                        server.remove_tool("new")
                    nursery.cancel_scope.cancel()

        trio.run(main)

        from trio_mcp._types._methods import METHODS

        print(METHODS["tasks/get"].result.__name__)
        from trio_mcp._server._rate_limit import RateLimit

        limited = trio_mcp.Server("limited", tool_rate_limit=RateLimit(calls=1, per=60))
        print(type(limited._sealer).__name__)
        # The handler types and the _meta models have no feature of their own: the public
        # modules that export them load them.
        exported = {{"trio_mcp._client._handlers", "trio_mcp._types._meta"}}
        print(sorted(m for m in {LAZY!r} if m not in sys.modules and m not in exported))
        import trio_mcp.client, trio_mcp.types

        print(trio_mcp.client.SamplingHandler is not None, trio_mcp.types.Icons.__name__)
        """
    )
    lines = out.strip().splitlines()
    assert lines == [
        "2026-07-28 Ada hi file:///work",
        "paid",
        "['config://app']",
        "['users://{user_id}']",
        "user 7",
        "Review x",
        "['print', 'pass']",
        "changed tools None",
        "2025-11-25 Ada hi file:///work",
        "go to ['https://pay']",
        "['config://app']",
        "['users://{user_id}']",
        "user 7",
        "Review x",
        "['print', 'pass']",
        "changed tools None",
        "GetTaskResult",
        "RequestStateSealer",
        "[]",  # every other lazy module was loaded by the feature that uses it
        "True Icons",
    ]


#: What the ``trio-mcp`` command defers to the subcommand or option that needs it
#: (``trio_mcp/_cli/_lazy.py``), and the fuzzer's Hypothesis, which only a fuzz run needs.
COMMAND_LAZY = (
    "httpx",
    "hypothesis",
    "webbrowser",
    "trio_mcp._http.client._connect",
    "trio_mcp.auth",
    "trio_mcp._fuzz._machine",
    "trio_mcp._types._completion",
    "trio_mcp._types._roots",
)


def test_the_command_loads_no_option_s_module_before_it_runs() -> None:
    out = _run(
        f"""
        import contextlib, io, sys
        from trio_mcp._cli import main

        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["--help"])
        print(sorted(m for m in {COMMAND_LAZY!r} if m in sys.modules))
        """
    )
    assert out.strip() == "[]"


def test_the_pytest_plugin_loads_nothing_of_the_fuzzer() -> None:
    """pytest loads the plugin in every session wherever trio_mcp is installed."""
    out = _run(
        """
        import sys
        import trio_mcp.pytest_plugin

        fuzzer = ("hypothesis", "trio_mcp._fuzz._runner", "trio_mcp._fuzz._machine")
        print(sorted(m for m in fuzzer if m in sys.modules))
        """
    )
    assert out.strip() == "[]"


def _imported(statements: list[ast.stmt]) -> set[tuple[str, str]]:
    """(module, name) pairs of import statements; a whole module is (module, "")."""
    found: set[tuple[str, str]] = set()
    for imp in statements:
        assert isinstance(imp, (ast.Import, ast.ImportFrom)), ast.unparse(imp)
        for alias in imp.names:
            if isinstance(imp, ast.Import):
                found.add((alias.name, ""))
            else:
                found.add(("." * imp.level + (imp.module or ""), alias.name))
    return found


def _typed(path: Path) -> set[tuple[str, str]]:
    """A ``_lazy`` module's imports under ``TYPE_CHECKING`` (what type checkers see and
    ``on_first_use`` loads), as (module, name) pairs; and that its ``__getattr__`` is made by
    ``on_first_use`` from them alone."""
    tree = ast.parse(path.read_text())
    typed: set[tuple[str, str]] = set()
    made = False
    for node in tree.body:
        if not isinstance(node, ast.If):
            continue
        test = ast.unparse(node.test)
        if test == "TYPE_CHECKING":
            typed = _imported(node.body)
        elif test == "not TYPE_CHECKING":
            (assign,) = node.body
            assert isinstance(assign, ast.Assign) and isinstance(assign.value, ast.Call)
            assert ast.unparse(assign.value).endswith("on_first_use(globals())")
            made = True
    assert made, f"{path}: no __getattr__ = on_first_use(globals())"
    return typed


@pytest.mark.parametrize("path", LAZY_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_lazy_module_loads_what_it_declares(path: Path) -> None:
    """What type checkers see (the ``TYPE_CHECKING`` imports) is what runs: every name
    resolves to the object its import names, and nothing else does."""
    loaded = _typed(path)
    assert loaded
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    lazy = importlib.import_module(name)
    for module, attribute in sorted(loaded):
        if not attribute:
            attribute = module.rpartition(".")[2]
            expected = importlib.import_module(module, lazy.__package__)
        else:
            source = importlib.import_module(module, lazy.__package__)
            expected = getattr(source, attribute, None) or importlib.import_module(
                f"{source.__name__}.{attribute}"
            )
        assert getattr(lazy, attribute) is expected
        assert attribute in vars(lazy)  # kept: later reads are plain lookups
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        lazy.not_a_name  # noqa: B018


def test_on_first_use_refuses_what_it_cannot_load(tmp_path: Path) -> None:
    from trio_mcp._lazy import _declared_imports

    def declared(block: str) -> Any:
        path = tmp_path / "lazy.py"
        path.write_text(f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {block}\n")
        return _declared_imports(str(path))

    assert declared("from .x import a") == {"a": (".x", False)}
    assert declared("import a.b as c") == {"c": ("a.b", True)}
    with pytest.raises(ValueError, match=r"import a\.b as NAME"):
        declared("import a.b")
    with pytest.raises(ValueError, match="keeps its name"):
        declared("from x import a as b")
    with pytest.raises(TypeError, match="not an import"):
        declared("x = 1")
