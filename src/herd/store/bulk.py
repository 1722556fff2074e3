"""Helpers for statements over many rows at once.

:func:`insert_rows` and :func:`update_rows` hand the driver one ``executemany``
of a statement compiled once per table, column set and dialect, with each
column's bind processor (JSON encoding, booleans) applied by a plain loop. Going
through ``Connection.execute`` instead cost SQLAlchemy's per-row parameter
handling, which for 10,000 rows took as long as SQLite's own work (and the
index upkeep) on the same rows. The SQL and the values are what SQLAlchemy
would send: the statement is SQLAlchemy's own compilation for the dialect
(PostgreSQL's JSON casts included) and the processors are the columns' own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import islice
from typing import TypeVar

from sqlalchemy import Connection, Table, bindparam, inspect
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import ValuesBase

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


@dataclass(frozen=True)
class _Bind:
    """One bound parameter: its name, where its value comes from, and its bind processor."""

    name: str
    key: str | None  # the row's key, or None: the column's default
    default: Callable[[], object] | None
    process: Callable[[object], object] | None  # None when the driver takes the value as it is

    def value(self, row: Mapping[str, object]) -> object:
        value = row[self.key] if self.key is not None else self.default() if self.default else None
        # Processors see None too: JSON stores it as ``null``, as SQLAlchemy does.
        return value if self.process is None else self.process(value)


@dataclass(frozen=True)
class _Prepared:
    """A statement compiled for one dialect, and how to turn a row into its parameters."""

    sql: str
    binds: tuple[_Bind, ...]  # in the statement's order
    positional: bool

    def parameters(
        self, rows: Sequence[Mapping[str, object]]
    ) -> list[tuple[object, ...]] | list[dict[str, object]]:
        binds = self.binds
        if self.positional:
            return [tuple(bind.value(row) for bind in binds) for row in rows]
        return [{bind.name: bind.value(row) for bind in binds} for row in rows]


def _column_default(table: Table, name: str) -> Callable[[], object] | None:
    """The Python-side default of the column a bound parameter fills (as SQLAlchemy applies it)."""
    column = table.c.get(name)
    default = getattr(column, "default", None)
    if default is None:
        return None
    if default.is_scalar:
        value = default.arg
        return lambda: value
    if default.is_callable:
        function = default.arg
        return lambda: function(None)  # SQLAlchemy wraps it to take an (unused) context
    raise ValueError(f"{table.name}.{name}: bulk statements support scalar and callable defaults")


def _prepare(
    statement: ValuesBase, dialect: Dialect, table: Table, row_keys: Mapping[str, str]
) -> _Prepared:
    """Compile ``statement``; ``row_keys`` maps bound parameter names to the rows' keys.

    A parameter that is not in ``row_keys`` is a column SQLAlchemy fills with its
    default because the rows do not give it.
    """
    compiled = statement.compile(dialect=dialect)
    names = list(compiled.positiontup or ()) if dialect.positional else list(compiled.binds)
    binds = []
    for name in names:
        process = compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect)
        key = row_keys.get(name)
        default = _column_default(table, name) if key is None else None
        binds.append(_Bind(name, key, default, process))
    return _Prepared(compiled.string, tuple(binds), dialect.positional)


@cache
def _insert(model: type[Base], names: tuple[str, ...], dialect: Dialect) -> _Prepared:
    table: Table = model.__table__  # type: ignore[assignment]
    keys = _column_keys(model)
    statement = table.insert().values({keys[name]: bindparam(name) for name in names})
    return _prepare(statement, dialect, table, {name: name for name in names})


@cache
def _update(model: type[Base], names: tuple[str, ...], dialect: Dialect) -> _Prepared:
    table: Table = model.__table__  # type: ignore[assignment]
    keys = _column_keys(model)
    statement = (
        table.update()
        .where(table.c.id == bindparam("row_id", type_=table.c.id.type))
        .values(
            {keys[name]: bindparam(f"new_{name}", type_=table.c[keys[name]].type) for name in names}
        )
    )
    row_keys = {"row_id": "id"} | {f"new_{name}": name for name in names}
    return _prepare(statement, dialect, table, row_keys)


def _execute_many(
    connection: Connection, prepared: _Prepared, rows: Sequence[Mapping[str, object]]
) -> None:
    connection.exec_driver_sql(prepared.sql, prepared.parameters(rows))


def insert_rows(
    session: Session | Connection, model: type[Base], rows: Sequence[Mapping[str, object]]
) -> None:
    """INSERT ``rows`` (keyed by attribute name, all with the same keys) in one executemany."""
    if rows:
        connection = session.connection() if isinstance(session, Session) else session
        _execute_many(connection, _insert(model, tuple(rows[0]), connection.dialect), rows)


def update_rows(session: Session, model: type[Base], rows: Sequence[Mapping[str, object]]) -> None:
    """UPDATE rows by ``id`` (each row: ``id`` plus the same attributes) in one executemany."""
    if rows:
        connection = session.connection()
        names = tuple(name for name in rows[0] if name != "id")
        _execute_many(connection, _update(model, names, connection.dialect), rows)
