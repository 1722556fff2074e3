"""Lifecycle hook deliveries: one row per message sent (or not) for a waiting victim."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from herd.store.models import HookDeliveryRow


def record(
    session: Session,
    *,
    action_id: str,
    cluster_id: str,
    node_id: str,
    hook_type: str,
    destination: str,
    attempts: int,
    error: str | None,
    now: float,
) -> None:
    """Store how a message went: SENT, or FAILED with the last error."""
    session.add(
        HookDeliveryRow(
            id=str(uuid.uuid4()),
            action_id=action_id,
            cluster_id=cluster_id,
            node_id=node_id,
            hook_type=hook_type,
            destination=destination,
            attempts=attempts,
            status="FAILED" if error else "SENT",
            last_error=error or "",
            sent_at=None if error else now,
            created_at=now,
        )
    )
