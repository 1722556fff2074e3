"""Keyset paging as Senlin's lists have it: filters, a mixed-direction sort, marker, limit.

Paging is on the sort keys plus ``id``; nullable sort columns are compared
through ``COALESCE`` so SQLite and PostgreSQL order them alike. The API parses
the query string (``api/pagination.py``) and hands the columns here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, false, func, literal, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from herd.errors import InvalidRequest
from herd.store.enum_text import equal_to_any
from herd.store.lookup import Scope

#: a mapped column a list sorts or filters on
Column = InstrumentedAttribute[Any]


def _neutral(column: Column) -> str | int | bool:
    python_type: type[object] = str
    with contextlib.suppress(NotImplementedError):
        python_type = column.type.python_type
    if python_type is bool:
        return False
    return "" if python_type is str else 0


def _sortable(column: Column) -> ColumnElement[Any]:
    """The column as it is ordered and compared: NULLs become a neutral value."""
    if not column.nullable:
        return column  # type: ignore[return-value]
    return func.coalesce(column, _neutral(column))


def _python_value(row: object, column: Column) -> object:
    value = getattr(row, column.key)
    return _neutral(column) if value is None else value


def _after(marker_row: object, columns: Sequence[tuple[Column, bool]]) -> ColumnElement[bool]:
    """Rows strictly after the marker in the (mixed-direction) sort order."""
    clauses: list[ColumnElement[bool]] = []
    for i, (column, desc) in enumerate(columns):
        equal = [_sortable(c) == _python_value(marker_row, c) for c, _ in columns[:i]]
        value: object = _python_value(marker_row, column)
        if isinstance(value, bool):
            # SQLAlchemy takes only == and != with a bare True/False (a boolean sort key,
            # a binding's ``enabled``, with a marker was a 500); false sorts before true
            value = literal(value, column.type)
        beyond = _sortable(column) < value if desc else _sortable(column) > value
        clauses.append(and_(*equal, beyond))
    return or_(*clauses) if clauses else false()


def _marker_row(session: Session, model: Any, marker: str, scope: Scope | None) -> object:
    """The row ``marker`` names: its full id or, as the CLI's tables print it, a unique prefix."""
    row = session.get(model, marker)
    if row is None and 0 < len(marker) < 36:
        prefix = select(model).where(model.id.startswith(marker, autoescape=True))
        if scope is not None:
            prefix = scope.apply(prefix, model)
        found = session.scalars(prefix.limit(2)).all()
        row = found[0] if len(found) == 1 else None
    if row is None or (
        scope is not None and not scope.all_projects and row.project != scope.project
    ):
        raise InvalidRequest(f"Invalid value '{marker}' specified for 'marker'", field="marker")
    return row


def page(
    session: Session,
    query: Select[Any],
    model: Any,
    *,
    filters: Mapping[Column, Sequence[object]],
    order: Sequence[tuple[Column, bool]],
    marker: str | None,
    limit: int | None,
    scope: Scope | None,
) -> Select[Any]:
    """``query`` (selecting ``model`` or its columns) filtered, ordered by ``order`` (column,
    descending) then id, and starting after the row ``marker`` (which ``scope`` must see)."""
    if scope is not None:
        query = scope.apply(query, model)
    for column, values in filters.items():
        query = query.where(equal_to_any(column, values))
    columns = [*order, (model.id, order[-1][1] if order else False)]
    if marker is not None:
        query = query.where(_after(_marker_row(session, model, marker, scope), columns))
    query = query.order_by(
        *[(_sortable(c).desc() if desc else _sortable(c).asc()) for c, desc in columns]
    )
    if limit is not None:
        query = query.limit(limit)
    return query


def rows(session: Session, query: Select[Any]) -> list[Any]:
    """The ORM rows a paged query selects."""
    return list(session.scalars(query).all())
