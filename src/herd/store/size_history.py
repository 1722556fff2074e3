"""Each cluster's size over time, stored as data: member count and desired capacity.

Every transaction that may change a cluster's member count (nodes created, deleted, joining or
leaving) or its desired capacity notes the cluster; just before it commits, :func:`record`
counts the members, reads the desired capacity and appends a ``cluster_sizes`` row when either
differs from the cluster's last row. The history is therefore exact at any size (a count, not
a walk back over the newest N events) and needs no parsing of event texts.

Writers with Core statements call :func:`note` (``store/nodes.py``); a session hook sees the
ORM's flushes (new or deleted nodes, a changed ``cluster_id``, a changed desired capacity).
Health marks and status changes do not note anything: they cannot change a size, and the count
would cost them a query each.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from itertools import chain

from sqlalchemy import (
    Connection,
    Float,
    bindparam,
    delete,
    event,
    exists,
    func,
    insert,
    inspect,
    or_,
    select,
)
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker
from sqlalchemy.sql.dml import Delete, Insert
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.selectable import ScalarSelect

from herd.store.models import ClusterRow, ClusterSizeRow, NodeRow

#: session.info key: ids of the clusters whose size may have changed in the open transaction
_PENDING = "herd.size_touches"
#: a history read returns at most this many points (the newest)
MAX_POINTS = 10_000


def note(session: Session, cluster_ids: Iterable[str | None]) -> None:
    """This transaction may have changed these clusters' sizes (None: orphans, ignored)."""
    pending: set[str] = session.info.setdefault(_PENDING, set())
    pending.update(c for c in cluster_ids if c is not None)


def track(sessions: sessionmaker[Session]) -> None:
    """Make every session of ``sessions`` record the size changes it commits."""
    event.listen(sessions, "after_flush", _seen_in_flush)
    event.listen(sessions, "before_commit", _before_commit)
    event.listen(sessions, "after_rollback", _after_rollback)


def _seen_in_flush(session: Session, _flush_context: object) -> None:
    for obj in chain(session.new, session.deleted):
        if isinstance(obj, NodeRow):
            note(session, [obj.cluster_id])
        elif isinstance(obj, ClusterRow):
            note(session, [obj.id])
    for obj in session.dirty:
        if isinstance(obj, NodeRow):
            history = inspect(obj).attrs.cluster_id.history
            if history.added or history.deleted:
                note(session, chain(history.added, history.deleted))
        elif isinstance(obj, ClusterRow) and inspect(obj).attrs.desired_capacity.history.added:
            note(session, [obj.id])


def _before_commit(session: Session) -> None:
    if session.in_nested_transaction():
        return
    if session.info.get(_PENDING) is None and not (session.new or session.dirty or session.deleted):
        return
    session.flush()  # the ORM's last changes, seen by _seen_in_flush
    pending = session.info.pop(_PENDING, None)
    if pending:
        record(session.connection(), pending, time.time())


def _after_rollback(session: Session) -> None:
    session.info.pop(_PENDING, None)


def _record_statements() -> tuple[Insert, Delete]:
    """The two statements of :func:`record`, built once: building them and their cache
    keys on every call was an eighth of an engine's CPU in a profile (issue 28)."""
    ids: BindParameter[str] = bindparam("ids", expanding=True)
    members = (
        select(func.count())
        .select_from(NodeRow)
        .where(NodeRow.cluster_id == ClusterRow.id)
        .scalar_subquery()
    )

    def last(column: InstrumentedAttribute[int]) -> ScalarSelect[int]:
        return (
            select(column)
            .where(ClusterSizeRow.cluster_id == ClusterRow.id)
            .order_by(ClusterSizeRow.at.desc(), ClusterSizeRow.id.desc())
            .limit(1)
            .scalar_subquery()
        )

    sizes = (
        select(
            ClusterRow.id.label("cluster_id"),
            ClusterRow.desired_capacity.label("desired"),
            members.label("members"),
            last(ClusterSizeRow.members).label("last_members"),
            last(ClusterSizeRow.desired_capacity).label("last_desired"),
        )
        .where(ClusterRow.id.in_(ids))
        .subquery()
    )
    now = bindparam("now", type_=Float())
    changed = select(sizes.c.cluster_id, now, sizes.c.members, sizes.c.desired).where(
        or_(
            sizes.c.last_members.is_(None),
            sizes.c.last_members != sizes.c.members,
            sizes.c.last_desired != sizes.c.desired,
        )
    )
    add = insert(ClusterSizeRow).from_select(
        ["cluster_id", "at", "members", "desired_capacity"], changed
    )
    gone = ~exists().where(ClusterRow.id == ClusterSizeRow.cluster_id)
    drop = delete(ClusterSizeRow).where(ClusterSizeRow.cluster_id.in_(ids), gone)
    return add, drop


_ADD, _DROP = _record_statements()


def record(connection: Connection, cluster_ids: Iterable[str], now: float) -> None:
    """Append a size row for each cluster whose count or desired capacity changed.

    Two statements whatever the number of clusters (this runs in most of the engine's
    write transactions): one INSERT of the clusters whose (members, desired capacity)
    differs from their last row, one DELETE of the history of clusters that are gone.
    """
    ids = sorted(cluster_ids)
    if not ids:
        return
    connection.execute(_ADD, {"ids": ids, "now": now})
    connection.execute(_DROP, {"ids": ids})


def history(
    session: Session, cluster_id: str, *, since: float | None = None, limit: int = MAX_POINTS
) -> list[tuple[float, int, int]]:
    """The cluster's (time, members, desired capacity) points, oldest first (the newest
    ``limit`` of those at or after ``since``)."""
    query = select(
        ClusterSizeRow.at, ClusterSizeRow.members, ClusterSizeRow.desired_capacity
    ).where(ClusterSizeRow.cluster_id == cluster_id)
    if since is not None:
        query = query.where(ClusterSizeRow.at >= since)
    query = query.order_by(ClusterSizeRow.at.desc(), ClusterSizeRow.id.desc()).limit(limit)
    rows = session.execute(query).all()
    return [(float(at), int(m), int(d)) for at, m, d in reversed(rows)]
