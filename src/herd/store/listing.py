"""The queries lists start from (the API adds scope, filters, order and paging to them)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, or_, select, text

from herd.store.models import ClusterRow, NodeRow


def select_rows(model: type[Any], *where: ColumnElement[bool]) -> Select[Any]:
    """Every row of ``model`` matching ``where``."""
    return select(model).where(*where)


def spans_region(is_sqlite: bool, region: str) -> ColumnElement[bool]:
    """Clusters with a member placed in ``region`` or with it in ``data['regions']``."""
    member_region = NodeRow.data[("placement", "region_name")].as_string()
    has_member = ClusterRow.id.in_(
        select(NodeRow.cluster_id).where(member_region == region, NodeRow.cluster_id.is_not(None))
    )
    # JSON list membership has no portable SQL; each dialect gets its own clause.
    if is_sqlite:
        recorded = text(
            "EXISTS (SELECT 1 FROM json_each(clusters.data, '$.regions') AS r "
            "WHERE r.value = :region_name)"
        )
    else:
        recorded = text(
            "(CAST(clusters.data AS jsonb) -> 'regions') "
            "@> jsonb_build_array(CAST(:region_name AS text))"
        )
    recorded = recorded.bindparams(bindparam("region_name", region))
    return or_(has_member, recorded)
