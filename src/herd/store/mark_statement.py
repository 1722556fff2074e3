"""A batch of health marks written in one PostgreSQL statement.

On PostgreSQL the batch's UPDATE of the node rows, its events, and the member revision's bump
and log are one ``WITH`` statement, one round trip instead of four
(``api/services/member_health.py`` uses it; SQLite keeps :mod:`herd.store.mark_batches`'
separate statements). It writes node rows, so it is one of the two modules allowed to
(``tests/unit/store/test_node_write_contract.py``), and the statement bumps the member revision
itself: a node write that says which clusters it changed, as every other one does through
``member_revisions.touch``.

The statement can also be sent on its own, outside a transaction (autocommit: no BEGIN and
COMMIT round trips), after a read that did not lock the rows: each member then carries the
version (``xmin``) of the row its marks were decided on, and only the members whose row is
still that version are written, with their events and revision bump; the others (written by
someone else meanwhile) are left for the caller to mark again, in a transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, text

from herd.store import member_marks, member_revisions
from herd.store.mark_batches import record_events

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
        , CAST(:versions AS text[])
    ) AS m(node_id, cluster_id, health, reason, marked_by, marked_at, generation, version)
), locked AS (
    -- The rows still as their marks saw them (any row when no version is given), locked in id
    -- order: one order for every batch, so two API workers never wait for each other in a
    -- cycle. A row another transaction wrote meanwhile is re-checked at its newest version.
    SELECT n.id FROM nodes AS n JOIN marked AS m ON n.id = m.node_id
    WHERE m.version IS NULL OR CAST(n.xmin AS text) = m.version
    ORDER BY n.id FOR UPDATE OF n
), written AS (
    UPDATE nodes SET health = m.health, health_reason = m.reason,
        health_marked_by = m.marked_by, health_marked_at = m.marked_at,
        health_generation = m.generation, updated_at = m.marked_at
    FROM marked AS m JOIN locked AS l ON l.id = m.node_id WHERE nodes.id = l.id
    RETURNING nodes.id AS node_id, m.cluster_id, m.health
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
    WHERE e.oid IN (SELECT node_id FROM written)
), bumped AS (
    INSERT INTO member_revisions AS r (cluster_id, revision, horizon)
    SELECT DISTINCT cluster_id, 1, 0 FROM written ORDER BY cluster_id
    ON CONFLICT (cluster_id) DO UPDATE SET revision = r.revision + 1,
        horizon = CASE WHEN (r.revision + 1) % :kept = 0 THEN r.revision + 1 - :kept
                       ELSE r.horizon END
    RETURNING r.cluster_id, r.revision
), logged AS (
    -- A row per cluster and new health, the ids packed in id order (as publish logs them).
    INSERT INTO member_changes (cluster_id, revision, part, fields, status, health, count,
        node_ids)
    SELECT b.cluster_id, b.revision,
        CAST(row_number() OVER (PARTITION BY b.cluster_id ORDER BY w.health) - 1 AS integer),
        :state, NULL, w.health, count(*), string_agg(w.node_id, ' ' ORDER BY w.node_id)
    FROM bumped AS b JOIN written AS w ON w.cluster_id = b.cluster_id
    GROUP BY b.cluster_id, b.revision, w.health
), pruned AS (
    DELETE FROM member_changes AS c USING bumped AS b
    WHERE c.cluster_id = b.cluster_id AND b.revision % :kept = 0
        AND c.revision <= b.revision - :kept
)
SELECT node_id FROM written
"""
)


def write_all(
    connection: Connection,
    written: Mapping[str, tuple[str, Sequence[object]]],
    events: Sequence[Mapping[str, object]],
    versions: Mapping[str, str | None] | None = None,
) -> set[str]:
    """PostgreSQL: :func:`write_health`, :func:`record_events` and the member revisions'
    bump and log of ``written`` in one statement (the transaction's last write); the ids of
    the members written.

    ``versions``: each member's row version (``xmin``, as text) its marks were decided on.
    A member whose row is another version now is not written, nor are its events.
    """
    if not written:
        if events:  # a change writes its member: no event comes without a written row
            record_events(connection, events)
        return set()
    members = sorted(written.items())
    versions = versions or {}
    params: dict[str, object] = {
        "node_ids": [node_id for node_id, _ in members],
        "cluster_ids": [cluster_id for _, (cluster_id, _) in members],
        "healths": [str(values[member_marks.HEALTH]) for _, (_, values) in members],
        "reasons": [values[member_marks.HEALTH_REASON] for _, (_, values) in members],
        "marked_by": [values[member_marks.MARKED_BY] for _, (_, values) in members],
        "marked_at": [values[member_marks.MARKED_AT] for _, (_, values) in members],
        "generations": [values[member_marks.GENERATION] for _, (_, values) in members],
        "versions": [versions.get(node_id) for node_id, _ in members],
        "event_ids": [str(uuid.uuid4()) for _ in events],
        "kept": member_revisions.KEPT_REVISIONS,
        "state": member_revisions.STATE,
    }
    for key, column in _EVENT_ARRAYS:
        params[key] = [None if e[column] is None else str(e[column]) for e in events]
    params["timestamps"] = [e["timestamp"] for e in events]
    return {str(node_id) for node_id in connection.execute(_WRITE_ALL, params).scalars()}


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
