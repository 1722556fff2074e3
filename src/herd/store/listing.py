"""The queries lists start from (the API adds scope, filters, order and paging to them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Boolean, ColumnElement, Select, bindparam, or_, select, text
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler

from herd.store.models import ClusterRow, NodeRow

#: a list's query and one of its WHERE clauses, as the API passes them around
Query = Select[Any]
Clause = ColumnElement[bool]


def select_rows(model: type[Any], *where: ColumnElement[bool]) -> Select[Any]:
    """Every row of ``model`` matching ``where``."""
    return select(model).where(*where)


class _RegionRecorded(ColumnElement[bool]):
    """``clusters.data['regions']`` lists the region: JSON list membership has no portable
    SQL, so each dialect compiles its own clause (below)."""

    inherit_cache = False  # a rare filter (regional agents); not worth a cache key
    type = Boolean()

    def __init__(self, region: str) -> None:
        self.region = region


@compiles(_RegionRecorded, "sqlite")
def _region_recorded_sqlite(element: _RegionRecorded, compiler: SQLCompiler, **kw: object) -> str:
    clause = text(
        "EXISTS (SELECT 1 FROM json_each(clusters.data, '$.regions') AS r "
        "WHERE r.value = :region_name)"
    ).bindparams(bindparam("region_name", element.region, unique=True))
    return str(compiler.process(clause, **kw))


@compiles(_RegionRecorded)
def _region_recorded_postgresql(
    element: _RegionRecorded, compiler: SQLCompiler, **kw: object
) -> str:
    clause = text(
        "(CAST(clusters.data AS jsonb) -> 'regions') "
        "@> jsonb_build_array(CAST(:region_name AS text))"
    ).bindparams(bindparam("region_name", element.region, unique=True))
    return str(compiler.process(clause, **kw))


def spans_region(region: str) -> ColumnElement[bool]:
    """Clusters with a member placed in ``region`` or with it in ``data['regions']``."""
    member_region = NodeRow.data[("placement", "region_name")].as_string()
    has_member = ClusterRow.id.in_(
        select(NodeRow.cluster_id).where(member_region == region, NodeRow.cluster_id.is_not(None))
    )
    return or_(has_member, _RegionRecorded(region))


def spans_any_region(regions: Sequence[str]) -> ColumnElement[bool]:
    """Clusters spanning one of ``regions`` (what a regional agent token may read)."""
    return or_(*(spans_region(region) for region in regions))
