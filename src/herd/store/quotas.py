"""What a project holds, for the per-project quotas (api/services/quotas.py)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from herd.store.models import ClusterRow, NodeRow


def clusters_in_project(session: Session, project: str) -> int:
    query = select(func.count()).where(
        ClusterRow.project == project, ClusterRow.deleted_at.is_(None)
    )
    return int(session.scalar(query) or 0)


def nodes_in_project(session: Session, project: str) -> int:
    query = select(func.count()).where(NodeRow.project == project, NodeRow.deleted_at.is_(None))
    return int(session.scalar(query) or 0)
