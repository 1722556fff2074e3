"""List parameters as Senlin has them: limit, marker, sort, filters, global_project.

The query string is parsed here, with Senlin's texts; the keyset paging itself is
``store/paging.py``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import QueryParams

from herd.domain.values import parse_bool as parse_bool_word
from herd.errors import InvalidRequest
from herd.store import paging
from herd.store.database import Session
from herd.store.listing import Query
from herd.store.lookup import Scope
from herd.store.models import Base
from herd.store.paging import Column


@dataclass(frozen=True)
class OneOf:
    """A filter check: the value is one of ``values`` (an enum's); ``/openapi.json`` lists them."""

    values: tuple[str, ...]

    def __call__(self, value: str) -> bool:
        return value in self.values


@dataclass(frozen=True)
class Matches:
    """A filter check: the value matches ``pattern`` whole; ``/openapi.json`` states it."""

    pattern: re.Pattern[str]

    def __call__(self, value: str) -> bool:
        return self.pattern.fullmatch(value) is not None


def one_of(values: Iterable[str]) -> OneOf:
    """A filter check: the value is one of ``values`` (an enum's)."""
    return OneOf(tuple(values))


def invalid_value(name: str, value: object) -> InvalidRequest:
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

    model: type[Base]
    sort_keys: Mapping[str, Column]
    default_sort: Sequence[str]
    filters: Mapping[str, Column] = field(default_factory=dict)
    bool_filters: frozenset[str] = frozenset()
    #: accepted and handled by the router (or ignored), e.g. ``show_details``
    extra: frozenset[str] = frozenset()
    #: the text for an unknown query parameter (Senlin quoted the name for clusters only)
    invalid_parameter: str = "Invalid parameter {key}"
    #: filters whose values are checked: a value the check refuses is a 400 (Senlin's
    #: enum fields, ``Field value <v> is invalid``), not an empty list
    valid: Mapping[str, Callable[[str], bool]] = field(default_factory=dict)
    has_project: bool = True


@dataclass
class ListParams:
    limit: int | None = None
    marker: str | None = None
    sort: list[tuple[str, bool]] = field(default_factory=list)  # (key, descending)
    filters: dict[str, Sequence[object]] = field(default_factory=dict)
    global_project: bool = False
    extra: dict[str, str] = field(default_factory=dict)


COMMON = ("limit", "marker", "sort", "global_project")
MAX_LIMIT = 2**31 - 1
#: the ``extra`` parameters the routers read as booleans (:func:`parse_bool`)
BOOLEAN_EXTRAS = frozenset({"show_details", "show_nodes", "summary"})
#: what :func:`parse_marker` takes: a UUID (any case, braces or not) or an 8+ hex digit prefix
MARKER_PATTERN = (
    r"^([0-9a-f]{8}[0-9a-f-]{0,27}"
    r"|\{?[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\}?)$"
)


def _filter_schema(spec: ListSpec, name: str) -> dict[str, object]:
    # an empty value is no filter (parse skips it, as Senlin did): the document allows it
    if name in spec.bool_filters:
        return {"type": "boolean"}
    check = spec.valid.get(name)
    if isinstance(check, OneOf):
        return {"type": "string", "enum": ["", *check.values]}
    if isinstance(check, Matches):
        return {"type": "string", "pattern": f"^({check.pattern.pattern})?$"}
    return {"type": "string"}


def openapi_parameters(spec: ListSpec) -> dict[str, object]:
    """The list's query parameters for ``/openapi.json`` (``openapi_extra`` of its route).

    The endpoints read the query string themselves (:func:`parse`, with Senlin's texts), so
    FastAPI cannot see these; declaring them lets ``/docs`` and the fuzzing tests use them.
    """
    keys = "|".join(sorted(spec.sort_keys))
    sort_item = f"({keys})(:(asc|desc))?"

    def query(name: str, schema: dict[str, object], description: str) -> dict[str, object]:
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
        query(
            "marker",
            {"type": "string", "pattern": MARKER_PATTERN},
            "The id (or a unique 8+ digit prefix) of the last item of the previous page; "
            "it must name an item of the list (400 otherwise).",
        ),
        query(
            "sort",
            {"type": "string", "pattern": f"^{sort_item}(,{sort_item})*$"},
            "Sort keys, each with an optional direction: key[:asc|desc],...",
        ),
        query("global_project", {"type": "boolean"}, "Every project (admins and agents)."),
    ]
    for name in spec.filters:
        parameters.append(
            query(name, _filter_schema(spec, name), f"Only items whose {name} matches.")
        )
    for name in sorted(spec.extra):
        kind = "boolean" if name in BOOLEAN_EXTRAS else "string"
        parameters.append(query(name, {"type": kind}, f"{name} (see docs/api.md)."))
    return {"parameters": parameters}


def parse(params: QueryParams, spec: ListSpec) -> ListParams:
    """Validate the query string against ``spec`` with Senlin's texts."""
    allowed = set(COMMON) | set(spec.filters) | set(spec.extra)
    for key in params:
        if key not in allowed:
            raise InvalidRequest(spec.invalid_parameter.format(key=key), field=key)
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
        result.marker = parse_marker(params["marker"])
    if "sort" in params:
        result.sort = parse_sort(params["sort"], spec)
    if "global_project" in params:
        result.global_project = parse_bool("global_project", params["global_project"])
    for name in spec.filters:
        values = [v for v in params.getlist(name) if v != ""]
        if not values:
            continue
        check = spec.valid.get(name)
        bad = [v for v in values if check is not None and not check(v)]
        if bad:
            raise InvalidRequest(f"Field value {bad[0]} is invalid", field=name)
        if name in spec.bool_filters:
            result.filters[name] = [parse_bool(name, v) for v in values]
        else:
            result.filters[name] = values
    for name in spec.extra:
        if name in params:
            result.extra[name] = params[name]
    return result


#: the start of a UUID, as herd's tables print ids (8 hex digits or more): herd's addition
_ID_PREFIX = re.compile(r"[0-9a-f]{8}[0-9a-f-]{0,27}")


def parse_marker(value: str) -> str:
    """A marker is an id: Senlin refuses anything but a UUID before it looks it up. herd also
    takes the short id its tables print (a unique prefix, resolved by store/paging.py)."""
    if _ID_PREFIX.fullmatch(value):
        return value
    try:
        uuid.UUID(value)
    except ValueError:
        raise InvalidRequest(
            f"The value for marker is not a valid UUID: '{value}'.", field="marker"
        ) from None
    return value


def parse_sort(value: str, spec: ListSpec) -> list[tuple[str, bool]]:
    """``key[:asc|desc],...`` with Senlin's texts (a bad direction is named before a bad key,
    as Senlin's ``Sort`` field does)."""
    keys: list[tuple[str, bool]] = []
    for item in value.split(","):
        key, _, direction = item.strip().partition(":")
        if not key:
            raise InvalidRequest("Missing sort key for 'sort'.", field="sort")
        if direction and direction not in ("asc", "desc"):
            raise InvalidRequest(f"Unsupported sort dir '{direction}' for 'sort'.", field="sort")
        if key not in spec.sort_keys:
            raise InvalidRequest(f"Unsupported sort key '{key}' for 'sort'.", field="sort")
        keys.append((key, direction == "desc"))
    return keys


def apply(
    session: Session,
    query: Query,
    spec: ListSpec,
    params: ListParams,
    scope: Scope | None,
) -> list[Any]:
    """Filter, order and page ``query`` (which selects ``spec.model``)."""
    return paging.rows(session, page(session, query, spec, params, scope))


def page(
    session: Session,
    query: Query,
    spec: ListSpec,
    params: ListParams,
    scope: Scope | None,
) -> Query:
    """``query`` filtered, ordered and paged; it may select columns of ``spec.model``."""
    keys = params.sort or [(key, False) for key in spec.default_sort]
    return paging.page(
        session,
        query,
        spec.model,
        filters={spec.filters[name]: values for name, values in params.filters.items()},
        order=[(spec.sort_keys[key], desc) for key, desc in keys],
        marker=params.marker,
        limit=params.limit,
        scope=scope if spec.has_project else None,
    )
