"""Helpers for statements over many rows at once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from itertools import islice
from typing import Any, TypeVar

from sqlalchemy import Table, bindparam, inspect
from sqlalchemy.orm import Session

from herd.store.models import Base

T = TypeVar("T")

#: Ids per ``IN (...)`` list: under SQLite's and PostgreSQL's bound-parameter limits.
IN_CHUNK = 5_000


def chunked(items: Iterable[T], size: int = IN_CHUNK) -> Iterator[list[T]]:
    """``items`` in lists of at most ``size``."""
    source = iter(items)
    while chunk := list(islice(source, size)):
        yield chunk


@cache
def _column_keys(model: type[Base]) -> dict[str, str]:
    """ORM attribute name -> table column key (``meta_data`` is the column ``metadata``)."""
    return {attr.key: attr.columns[0].key for attr in inspect(model).column_attrs}


def _rename(model: type[Base], row: Mapping[str, Any]) -> dict[str, Any]:
    keys = _column_keys(model)
    return {keys[name]: value for name, value in row.items()}


def insert_rows(session: Session, model: type[Base], rows: Sequence[Mapping[str, Any]]) -> None:
    """INSERT ``rows`` (keyed by attribute name, all with the same keys) in one executemany.

    Core on the session's connection: the ORM's bulk insert cost more than the
    statement for tens of thousands of rows.
    """
    if rows:
        table = model.__table__
        session.connection().execute(table.insert(), [_rename(model, row) for row in rows])  # type: ignore[attr-defined]


def update_rows(session: Session, model: type[Base], rows: Sequence[Mapping[str, Any]]) -> None:
    """UPDATE rows by ``id`` (each row: ``id`` plus the same attributes) in one executemany."""
    if not rows:
        return
    table: Table = model.__table__  # type: ignore[assignment]
    keys = _column_keys(model)
    names = [name for name in rows[0] if name != "id"]
    statement = (
        table.update()
        .where(table.c.id == bindparam("row_id"))
        .values({keys[name]: bindparam(f"new_{name}") for name in names})
    )
    params = [{"row_id": row["id"]} | {f"new_{n}": row[n] for n in names} for row in rows]
    session.connection().execute(statement, params)
