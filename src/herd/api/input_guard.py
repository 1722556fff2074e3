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

import math
import re
from collections.abc import Iterator
from typing import Any

from fastapi import Request

from herd.errors import InvalidRequest

NUL = "\x00"
SURROGATE = re.compile("[\ud800-\udfff]")


def _problem(value: Any) -> str | None:
    if isinstance(value, str) and NUL in value:
        return "NUL characters (\\u0000) are not allowed"
    if isinstance(value, str) and SURROGATE.search(value) is not None:
        return "lone UTF-16 surrogates (\\ud800-\\udfff) are not characters"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN and Infinity are not numbers JSON can carry"
    return None


def _printable(path: str) -> str:
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    problem = _problem(value)
    if problem is not None:
        yield path, problem
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            key_problem = _problem(key)
            if key_problem is not None:  # the path names the key, escaped (it is no text)
                yield _printable(child), key_problem
            else:
                yield from _walk(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]" if path else f"[{index}]")


def check_json(value: Any, where: str = "") -> None:
    """Raise InvalidRequest for the first value of a decoded body no store can hold."""
    for path, problem in _walk(value, where):
        raise InvalidRequest(f"Invalid value for '{path or 'body'}': {problem}.", field=path)


async def check_parameters(request: Request) -> None:
    """App-wide dependency: no path or query parameter may carry a NUL character."""
    for name, value in (*request.path_params.items(), *request.query_params.multi_items()):
        problem = _problem(value) or _problem(name)
        if problem is not None:
            raise InvalidRequest(f"Invalid value for '{name}': {problem}.", field=name)
