"""Helpers for statements over many rows at once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

T = TypeVar("T")

#: Ids per ``IN (...)`` list: under SQLite's and PostgreSQL's bound-parameter limits.
IN_CHUNK = 5_000


def chunked(items: Iterable[T], size: int = IN_CHUNK) -> Iterator[list[T]]:
    """``items`` in lists of at most ``size``."""
    source = iter(items)
    while chunk := list(islice(source, size)):
        yield chunk
