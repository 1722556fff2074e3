"""Rows straight from the database driver's cursor, for the few hot reads where
SQLAlchemy's result handling costs more than the database.

A decision after another process changed 1% of a 100,000-member cluster reads the
cluster row and the logged changes: SQLAlchemy's statement cache lookup, parameter
handling and ``Row`` objects cost more than SQLite's own work on them (issue 28).
Here a Core statement is compiled once per dialect, its SQL text executed on the
caller's connection (so inside its transaction, seeing what its other statements see,
and through the engine's events: what watches statements still sees it), and its rows
fetched from the DBAPI cursor as the driver makes them.

Only for statements whose columns need no result processing (strings, numbers: no
JSON, no enums, no dates) and whose bound values need no bind processing: what the
driver returns is what the caller gets.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.sql import Select

#: (statement, dialect name) -> the SQL text, the bound values' order (None: by name) and
#: the values the statement itself bound (its literals)
_Compiled = tuple[str, tuple[str, ...] | None, dict[str, Any]]
#: any select, whatever its columns
AnySelect = Select[*tuple[Any, ...]]
_compiled: dict[tuple[int, str], tuple[AnySelect, _Compiled]] = {}
_lock = threading.Lock()


def _compile(connection: Connection, statement: AnySelect) -> _Compiled:
    key = (id(statement), connection.dialect.name)
    held = _compiled.get(key)
    if held is not None and held[0] is statement:
        return held[1]
    compiled = statement.compile(dialect=connection.dialect)
    order = compiled.positiontup
    entry = (str(compiled), tuple(order) if order is not None else None, dict(compiled.params))
    with _lock:
        # The statement is kept too: its id stays its own while it is held.
        _compiled[key] = (statement, entry)
    return entry


def driver_rows(
    connection: Connection, statement: AnySelect, values: Mapping[str, object]
) -> list[tuple[Any, ...]]:
    """The rows of ``statement`` with these bound ``values``, as the driver returns them.

    ``statement`` should be built once (``functools.cache``): its SQL text is kept per
    dialect.
    """
    sql, order, bound = _compile(connection, statement)
    params: Mapping[str, object] = {**bound, **values} if bound else values
    positional = tuple(params[name] for name in order) if order is not None else params
    result = connection.exec_driver_sql(sql, positional)
    try:
        rows = list(result.cursor.fetchall())
    finally:
        result.close()
    return rows
