"""A batch of member marks read and written set-wise: a few statements per batch, not per mark.

On PostgreSQL every statement is a round trip to the server, and a mark made one at a time
(``herd.store.member_marks``) took four (the cluster, the member with its lock, the UPDATE,
the event) plus the batch's own. Here a whole batch of marks
(``herd.api.services.member_health.mark_members``) reads every member it names by id, with
its cluster and whatever may stop the mark, in one statement (locking the member rows on
PostgreSQL, in id order), and writes every changed member with one executemany UPDATE and
every event with one INSERT. Marks that name a member or cluster otherwise (a name, a short
id) or that this read does not answer are looked up one by one with
``herd.store.member_marks``, as before. Every function runs in the caller's transaction.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, bindparam, insert, select, text
from sqlalchemy.orm import Session

from herd.store import locks, member_marks, member_revisions, nodes
from herd.store.bulk import chunked
from herd.store.member_marks import ClusterRef, MarkedMember
from herd.store.models import ActionRow, ClusterRow, EventRow, NodeRow
from herd.types import ResourceType

#: full ids are 36 characters: anything shorter is a name or a short id
FULL_ID = 36


@dataclass(frozen=True, slots=True)
class ReadMember:
    """A member read by id, with the cluster it belongs to."""

    member: MarkedMember
    cluster: ClusterRef
    cluster_project: str


@functools.cache
def _members_by_id(for_update: bool) -> Select[Any]:
    query = (
        member_marks.member_select(NodeRow.cluster_id)
        .add_columns(
            ClusterRow.name,
            ClusterRow.project,
            member_marks.tombstoned(ResourceType.CLUSTER, ClusterRow.id),
        )
        .join(ClusterRow, ClusterRow.id == NodeRow.cluster_id)
        .where(NodeRow.id.in_(bindparam("ids", expanding=True)))
        # Rows are locked in the order they are returned: one order for every batch, so
        # two batches (two API workers) never wait for each other in a cycle.
        .order_by(NodeRow.id)
    )
    return query.with_for_update(of=NodeRow) if for_update else query


def read_members(connection: Connection, node_ids: Collection[str]) -> dict[str, ReadMember]:
    """The members of these full ids (in any cluster), each with its cluster.

    On PostgreSQL their rows are locked until the transaction ends, so a concurrent mark of
    the same member (another API worker) waits instead of losing an update.
    """
    statement = _members_by_id(connection.dialect.name == "postgresql")
    found: dict[str, ReadMember] = {}
    for chunk in chunked(sorted({i for i in node_ids if len(i) == FULL_ID})):
        for row in connection.execute(statement, {"ids": chunk}):
            values = list(row)
            member = member_marks.member_from(values[:-3])
            name, project, deleting = values[-3:]
            cluster = ClusterRef(values[2], name, bool(deleting))
            found[member.id] = ReadMember(member, cluster, project)
    return found


def live_holder_names(
    connection: Connection, action_ids: Iterable[str], dead_before: float
) -> dict[str, str]:
    """Of these lock holders, those still holding, each with its action's name.

    The rule is ``herd.store.locks.live_holders``'s (one rule for every lock reader).
    """
    alive = locks.live_holders(connection, set(action_ids), dead_before)
    names: dict[str, str] = {}
    for chunk in chunked(sorted(alive)):
        query = select(ActionRow.id, ActionRow.action).where(ActionRow.id.in_(chunk))
        names.update({str(i): str(name) for i, name in connection.execute(query)})
    return names


_INSERT_EVENTS = insert(EventRow)


def write_health(session: Session, written: Mapping[str, tuple[str, Sequence[Any]]]) -> None:
    """Store the members' health as their view values now say, in one executemany.

    ``written`` maps a member id to its cluster id and its view values after its last mark
    of the batch (``member_marks.HEALTH`` and the columns beside it).
    """
    nodes.write_health_many(
        session,
        [
            nodes.HealthWrite(
                node_id=node_id,
                cluster_id=cluster_id,
                health=values[member_marks.HEALTH],
                reason=values[member_marks.HEALTH_REASON],
                marked_by=values[member_marks.MARKED_BY],
                marked_at=values[member_marks.MARKED_AT],
                generation=values[member_marks.GENERATION],
            )
            for node_id, (cluster_id, values) in written.items()
        ],
    )


def record_events(connection: Connection, events: Sequence[Mapping[str, Any]]) -> None:
    """Insert the events (each with every column but the id) in one statement."""
    if events:
        rows = [{"id": str(uuid.uuid4()), "meta_data": {}, **fields} for fields in events]
        connection.execute(_INSERT_EVENTS, rows)


# PostgreSQL: the batch's writes in one statement, one round trip instead of four (the
# UPDATE, the events' INSERT, the member revision's bump, its log). It does what
# write_health, record_events and member_revisions.publish do (the bump and the log with
# their pruning included), in one snapshot: the bump, in cluster-id order, is still the
# transaction's last write, and the caller notes no touch for publish to repeat.
_WRITE_ALL = text(
    """
WITH marked AS (
    SELECT * FROM unnest(
        CAST(:node_ids AS varchar[]), CAST(:cluster_ids AS varchar[]),
        CAST(:healths AS varchar[]), CAST(:reasons AS text[]), CAST(:marked_by AS varchar[]),
        CAST(:marked_at AS float8[]), CAST(:generations AS integer[])
    ) AS m(node_id, cluster_id, health, reason, marked_by, marked_at, generation)
), written AS (
    UPDATE nodes SET health = m.health, health_reason = m.reason,
        health_marked_by = m.marked_by, health_marked_at = m.marked_at,
        health_generation = m.generation, updated_at = m.marked_at
    FROM marked AS m WHERE nodes.id = m.node_id
), recorded AS (
    INSERT INTO events (id, timestamp, otype, oid, oname, project, "user", action, status,
        status_reason, level, request_id, cluster_id, metadata)
    SELECT e.id, e.timestamp, e.otype, e.oid, e.oname, e.project, e.user, e.action, e.status,
        e.status_reason, e.level, e.request_id, e.cluster_id, CAST('{}' AS json)
    FROM unnest(
        CAST(:event_ids AS varchar[]), CAST(:timestamps AS float8[]), CAST(:otypes AS varchar[]),
        CAST(:oids AS varchar[]),
        CAST(:onames AS varchar[]), CAST(:projects AS varchar[]), CAST(:users AS varchar[]),
        CAST(:actions AS varchar[]), CAST(:statuses AS varchar[]),
        CAST(:status_reasons AS text[]), CAST(:levels AS varchar[]),
        CAST(:request_ids AS varchar[]), CAST(:event_clusters AS varchar[])
    ) AS e(id, timestamp, otype, oid, oname, project, "user", action, status, status_reason, level,
        request_id, cluster_id)
), bumped AS (
    INSERT INTO member_revisions AS r (cluster_id, revision, horizon)
    SELECT DISTINCT cluster_id, 1, 0 FROM marked ORDER BY cluster_id
    ON CONFLICT (cluster_id) DO UPDATE SET revision = r.revision + 1,
        horizon = CASE WHEN (r.revision + 1) % :kept = 0 THEN r.revision + 1 - :kept
                       ELSE r.horizon END
    RETURNING r.cluster_id, r.revision
), logged AS (
    INSERT INTO member_changes (cluster_id, revision, node_id, fields, status, health)
    SELECT b.cluster_id, b.revision, m.node_id, :state, NULL, m.health
    FROM bumped AS b JOIN marked AS m ON m.cluster_id = b.cluster_id
), pruned AS (
    DELETE FROM member_changes AS c USING bumped AS b
    WHERE c.cluster_id = b.cluster_id AND b.revision % :kept = 0
        AND c.revision <= b.revision - :kept
)
SELECT count(*) FROM bumped
"""
)


def write_all(
    connection: Connection,
    written: Mapping[str, tuple[str, Sequence[Any]]],
    events: Sequence[Mapping[str, Any]],
) -> None:
    """PostgreSQL: :func:`write_health`, :func:`record_events` and the member revisions'
    bump and log of ``written`` in one statement (the transaction's last write)."""
    if not written:
        if events:  # a change writes its member: no event comes without a written row
            record_events(connection, events)
        return
    members = sorted(written.items())
    params: dict[str, Any] = {
        "node_ids": [node_id for node_id, _ in members],
        "cluster_ids": [cluster_id for _, (cluster_id, _) in members],
        "healths": [str(values[member_marks.HEALTH]) for _, (_, values) in members],
        "reasons": [values[member_marks.HEALTH_REASON] for _, (_, values) in members],
        "marked_by": [values[member_marks.MARKED_BY] for _, (_, values) in members],
        "marked_at": [values[member_marks.MARKED_AT] for _, (_, values) in members],
        "generations": [values[member_marks.GENERATION] for _, (_, values) in members],
        "event_ids": [str(uuid.uuid4()) for _ in events],
        "kept": member_revisions.KEPT_REVISIONS,
        "state": member_revisions.STATE,
    }
    for key, column in _EVENT_ARRAYS:
        params[key] = [None if e[column] is None else str(e[column]) for e in events]
    params["timestamps"] = [e["timestamp"] for e in events]
    connection.execute(_WRITE_ALL, params)


#: the events' array parameters of _WRITE_ALL and the event fields they carry
_EVENT_ARRAYS = (
    ("otypes", "otype"),
    ("oids", "oid"),
    ("onames", "oname"),
    ("projects", "project"),
    ("users", "user"),
    ("actions", "action"),
    ("statuses", "status"),
    ("status_reasons", "status_reason"),
    ("levels", "level"),
    ("request_ids", "request_id"),
    ("event_clusters", "cluster_id"),
)
