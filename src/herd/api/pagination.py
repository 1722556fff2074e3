"""List parameters as Senlin has them: limit, marker, sort, filters, global_project.

Paging is keyset paging on the sort keys plus ``id``; nullable sort columns
are compared through ``COALESCE`` so SQLite and PostgreSQL order them alike.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, false, func, or_
from sqlalchemy.orm import InstrumentedAttribute, Session
from starlette.datastructures import QueryParams

from herd.domain.values import parse_bool as parse_bool_word
from herd.errors import InvalidRequest
from herd.store.lookup import Scope


def invalid_value(name: str, value: Any) -> InvalidRequest:
    return InvalidRequest(f"Invalid value '{value}' specified for '{name}'", field=name)


def parse_bool(name: str, value: str) -> bool:
    """A boolean query parameter (the words of ``herd.domain.values``)."""
    parsed = parse_bool_word(value)
    if parsed is None:
        raise invalid_value(name, value)
    return parsed


@dataclass(frozen=True)
class ListSpec:
    """What one resource's list accepts."""

    model: Any
    sort_keys: Mapping[str, InstrumentedAttribute[Any]]
    default_sort: Sequence[str]
    filters: Mapping[str, InstrumentedAttribute[Any]] = field(default_factory=dict)
    bool_filters: frozenset[str] = frozenset()
    #: accepted and handled by the router (or ignored), e.g. ``show_details``
    extra: frozenset[str] = frozenset()
    has_project: bool = True


@dataclass
class ListParams:
    limit: int | None = None
    marker: str | None = None
    sort: list[tuple[str, bool]] = field(default_factory=list)  # (key, descending)
    filters: dict[str, list[Any]] = field(default_factory=dict)
    global_project: bool = False
    extra: dict[str, str] = field(default_factory=dict)


COMMON = ("limit", "marker", "sort", "global_project")
MAX_LIMIT = 2**31 - 1


def openapi_parameters(spec: ListSpec) -> dict[str, Any]:
    """The list's query parameters for ``/openapi.json`` (``openapi_extra`` of its route).

    The endpoints read the query string themselves (:func:`parse`, with Senlin's texts), so
    FastAPI cannot see these; declaring them lets ``/docs`` and the fuzzing tests use them.
    """
    keys = "|".join(sorted(spec.sort_keys))
    sort_item = f"({keys})(:(asc|desc))?"

    def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
        return {
            "name": name,
            "in": "query",
            "required": False,
            "schema": schema,
            "description": description,
        }

    parameters = [
        query(
            "limit",
            {"type": "integer", "minimum": 0, "maximum": MAX_LIMIT},
            "At most this many items.",
        ),
        query("marker", {"type": "string"}, "The id of the last item of the previous page."),
        query(
            "sort",
            {"type": "string", "pattern": f"^{sort_item}(,{sort_item})*$"},
            "Sort keys, each with an optional direction: key[:asc|desc],...",
        ),
        query("global_project", {"type": "boolean"}, "Every project (admins and agents)."),
    ]
    for name in spec.filters:
        kind = "boolean" if name in spec.bool_filters else "string"
        parameters.append(query(name, {"type": kind}, f"Only items whose {name} matches."))
    for name in sorted(spec.extra):
        parameters.append(query(name, {"type": "string"}, f"{name} (see docs/api.md)."))
    return {"parameters": parameters}


def parse(params: QueryParams, spec: ListSpec) -> ListParams:
    """Validate the query string against ``spec`` with Senlin's texts."""
    allowed = set(COMMON) | set(spec.filters) | set(spec.extra)
    for key in params:
        if key not in allowed:
            raise InvalidRequest(f"Invalid parameter {key}", field=key)
    result = ListParams()
    if "limit" in params:
        raw = params["limit"]
        try:
            limit = int(raw)
        except ValueError:
            raise InvalidRequest(
                f"The value for limit must be an integer: '{raw}'.", field="limit"
            ) from None
        if limit < 0:
            raise InvalidRequest("Value must be >= 0 for field 'limit'.", field="limit")
        if limit > MAX_LIMIT:
            # Past 64 bits neither store takes it (a 500 before); no list is that long.
            raise InvalidRequest(f"Value must be <= {MAX_LIMIT} for field 'limit'.", field="limit")
        result.limit = limit
    if "marker" in params:
        result.marker = params["marker"]
    if "sort" in params:
        result.sort = parse_sort(params["sort"], spec)
    if "global_project" in params:
        result.global_project = parse_bool("global_project", params["global_project"])
    for name in spec.filters:
        values = [v for v in params.getlist(name) if v != ""]
        if not values:
            continue
        if name in spec.bool_filters:
            result.filters[name] = [parse_bool(name, v) for v in values]
        else:
            result.filters[name] = values
    for name in spec.extra:
        if name in params:
            result.extra[name] = params[name]
    return result


def parse_sort(value: str, spec: ListSpec) -> list[tuple[str, bool]]:
    keys: list[tuple[str, bool]] = []
    for item in value.split(","):
        key, _, direction = item.strip().partition(":")
        if not key or key not in spec.sort_keys:
            raise invalid_value("sort key", key)
        if direction and direction not in ("asc", "desc"):
            raise invalid_value("sort dir", direction)
        keys.append((key, direction == "desc"))
    return keys


def _sortable(column: InstrumentedAttribute[Any]) -> ColumnElement[Any]:
    """The column as it is ordered and compared: NULLs become a neutral value."""
    python_type: type[Any] = str
    with contextlib.suppress(NotImplementedError):
        python_type = column.type.python_type
    if not column.nullable:
        return column  # type: ignore[return-value]
    default: Any = "" if python_type is str else 0
    if python_type is bool:
        default = False
    return func.coalesce(column, default)


def _python_value(row: Any, column: InstrumentedAttribute[Any]) -> Any:
    value = getattr(row, column.key)
    if value is None:
        python_type: type[Any] = str
        with contextlib.suppress(NotImplementedError):
            python_type = column.type.python_type
        return "" if python_type is str else (False if python_type is bool else 0)
    return value


def apply(
    session: Session,
    query: Select[Any],
    spec: ListSpec,
    params: ListParams,
    scope: Scope | None,
) -> list[Any]:
    """Filter, order and page ``query`` (which selects ``spec.model``)."""
    return list(session.scalars(page(session, query, spec, params, scope)).all())


def page(
    session: Session,
    query: Select[Any],
    spec: ListSpec,
    params: ListParams,
    scope: Scope | None,
) -> Select[Any]:
    """``query`` filtered, ordered and paged; it may select columns of ``spec.model``."""
    model = spec.model
    if scope is not None and spec.has_project:
        query = scope.apply(query, model)
    for name, values in params.filters.items():
        column = spec.filters[name]
        query = (
            query.where(column == values[0])
            if len(values) == 1
            else query.where(column.in_(values))
        )
    keys = params.sort or [(key, False) for key in spec.default_sort]
    columns = [(spec.sort_keys[key], desc) for key, desc in keys]
    columns.append((model.id, columns[-1][1] if columns else False))
    if params.marker is not None:
        marker_row = session.get(model, params.marker)
        if marker_row is None or (
            scope is not None and spec.has_project and not _visible(marker_row, scope)
        ):
            raise invalid_value("marker", params.marker)
        query = query.where(_after(marker_row, columns))
    query = query.order_by(
        *[(_sortable(c).desc() if desc else _sortable(c).asc()) for c, desc in columns]
    )
    if params.limit is not None:
        query = query.limit(params.limit)
    return query


def _visible(row: Any, scope: Scope) -> bool:
    return scope.all_projects or row.project == scope.project


def _after(
    marker_row: Any, columns: list[tuple[InstrumentedAttribute[Any], bool]]
) -> ColumnElement[bool]:
    """Rows strictly after the marker in the (mixed-direction) sort order."""
    clauses: list[ColumnElement[bool]] = []
    for i, (column, desc) in enumerate(columns):
        equal = [_sortable(c) == _python_value(marker_row, c) for c, _ in columns[:i]]
        value = _python_value(marker_row, column)
        beyond = _sortable(column) < value if desc else _sortable(column) > value
        clauses.append(and_(*equal, beyond))
    return or_(*clauses) if clauses else false()
