"""Node check records: the health manager's last check of each node and its back-off state.

Kept apart from the ``nodes`` table so that a round over 1,000 members writes
narrow rows and never contends with actions updating the nodes themselves.
Each function runs in the caller's transaction and never commits.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import Table, bindparam, insert, select, update
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


@dataclass(frozen=True, slots=True)
class StoredCheck:
    """What a round needs of a node's record: its last verdict and its back-off state."""

    healthy: bool | None = None
    mode: str = ""
    reason: str = ""
    failed_since: float | None = None
    failures: int = 0
    streak: int = 0
    last_recovery_at: float | None = None
    backoff_until: float | None = None


_TABLE: Table = NodeCheckRow.__table__  # type: ignore[assignment]  # a Table, typed loosely
_COLUMNS = (
    NodeCheckRow.node_id,
    NodeCheckRow.healthy,
    NodeCheckRow.mode,
    NodeCheckRow.reason,
    NodeCheckRow.failed_since,
    NodeCheckRow.failures,
    NodeCheckRow.streak,
    NodeCheckRow.last_recovery_at,
    NodeCheckRow.backoff_until,
)


def stored(session: Session, node_ids: Collection[str]) -> dict[str, StoredCheck]:
    """The records of some nodes, read as plain values (a round reads 1,000 of them)."""
    if not node_ids:
        return {}
    rows = session.execute(select(*_COLUMNS).where(NodeCheckRow.node_id.in_(list(node_ids))))
    return {row[0]: StoredCheck(*row[1:]) for row in rows}


def _new(node_id: str, cluster_id: str | None) -> NodeCheckRow:
    return NodeCheckRow(**_new_values(node_id, cluster_id))


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


def record(session: Session, records: Sequence[CheckRecord], now: float) -> dict[str, StoredCheck]:
    """Store a round's verdicts; return each node's record as it is now.

    ``failed_since`` survives across failed rounds (the back-off measures from it).
    A member that was healthy and still is, for the same reason, only gets a new
    ``checked_at``: one UPDATE for all of them, which is most of a round.
    """
    before = stored(session, [r.node_id for r in records])
    after: dict[str, StoredCheck] = {}
    still_fine: list[str] = []
    changed: list[dict[str, object]] = []
    added: list[dict[str, object]] = []
    for item in records:
        old = before.get(item.node_id)
        if item.healthy:
            failed_since, failures = None, 0
        else:
            failed_since = old.failed_since if old and old.failed_since is not None else now
            failures = (old.failures if old else 0) + 1
        base = old or StoredCheck()
        after[item.node_id] = StoredCheck(
            item.healthy,
            item.mode,
            item.reason,
            failed_since,
            failures,
            base.streak,
            base.last_recovery_at,
            base.backoff_until,
        )
        values = {
            "mode": item.mode,
            "healthy": item.healthy,
            "reason": item.reason,
            "failed_since": failed_since,
            "failures": failures,
        }
        if old is None:
            fresh = _new_values(item.node_id, item.cluster_id)
            added.append({**fresh, **values, "checked_at": now})
        elif item.healthy and old.healthy and (old.mode, old.reason) == (item.mode, item.reason):
            still_fine.append(item.node_id)
        else:
            changed.append({"key": item.node_id, **values, "cluster_id": item.cluster_id})
    if still_fine:
        session.execute(
            update(_TABLE).where(_TABLE.c.node_id.in_(still_fine)).values(checked_at=now)
        )
    if changed:
        statement = (
            update(_TABLE)
            .where(_TABLE.c.node_id == bindparam("key"))
            .values(
                checked_at=now,
                **{name: bindparam(name) for name in changed[0] if name != "key"},
            )
        )
        session.execute(statement, changed)
    if added:
        session.execute(insert(_TABLE), added)
    return after


def _new_values(node_id: str, cluster_id: str | None) -> dict[str, object]:
    return {
        "node_id": node_id,
        "cluster_id": cluster_id,
        "checked_at": None,
        "mode": "",
        "healthy": None,
        "reason": "",
        "failed_since": None,
        "failures": 0,
        "streak": 0,
        "recoveries": 0,
        "last_recovery_at": None,
        "last_recovery_result": "",
        "backoff_until": None,
    }


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
        # The failed check is no longer the node's state: its result becomes unknown until the
        # next check (issue 26: it still said "unhealthy" after a successful recovery).
        if row.healthy is False:
            row.healthy = None
            row.reason = f"recovered after this check ({result}); not checked since"
