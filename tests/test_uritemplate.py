"""RFC 6570 URI templates: expansion (the RFC's own examples, levels 1-4) and matching."""

from __future__ import annotations

from typing import Any

import pytest

from trio_mcp.server import UriTemplate

VALUES: dict[str, Any] = {
    "var": "value",
    "hello": "Hello World!",
    "path": "/foo/bar",
    "empty": "",
    "x": "1024",
    "y": "768",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
}

RFC_EXAMPLES = [
    # Level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), RFC_EXAMPLES)
def test_rfc_6570_expansion(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(VALUES) == expected


def test_undefined_variables_expand_to_nothing() -> None:
    assert UriTemplate("x{?a,b}").expand({"b": 2}) == "x?b=2"
    assert UriTemplate("x{/a}{?b}").expand({}) == "x"
    assert UriTemplate("{list}").expand({"list": []}) == ""


@pytest.mark.parametrize("bad", ["{", "a}", "{=x}", "{a b}", "{a,}", "{@x}", "{a\n}"])
def test_malformed_templates_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="URI template"):
        UriTemplate(bad)


def test_variables_and_is_template() -> None:
    template = UriTemplate("repo://{owner}/{repo}{/path*}{?ref}")
    assert template.variables == ["owner", "repo", "path", "ref"]
    assert template.is_template
    assert not UriTemplate("file:///static.txt").is_template


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("file:///{name}", "file:///notes.txt", {"name": "notes.txt"}),
        ("file:///{name}", "file:///a/b", None),  # a simple variable is one segment
        ("file:///{name}", "file:///", None),  # and not empty
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("users://{id}/profile", "users://42/profile", {"id": "42"}),
        ("users://{id}/profile", "users://42/other", None),
        ("users://{id}", "users://a%20b", {"id": "a b"}),
        ("repo://{owner}/{repo}", "repo://trio/mcp", {"owner": "trio", "repo": "mcp"}),
        ("tree://root{/path*}", "tree://root/a/b/c", {"path": ["a", "b", "c"]}),
        ("tree://root{/path*}", "tree://root", {"path": []}),
        ("search://q{?term,lang}", "search://q?lang=en&term=trio", {"term": "trio", "lang": "en"}),
        ("search://q{?term,lang}", "search://q?term=a%26b", {"term": "a&b"}),
        ("search://q{?term,lang}", "search://q", {}),
        ("doc://{id}{#section}", "doc://7#intro", {"id": "7", "section": "intro"}),
        ("file.{ext}", "file.txt", {"ext": "txt"}),
    ],
)
def test_matching(template: str, uri: str, expected: dict[str, Any] | None) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "values"),
    [
        ("users://{id}/profile", {"id": "a b/c"}),
        ("file:///{+path}", {"path": "dir/with space/f.txt"}),
        ("search://q{?term,lang}", {"term": "x&y=z", "lang": "en"}),
        ("tree://root{/path*}", {"path": ["a", "b c"]}),
    ],
)
def test_match_inverts_expand(template: str, values: dict[str, Any]) -> None:
    parsed = UriTemplate(template)
    assert parsed.match(parsed.expand(values)) == values
