"""Event rows: one per state change of a cluster, node or action."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from herd.store.models import EventRow


def record(
    session: Session,
    *,
    otype: str,
    oid: str,
    oname: str,
    project: str,
    action: str,
    status: str,
    reason: str,
    now: float,
    cluster_id: str | None = None,
    user: str = "",
    level: str = "INFO",
    meta: dict[str, Any] | None = None,
) -> EventRow:
    """Add an event to the session (the caller's transaction commits it)."""
    row = EventRow(
        id=str(uuid.uuid4()),
        timestamp=now,
        oid=oid,
        oname=oname,
        otype=otype,
        cluster_id=cluster_id,
        level=level,
        user=user,
        project=project,
        action=action,
        status=status,
        status_reason=reason,
        meta_data=meta or {},
    )
    session.add(row)
    return row
