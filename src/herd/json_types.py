"""JSON values as types, and the narrowing helpers code uses to read nested specs.

This module is a leaf (it imports nothing from herd). Specs, action inputs and
outputs, driver results and stored ``data`` columns are JSON: ``JsonValue`` says
so precisely (mypy checks the recursive alias), where an untyped value would
switch the checking off. Code that reads a nested value narrows it with
``isinstance`` or with the helpers below: the ``*_at`` readers return the value
when it has the expected shape and a fallback otherwise (a reader of validated
data gets the value; a reader of untrusted data decides what a wrong shape
means); ``int_value``, ``float_value`` and ``dig`` raise as ``int()``,
``float()`` and indexing would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import SupportsFloat, SupportsIndex, SupportsInt

JsonScalar = str | int | float | bool | None
JsonValue = JsonScalar | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject = dict[str, JsonValue]
JsonList = list[JsonValue]


def dig(value: object, *path: str | int) -> object:
    """``value[path[0]][path[1]]...`` through mappings and lists, typed ``object``.

    Raises KeyError, IndexError or TypeError as the indexing itself would.
    """
    for step in path:
        if isinstance(value, Sequence) and not isinstance(value, str) and isinstance(step, int):
            value = value[step]
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"cannot index {type(value).__name__} with {step!r}")
        value = value[step]
    return value


def object_at(mapping: Mapping[str, object], key: str) -> Mapping[str, object]:
    """``mapping[key]`` when it is a mapping, else an empty mapping."""
    value = mapping.get(key)
    return value if isinstance(value, Mapping) else {}


def list_at(mapping: Mapping[str, object], key: str) -> Sequence[object]:
    """``mapping[key]`` when it is a list or tuple, else an empty list."""
    value = mapping.get(key)
    return value if isinstance(value, list | tuple) else []


def str_at(mapping: Mapping[str, object], key: str, default: str = "") -> str:
    """``mapping[key]`` when it is a string, else ``default``."""
    value = mapping.get(key)
    return value if isinstance(value, str) else default


def str_or_none(mapping: Mapping[str, object], key: str) -> str | None:
    """``mapping[key]`` when it is a string, else None."""
    value = mapping.get(key)
    return value if isinstance(value, str) else None


def int_or_none(mapping: Mapping[str, object], key: str) -> int | None:
    """``mapping[key]`` when it is an int (a bool is not), else None."""
    value = mapping.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number_or_none(mapping: Mapping[str, object], key: str) -> float | None:
    """``mapping[key]`` when it is an int or a float (a bool is not), else None."""
    value = mapping.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def int_value(value: object) -> int:
    """``int(value)`` for what ``int()`` takes (numbers, numeric text), else TypeError.

    The same result and errors as ``int(value)``, for a value typed ``object``.
    """
    if isinstance(value, str | bytes | bytearray | SupportsInt | SupportsIndex):
        return int(value)
    raise TypeError(f"int() argument must be a string or a number, not '{type(value).__name__}'")


def float_value(value: object) -> float:
    """``float(value)`` for what ``float()`` takes (numbers, numeric text), else TypeError."""
    if isinstance(value, str | bytes | bytearray | SupportsFloat | SupportsIndex):
        return float(value)
    kind = type(value).__name__
    raise TypeError(f"float() argument must be a string or a real number, not '{kind}'")
