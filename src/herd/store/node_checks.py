"""Node check records: the health manager's last check of each node and its back-off state.

Kept apart from the ``nodes`` table so that a round over 1,000 members writes
narrow rows and never contends with actions updating the nodes themselves.
Each function runs in the caller's transaction and never commits.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.store.models import NodeCheckRow


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """One node's verdict in a round."""

    node_id: str
    cluster_id: str | None
    mode: str
    healthy: bool
    reason: str


def _new(node_id: str, cluster_id: str | None) -> NodeCheckRow:
    return NodeCheckRow(
        node_id=node_id,
        cluster_id=cluster_id,
        checked_at=None,
        mode="",
        healthy=None,
        reason="",
        failed_since=None,
        failures=0,
        streak=0,
        recoveries=0,
        last_recovery_at=None,
        last_recovery_result="",
        backoff_until=None,
    )


def load(session: Session, node_ids: Collection[str]) -> dict[str, NodeCheckRow]:
    if not node_ids:
        return {}
    rows = session.scalars(select(NodeCheckRow).where(NodeCheckRow.node_id.in_(list(node_ids))))
    return {row.node_id: row for row in rows}


def of_cluster(session: Session, cluster_id: str) -> dict[str, NodeCheckRow]:
    rows = session.scalars(select(NodeCheckRow).where(NodeCheckRow.cluster_id == cluster_id))
    return {row.node_id: row for row in rows}


def get_or_add(session: Session, node_id: str, cluster_id: str | None) -> NodeCheckRow:
    row = session.get(NodeCheckRow, node_id)
    if row is None:
        row = _new(node_id, cluster_id)
        session.add(row)
    return row


def record(session: Session, records: Sequence[CheckRecord], now: float) -> dict[str, NodeCheckRow]:
    """Store a round's verdicts; return the rows (with ``failed_since`` kept across rounds)."""
    rows = load(session, [r.node_id for r in records])
    for item in records:
        row = rows.get(item.node_id)
        if row is None:
            row = rows[item.node_id] = _new(item.node_id, item.cluster_id)
            session.add(row)
        row.cluster_id = item.cluster_id
        row.checked_at = now
        row.mode = item.mode
        row.healthy = item.healthy
        row.reason = item.reason
        if item.healthy:
            row.failed_since = None
            row.failures = 0
        else:
            row.failed_since = row.failed_since if row.failed_since is not None else now
            row.failures += 1
    return rows


def start_recovery(
    session: Session, node_id: str, cluster_id: str | None, streak: int, now: float
) -> NodeCheckRow:
    """The manager starts recovering a node: count it, and clear any back-off."""
    row = get_or_add(session, node_id, cluster_id)
    row.streak = streak
    row.recoveries += 1
    row.last_recovery_at = now
    row.last_recovery_result = "RUNNING"
    row.backoff_until = None
    return row


def defer_recovery(
    session: Session, node_id: str, cluster_id: str | None, until: float
) -> tuple[NodeCheckRow, bool]:
    """Record a back-off; True when it is new (the caller then records an event)."""
    row = get_or_add(session, node_id, cluster_id)
    changed = row.backoff_until != until
    row.backoff_until = until
    return row, changed


def finish_recovery(
    session: Session,
    node_id: str,
    cluster_id: str | None,
    *,
    succeeded: bool,
    result: str,
    now: float,
) -> None:
    """A recovery ended (started by the manager or through the API).

    A success closes the failure: the next one is a new failure, whose distance
    from this recovery decides whether the back-off series goes on.
    """
    row = get_or_add(session, node_id, cluster_id)
    row.last_recovery_result = result
    if row.last_recovery_at is None:
        row.last_recovery_at = now
    if succeeded:
        row.failed_since = None
        row.failures = 0
