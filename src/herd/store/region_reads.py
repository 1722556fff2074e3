"""The reads that limit a regional agent token to its regions (``api/services/agent_regions.py``).

A node's region is ``data.placement.region_name``; a cluster spans a region when a member is
placed there or ``data['regions']`` lists it (:func:`herd.store.listing.spans_region`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.store.listing import spans_any_region
from herd.store.models import ClusterRow, NodeRow


def cluster_spans(session: Session, cluster_id: str, regions: Sequence[str]) -> bool:
    """Whether the cluster spans one of ``regions``."""
    found = session.scalar(
        select(ClusterRow.id).where(ClusterRow.id == cluster_id, spans_any_region(regions))
    )
    return found is not None


def members_in(
    session: Session, cluster_ids: Sequence[str], regions: Sequence[str]
) -> list[tuple[str, str]]:
    """``(node id, cluster id)`` of the clusters' members placed in one of ``regions``."""
    placed = NodeRow.data[("placement", "region_name")].as_string()
    rows = session.execute(
        select(NodeRow.id, NodeRow.cluster_id).where(
            NodeRow.cluster_id.in_(list(cluster_ids)), placed.in_(list(regions))
        )
    ).all()
    return [(str(node), str(cluster)) for node, cluster in rows]
