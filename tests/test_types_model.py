"""The behaviour every wire model shares through ``Model`` (value semantics, repr)."""

from __future__ import annotations

import pytest

from trio_mcp import types as t


def test_models_compare_by_class_and_value() -> None:
    a = t.Implementation(name="n", version="1")
    assert a == t.Implementation(name="n", version="1")
    assert a != t.Implementation(name="n", version="2")
    # Same attribute names and values, another class: not equal.
    assert t.RequestParams() != t.NotificationParams()
    assert t.PaginatedRequestParams(cursor=None) != t.RequestParams()
    assert a != ("n", "1")


def test_models_hash_by_value_when_their_attributes_can() -> None:
    assert hash(t.Icon(src="a")) == hash(t.Icon(src="a"))
    assert len({t.Icon(src="a"), t.Icon(src="a"), t.Icon(src="b")}) == 2
    with pytest.raises(TypeError):
        hash(t.Icon(src="a", sizes=["16x16"]))  # a list inside: unhashable, as with attrs


def test_repr_names_the_class_and_every_attribute() -> None:
    assert repr(t.Icon(src="a", theme="dark")) == (
        "Icon(src='a', mime_type=None, sizes=None, theme='dark')"
    )


def test_models_stay_slotted() -> None:
    with pytest.raises(AttributeError):
        t.Icon(src="a").__dict__  # noqa: B018
