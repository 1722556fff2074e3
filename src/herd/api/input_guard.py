"""Input that no store can hold is a 400 naming the field, before any query sees it.

A lone UTF-16 surrogate (``"\\ud800"`` in JSON) is not a character: Python decodes it into
a string no UTF-8 encoder takes, so it used to be stored (SQLite) and then fail every read
of the row, or fail the write (PostgreSQL). It is refused here like NUL.

PostgreSQL refuses NUL characters in text (``PostgreSQL text fields cannot contain NUL
(0x00) bytes``) and NaN or Infinity in JSON, and both stores refuse integers past 64 bits.
Such a value in a path, a query string or a body used to reach the database and come back
as a 500 (the fuzzing tests found them). This module refuses them at the door: an app-wide
dependency checks every path and query parameter, and :func:`herd.api.schemas.base.parse_body`
checks every body, so a new endpoint is covered without doing anything.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

from fastapi import Request

from herd.config import Settings
from herd.errors import InvalidRequest

NUL = "\x00"
SURROGATE = re.compile("[\ud800-\udfff]")


def _problem(value: object) -> str | None:
    if isinstance(value, str) and NUL in value:
        return "NUL characters (\\u0000) are not allowed"
    if isinstance(value, str) and SURROGATE.search(value) is not None:
        return "lone UTF-16 surrogates (\\ud800-\\udfff) are not characters"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN and Infinity are not numbers JSON can carry"
    return None


def _printable(path: str) -> str:
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True, slots=True)
class MetadataLimits:
    """How much a ``metadata`` map in a body may hold (settings ``max_metadata_*``)."""

    keys: int = 256
    key_length: int = 255
    value_bytes: int = 65536

    @classmethod
    def from_settings(cls, settings: Settings) -> MetadataLimits:
        return cls(
            settings.max_metadata_keys,
            settings.max_metadata_key_length,
            settings.max_metadata_value_bytes,
        )


#: the limits of the request being served (set by api/limits.py from the settings)
METADATA_LIMITS: ContextVar[MetadataLimits | None] = ContextVar(
    "herd_metadata_limits", default=None
)
DEFAULT_METADATA_LIMITS = MetadataLimits()


def _metadata_problems(metadata: Mapping[object, object], path: str) -> Iterator[tuple[str, str]]:
    limits = METADATA_LIMITS.get() or DEFAULT_METADATA_LIMITS
    if len(metadata) > limits.keys:
        yield path, f"more than {limits.keys} keys (max_metadata_keys)"
        return
    for key, item in metadata.items():
        if len(str(key)) > limits.key_length:
            yield (
                path,
                (f"a key is longer than {limits.key_length} characters (max_metadata_key_length)"),
            )
            return
        size = len(json.dumps(item, ensure_ascii=False, default=str).encode("utf-8", "replace"))
        if size > limits.value_bytes:
            yield (
                f"{path}.{key}",
                (
                    f"the value is larger than {limits.value_bytes} bytes as JSON "
                    "(max_metadata_value_bytes)"
                ),
            )
            return


def _walk(value: object, path: str) -> Iterator[tuple[str, str]]:
    problem = _problem(value)
    if problem is not None:
        yield path, problem
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            key_problem = _problem(key)
            if key_problem is not None:  # the path names the key, escaped (it is no text)
                yield _printable(child), key_problem
                continue
            found = list(_walk(item, child))
            if not found and key in ("metadata", "meta") and isinstance(item, dict):
                found = list(_metadata_problems(item, child))
            yield from found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]" if path else f"[{index}]")


def check_json(value: object, where: str = "") -> None:
    """Raise InvalidRequest for the first value of a decoded body no store can hold."""
    for path, problem in _walk(value, where):
        raise InvalidRequest(f"Invalid value for '{path or 'body'}': {problem}.", field=path)


async def check_parameters(request: Request) -> None:
    """App-wide dependency: no path or query parameter may carry a NUL character."""
    # Without a query string there is nothing to parse (most calls: a mark, a read by id).
    query = request.query_params.multi_items() if request.scope.get("query_string") else ()
    for name, value in (*request.path_params.items(), *query):
        problem = _problem(value) or _problem(name)
        if problem is not None:
            raise InvalidRequest(f"Invalid value for '{name}': {problem}.", field=name)
