"""A commit-ordered revision of each cluster's members, and the nodes each revision touched.

A process may keep a cluster's members in memory between decisions
(store/member_cache.py) only if it can tell, cheaply and without fail, whether
they changed since it read them. So every transaction that writes node rows
names the clusters and nodes it wrote: store functions that write with Core
statements call :func:`touch`, and a session hook (:func:`track`) sees the ORM's
own flushes. Just before the transaction commits, :func:`publish` bumps each
touched cluster's ``member_revisions.revision`` and logs the touched node ids
under the new revision in ``member_changes``, a row per way they were written, their ids
packed in one text (the last few revisions are kept).

Why the bump comes last, in cluster-id order, in the writer's own transaction:

* a revision a reader sees was committed together with the member rows it
  names, so a reader that reads the revision first and the members after sees at
  least that state (on PostgreSQL's READ COMMITTED too);
* on PostgreSQL the bump locks the ``member_revisions`` row until commit, which
  orders bumps of one cluster by commit; nothing else locks those rows, and a
  transaction holding one only bumps others in id order and then commits, so no
  cycle of waits can pass through them (the versioning trigger considered in
  issue 10 would have locked the cluster row halfway through transactions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain

from sqlalchemy import Connection, delete, event, inspect, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker

from herd.store import size_history
from herd.store.bulk import chunked, insert_rows
from herd.store.models import MemberChangeRow, MemberRevisionRow, NodeRow

#: session.info key: cluster id -> ids of the nodes written in the open transaction, each
#: with what was written of it (ROW, or the new ``(status, health)`` of a state change)
_PENDING = "herd.member_touches"
#: ``member_changes.fields``: any member column may have changed
ROW = "row"
#: ``member_changes.fields``: only the status or the health changed, to the logged values
STATE = "state"
#: A state change's new status and health (None: not written).
State = tuple[str | None, str | None]
#: The node columns a state change may write: of them, a member table (``store/snapshots.py``)
#: holds only the status and the health, whose new values the log carries.
STATE_COLUMNS = frozenset(
    (
        "status",
        "status_reason",
        "health",
        "health_reason",
        "health_marked_by",
        "health_marked_at",
        "health_generation",
        "updated_at",
    )
)
#: Between the node ids of a log row (herd's node ids are UUIDs; a revision naming an id
#: with a space in it is logged as EVERY_MEMBER).
SEPARATOR = " "
#: A logged node id meaning "every member may have changed": read them all again.
EVERY_MEMBER = "*"
#: More nodes than this in one revision are logged as EVERY_MEMBER.
LOG_LIMIT = 20_000
#: In a touched set: the cluster is gone; drop its revision and log instead of bumping.
_FORGET = "forget"
#: Revisions whose changes stay in member_changes (a reader further behind reads everything).
KEPT_REVISIONS = 64


def touch(
    session: Session,
    cluster_id: str | None,
    node_ids: Iterable[str],
    *,
    state: State | None = None,
) -> None:
    """Note that this transaction wrote these nodes of the cluster (None: orphans, ignored).

    ``state``: it wrote only :data:`STATE_COLUMNS` of them (a status change, a health mark),
    setting the status and health to these values (None: that one not written); the log
    carries them, so a reader patching its members reads nothing else.
    """
    if cluster_id is None:
        return
    pending: dict[str, dict[str, str | State]] = session.info.setdefault(_PENDING, {})
    written = pending.setdefault(cluster_id, {})
    if state is None:
        written.update(dict.fromkeys(node_ids, ROW))
        return
    for node_id in node_ids:
        before = written.get(node_id)
        if before == ROW:
            continue  # the whole row is read again anyway
        if isinstance(before, tuple):  # written twice: the later values win
            status, health = state
            state = (
                before[0] if status is None else status,
                before[1] if health is None else health,
            )
        written[node_id] = state


def touch_nodes(
    session: Session,
    node_ids: Iterable[str],
    *,
    resized: bool = False,
    state: State | None = None,
) -> None:
    """:func:`touch` nodes known by id only: their clusters are read first.

    Call it before a statement that moves or deletes them (afterwards their
    cluster is no longer known). ``resized``: the statement changes how many members
    those clusters have (store/size_history.py records their new sizes).
    """
    for chunk in chunked(node_ids):
        query = select(NodeRow.cluster_id, NodeRow.id).where(
            NodeRow.id.in_(chunk), NodeRow.cluster_id.is_not(None)
        )
        by_cluster: dict[str | None, list[str]] = {}
        for cluster_id, node_id in session.execute(query):
            by_cluster.setdefault(cluster_id, []).append(node_id)
        for cluster_id, ids in by_cluster.items():
            touch(session, cluster_id, ids, state=state)
        if resized:
            size_history.note(session, by_cluster)


def has_own_writes(session: Session, cluster_id: str) -> bool:
    """Whether the open transaction wrote (or holds unflushed changes to) the cluster's nodes.

    Such a transaction must read its members from the database: what it wrote is
    not committed, so no cached copy holds it.
    """
    if cluster_id in session.info.get(_PENDING, ()):
        return True
    return any(
        isinstance(obj, NodeRow) for obj in chain(session.new, session.dirty, session.deleted)
    )


def forget(session: Session, cluster_id: str) -> None:
    """Drop a removed cluster's revision and log when the caller's transaction commits
    (with the bumps, last and in cluster order)."""
    touch(session, cluster_id, (_FORGET,))


def track(sessions: sessionmaker[Session]) -> None:
    """Make every session of ``sessions`` publish the member changes it commits."""
    event.listen(sessions, "after_flush", _seen_in_flush)
    event.listen(sessions, "before_commit", _before_commit)
    event.listen(sessions, "after_rollback", _after_rollback)


def _seen_in_flush(session: Session, _flush_context: object) -> None:
    # After a flush the session still lists what it flushed, with attribute history.
    for obj in chain(session.new, session.dirty, session.deleted):
        if isinstance(obj, NodeRow):
            changes = inspect(obj).attrs
            state: State | None = None
            if obj in session.dirty and all(
                name in STATE_COLUMNS or not attr.history.has_changes()
                for name, attr in changes.items()
            ):
                state = (
                    obj.status if changes.status.history.has_changes() else None,
                    obj.health if changes.health.history.has_changes() else None,
                )
            history = changes.cluster_id.history
            for cluster_id in chain(history.added, history.unchanged, history.deleted):
                touch(session, cluster_id, (obj.id,), state=state)


def _before_commit(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a savepoint's release: the bump waits for the real commit, to stay last
    session.flush()  # the ORM's last changes, seen by _seen_in_flush
    pending = session.info.pop(_PENDING, None)
    if pending:
        publish(session.connection(), pending)


def _after_rollback(session: Session) -> None:
    session.info.pop(_PENDING, None)


def publish(connection: Connection, touched: Mapping[str, Mapping[str, str | State]]) -> None:
    """Bump each touched cluster's revision and log its nodes: the transaction's last statements.

    ``touched``: per cluster, the nodes written and what of them (:data:`ROW` or a state).
    """
    for cluster_id in sorted(touched):
        written = touched[cluster_id]
        if _FORGET in written:
            _drop(connection, cluster_id)
            continue
        revision = _bump(connection, cluster_id)
        rows = [
            {"cluster_id": cluster_id, "revision": revision, "part": part}
            | (
                {"fields": ROW, "status": None, "health": None}
                if what == ROW
                else {"fields": STATE, "status": what[0], "health": what[1]}
            )
            | {"count": len(ids), "node_ids": SEPARATOR.join(ids)}
            for part, (what, ids) in enumerate(_parts(written))
        ]
        insert_rows(connection, MemberChangeRow, rows)
        if revision % KEPT_REVISIONS == 0:
            _prune(connection, cluster_id, revision - KEPT_REVISIONS)


def _parts(written: Mapping[str, str | State]) -> list[tuple[str | State, list[str]]]:
    """The written nodes grouped by what was written of them (ids in order): a log row each."""
    if len(written) > LOG_LIMIT or any(SEPARATOR in node_id for node_id in written):
        return [(ROW, [EVERY_MEMBER])]
    parts: dict[str | State, list[str]] = {}
    for node_id in sorted(written):
        parts.setdefault(written[node_id], []).append(node_id)
    # The whole rows first, then the states; by repr, as None does not compare with a text.
    return sorted(parts.items(), key=lambda part: repr(part[0]))


def _bump(connection: Connection, cluster_id: str) -> int:
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    table = MemberRevisionRow.__table__
    statement = (
        dialect.insert(table)
        .values(cluster_id=cluster_id, revision=1, horizon=0)
        .on_conflict_do_update(
            index_elements=[table.c.cluster_id], set_={"revision": table.c.revision + 1}
        )
        .returning(table.c.revision)
    )
    return int(connection.execute(statement).scalar_one())


def _drop(connection: Connection, cluster_id: str) -> None:
    connection.execute(delete(MemberChangeRow).where(MemberChangeRow.cluster_id == cluster_id))
    connection.execute(delete(MemberRevisionRow).where(MemberRevisionRow.cluster_id == cluster_id))


def _prune(connection: Connection, cluster_id: str, horizon: int) -> None:
    connection.execute(
        delete(MemberChangeRow).where(
            MemberChangeRow.cluster_id == cluster_id, MemberChangeRow.revision <= horizon
        )
    )
    connection.execute(
        update(MemberRevisionRow)
        .where(MemberRevisionRow.cluster_id == cluster_id)
        .values(horizon=horizon)
    )


def revision_of(session: Session, cluster_id: str) -> tuple[int, int]:
    """The cluster's member revision and horizon; (0, 0) if its members were never written."""
    row = session.execute(
        select(MemberRevisionRow.revision, MemberRevisionRow.horizon).where(
            MemberRevisionRow.cluster_id == cluster_id
        )
    ).first()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def changed_since(session: Session, cluster_id: str, revision: int) -> set[str] | None:
    """Ids of the members written after ``revision``; None when all may have changed."""
    query = select(MemberChangeRow.node_ids).where(
        MemberChangeRow.cluster_id == cluster_id, MemberChangeRow.revision > revision
    )
    changed = {
        node_id
        for packed in session.connection().execute(query).scalars()
        for node_id in packed.split(SEPARATOR)
    }
    return None if EVERY_MEMBER in changed else changed
