"""Typed readers for iallocator JSON with errors that name the bad key."""

from __future__ import annotations

import json
from collections.abc import Mapping

from herd.errors import MalformedRequest


def fail(where: str, message: str) -> MalformedRequest:
    return MalformedRequest(f"{where}: {message}", field=where)


def require(obj: Mapping[str, object], key: str, where: str) -> object:
    if key not in obj:
        present = ", ".join(sorted(obj)) or "nothing"
        raise fail(where, f"key '{key}' not found, object contains only [{present}]")
    return obj[key]


def as_dict(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise fail(where, f"Unable to read JSObject (got {type(value).__name__})")
    return value


def as_list(value: object, where: str) -> list[object]:
    if not isinstance(value, list):
        raise fail(where, f"Unable to read list (got {type(value).__name__})")
    return value


def as_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise fail(where, f"Unable to read String (got {json.dumps(value)})")
    return value


def as_num(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(where, f"Unable to read number (got {json.dumps(value)})")
    return float(value)


def as_int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(where, f"Unable to read Int (got {json.dumps(value)})")
    return int(value)


def as_bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise fail(where, f"Unable to read Bool (got {json.dumps(value)})")
    return value


def as_strs(value: object, where: str) -> tuple[str, ...]:
    return tuple(as_str(item, f"{where}[{i}]") for i, item in enumerate(as_list(value, where)))


def optional(obj: Mapping[str, object], key: str, default: object) -> object:
    value = obj.get(key, default)
    return default if value is None else value


def load_json(text: str) -> dict[str, object]:
    """Decode the request text into a dict.

    Raises:
        MalformedRequest: the text is not JSON or not a JSON object.
    """
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise MalformedRequest(f"Parsing input IAllocator message: Invalid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise MalformedRequest("invalid iallocator message: Unable to read JSObject")
    return value
