"""Reading ``mcpServers`` configuration strictly (issue 21, failure 6): every key is checked
for its type and range, unknown keys are refused, and the error names the server, the key
and the type of the value found. On main each bad entry below was accepted (and most of
them failed open: a string ``allowedTools`` allowed every tool)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from trio_mcp.host import (
    ConfigError,
    HttpServerConfig,
    ServerPolicy,
    StdioServerConfig,
    parse_config,
    parse_policy,
)

STDIO = {"command": "python", "args": ["server.py"]}
HTTP = {"url": "https://example.com/mcp"}


def refused(entry: Any, key: str | None, *fragments: str) -> ConfigError:
    """Parse ``{"mcpServers": {"files": entry}}`` and check the refusal names the server, the
    key and the ``fragments`` (such as the type of the value found)."""
    with pytest.raises(ConfigError) as caught:
        parse_config({"mcpServers": {"files": entry}})
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.server == "files"
    assert error.key == key
    message = str(error)
    assert message.startswith("server 'files'")
    if key is not None:
        assert f"key {key!r}" in message
    for fragment in fragments:
        assert fragment in message, message
    return error


@pytest.mark.parametrize(
    ("extra", "key", "fragments"),
    [
        # The cases: a string where a list belongs, a string where a boolean does.
        ({"allowedTools": "read_*"}, "allowedTools", ["list of strings", "got str 'read_*'"]),
        ({"blockedTools": "export_*"}, "blockedTools", ["list of strings", "got str"]),
        ({"allowedTools": ["read_*", 3]}, "allowedTools[1]", ["string", "got int 3"]),
        ({"allowedTools": [""]}, "allowedTools[0]", ["non-empty"]),
        ({"allowedTools": None}, "allowedTools", ["got NoneType"]),
        ({"sampling": "false"}, "sampling", ["true or false", "got str 'false'"]),
        ({"elicitation": 0}, "elicitation", ["true or false", "got int 0"]),
        ({"roots": "file:///home"}, "roots", ["list of URIs", "got str"]),
        ({"roots": [3]}, "roots[0]", ["got int 3"]),
        ({"roots": [{"name": "x"}]}, "roots[0].uri", ["missing"]),
        ({"roots": [{"uri": 1}]}, "roots[0].uri", ["got int 1"]),
        ({"roots": [{"uri": "file:///a", "nam": "x"}]}, "roots[0].nam", ["unknown key"]),
        ({"timeout": math.nan}, "timeout", ["finite number more than 0", "got float nan"]),
        ({"timeout": -1}, "timeout", ["more than 0", "got int -1"]),
        ({"timeout": 0}, "timeout", ["more than 0"]),
        ({"timeout": math.inf}, "timeout", ["finite"]),
        ({"timeout": "10"}, "timeout", ["a number", "got str '10'"]),
        ({"timeout": True}, "timeout", ["a number", "got bool True"]),
        ({"rateLimit": -5}, "rateLimit", ["more than 0", "got int -5"]),
        ({"rateLimit": math.nan}, "rateLimit", ["got float nan"]),
        ({"rateLimit": 5, "burst": 0}, "burst", ["1 or more", "got int 0"]),
        ({"rateLimit": 5, "burst": 2.5}, "burst", ["whole number", "got float 2.5"]),
        ({"burst": 3}, "burst", ["rateLimit"]),
        # Unknown keys: a misspelt key must not be ignored (it would block nothing).
        ({"blockedTool": ["export_*"]}, "blockedTool", ["unknown key", "blockedTools"]),
    ],
)
def test_a_bad_policy_key_is_refused_naming_server_and_key(
    extra: dict[str, Any], key: str, fragments: list[str]
) -> None:
    refused({**STDIO, **extra}, key, *fragments)
    refused({**HTTP, **extra}, key, *fragments)


@pytest.mark.parametrize(
    ("entry", "key", "fragments"),
    [
        ({"command": "python", "args": "server.py"}, "args", ["list of strings", "got str"]),
        ({"command": "python", "args": ["a", None]}, "args[1]", ["got NoneType"]),
        ({"command": 5}, "command", ["list of strings", "got int 5"]),
        ({"command": []}, "command", ["program"]),
        ({"command": ""}, "command", ["non-empty"]),
        ({"command": "   "}, "command", ["program"]),
        ({"command": "x", "env": ["A=1"]}, "env", ["object of strings", "got list"]),
        ({"command": "x", "env": {"A": 1}}, "env.A", ["string", "got int 1"]),
        ({"command": "x", "cwd": 3}, "cwd", ["got int 3"]),
        ({"command": "x", "grace": -1}, "grace", ["0 or more", "got int -1"]),
        ({"command": "x", "grace": math.nan}, "grace", ["got float nan"]),
        ({"command": "x", "grace": "2"}, "grace", ["a number", "got str"]),
        ({"command": "x", "url": "http://a"}, None, ["not both"]),
        ({"command": "x", "headers": {}}, "headers", ["unknown key for a stdio server"]),
        ({"command": "x", "type": "http"}, "type", ["stdio", "got str 'http'"]),
        ({"url": 3}, "url", ["string", "got int 3"]),
        ({"url": "file:///etc/passwd"}, "url", ["http:// or https://"]),
        ({"url": "http://a", "headers": "x"}, "headers", ["object of strings", "got str"]),
        ({"url": "http://a", "headers": {"A": 1}}, "headers.A", ["got int 1"]),
        ({"url": "http://a", "args": []}, "args", ["unknown key for an HTTP server"]),
        ({"url": "http://a", "type": "stdio"}, "type", ["http", "got str 'stdio'"]),
        ({"neither": True}, None, ["either 'command' or 'url'"]),
        ("python server.py", None, ["an object", "got str"]),
    ],
)
def test_a_bad_transport_key_is_refused_naming_server_and_key(
    entry: Any, key: str | None, fragments: list[str]
) -> None:
    refused(entry, key, *fragments)


def test_a_long_bad_value_is_shortened_in_the_message() -> None:
    error = refused({**STDIO, "allowedTools": "x" * 5000}, "allowedTools")
    assert len(str(error)) < 200


def test_the_top_level_must_hold_objects() -> None:
    with pytest.raises(ConfigError, match=r"'mcpServers'.*got list"):
        parse_config({"mcpServers": ["files"]})
    with pytest.raises(ConfigError, match="got str"):
        parse_config("mcpServers")  # type: ignore[arg-type]


def test_a_good_configuration_gives_every_key() -> None:
    parsed = parse_config(
        {
            "globalShortcut": "Ctrl+Space",  # other top-level keys of a client's file
            "mcpServers": {
                "files": {
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "server"],
                    "env": {"A": "1"},
                    "cwd": "/tmp",
                    "grace": 0.5,
                    "allowedTools": ["read_*"],
                    "blockedTools": ["read_secret"],
                    "roots": ["file:///a", {"uri": "file:///b", "name": "B"}],
                    "sampling": False,
                    "elicitation": True,
                    "timeout": 10,
                    "rateLimit": 5,
                    "burst": 2,
                },
                "remote": {"type": "http", "url": "https://x/mcp", "headers": {"A": "b"}},
                "nulls": {"url": "http://y", "timeout": None, "rateLimit": None, "headers": None},
            },
        }
    )
    files = parsed["files"]
    assert isinstance(files, StdioServerConfig)
    assert files.command == ("npx", "-y", "server")
    assert files.grace == 0.5
    policy = files.policy
    assert policy.allowed_tools == ("read_*",)
    assert policy.blocked_tools == ("read_secret",)
    assert policy.roots is not None and [r.uri for r in policy.roots] == ["file:///a", "file:///b"]
    assert policy.sampling is False and policy.elicitation is True
    assert (policy.timeout, policy.rate_limit, policy.burst) == (10, 5, 2)
    assert not policy.allows_tool("write_file")
    remote = parsed["remote"]
    assert isinstance(remote, HttpServerConfig) and remote.headers == {"A": "b"}
    assert parsed["nulls"].policy.timeout is None


def test_parse_policy_alone_is_strict_too() -> None:
    with pytest.raises(ConfigError, match="key 'allowedTools': expected a list") as caught:
        parse_policy({"allowedTools": "read_*"})
    assert caught.value.server is None
    assert parse_policy({"blockedTools": ["export_*"], "timeout": 10}).timeout == 10


def test_a_config_built_in_code_refuses_a_string_command_and_a_bad_grace() -> None:
    with pytest.raises(TypeError, match=r"not the string 'python server\.py'"):
        StdioServerConfig(command="python server.py")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got int 3"):
        StdioServerConfig(command=["python", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="grace must be 0 or more"):
        StdioServerConfig(command=["python"], grace=math.nan)


def test_a_policy_built_in_code_refuses_a_string_where_a_list_belongs() -> None:
    with pytest.raises(TypeError, match="tool patterns must be a list"):
        ServerPolicy(allowed_tools="read_*")
    with pytest.raises(TypeError, match="tool patterns must be a list"):
        ServerPolicy(blocked_tools="export_*")
    with pytest.raises(TypeError, match="roots must be a list"):
        ServerPolicy(roots="file:///home")
    assert ServerPolicy(allowed_tools=["read_*"]).allows_tool("read_x")
