"""Event rows: one per state change of a cluster, node or action."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from sqlalchemy.orm import Session

from herd.json_types import object_at
from herd.observability import context as log_context
from herd.store.bulk import insert_rows
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
    meta: dict[str, object] | None = None,
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
        # the request being served, or the one behind the running action (engine/runner.py)
        request_id=log_context.request_id.get(),
    )
    session.add(row)
    return row


def record_many(session: Session, rows: Iterable[Mapping[str, object]], now: float) -> None:
    """Insert many events in one statement; each row has :func:`record`'s keyword fields."""
    request_id = log_context.request_id.get()
    values = [
        {
            "id": str(uuid.uuid4()),
            "timestamp": now,
            "oid": row["oid"],
            "oname": row["oname"],
            "otype": row["otype"],
            "cluster_id": row.get("cluster_id"),
            "level": row.get("level", "INFO"),
            "user": row.get("user", ""),
            "project": row["project"],
            "action": row["action"],
            "status": row["status"],
            "status_reason": row["reason"],
            "meta_data": dict(object_at(row, "meta")),
            "request_id": request_id,
        }
        for row in rows
    ]
    insert_rows(session, EventRow, values)
