"""Responses serialised once, by orjson.

A handler that returns a dict has FastAPI walk it with ``jsonable_encoder`` and then
``json.dumps`` it: two passes in Python over every value, which for a page of 1,000 nodes
costs more than the query. The hot endpoints build plain JSON values themselves and return
:class:`JSONBody`, which orjson encodes in one pass in C. orjson refuses integers beyond
64 bits (a JSON column may hold one); those bodies fall back to the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import orjson
from starlette.background import BackgroundTask
from starlette.responses import Response


def dumps(content: object) -> bytes:
    """``content`` as compact UTF-8 JSON, as Starlette's JSONResponse writes it."""
    try:
        return orjson.dumps(content)
    except TypeError:
        # Integers beyond 64 bits (orjson's only gap for decoded JSON values).
        return json.dumps(
            content, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        ).encode("utf-8")


class JSONBody(Response):
    """A JSON response whose body is encoded once, by :func:`dumps`."""

    media_type = "application/json"

    def __init__(
        self,
        content: object,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        super().__init__(content, status_code, headers, self.media_type, background)

    def render(self, content: object) -> bytes:
        return dumps(content)
