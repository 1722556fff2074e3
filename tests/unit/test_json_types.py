"""The JSON narrowing helpers: the value when it has the expected shape, else the fallback."""

from __future__ import annotations

import pytest

from herd.json_types import (
    dig,
    float_value,
    int_or_none,
    int_value,
    list_at,
    number_or_none,
    object_at,
    str_at,
    str_or_none,
)


def test_accessors_return_the_value_or_the_fallback() -> None:
    spec = {"m": {"k": 1}, "l": [1, 2], "s": "x", "i": 3, "b": True, "f": 2.5}
    assert object_at(spec, "m") == {"k": 1}
    assert object_at(spec, "l") == {}
    assert list_at(spec, "l") == [1, 2]
    assert list_at(spec, "missing") == []
    assert str_at(spec, "s") == "x"
    assert str_at(spec, "i", "d") == "d"
    assert str_or_none(spec, "i") is None
    assert int_or_none(spec, "i") == 3
    assert int_or_none(spec, "b") is None  # a bool is no count
    assert number_or_none(spec, "f") == 2.5
    assert number_or_none(spec, "s") is None


def test_int_and_float_value_behave_like_the_builtins() -> None:
    assert int_value("7") == 7
    assert int_value(7.9) == 7
    assert float_value("2.5") == 2.5
    with pytest.raises(ValueError):
        int_value("seven")
    with pytest.raises(TypeError):
        int_value(None)
    with pytest.raises(TypeError):
        float_value([1])


def test_dig_walks_maps_and_lists_and_fails_like_indexing() -> None:
    value = {"a": [{"b": 1}]}
    assert dig(value, "a", 0, "b") == 1
    with pytest.raises(KeyError):
        dig(value, "z")
    with pytest.raises(IndexError):
        dig(value, "a", 3)
    with pytest.raises(TypeError):
        dig(value, "a", 0, "b", "c")
