"""Build the frozen domain views that policies read from rows.

Decisions over a whole cluster (:func:`load_cluster_snapshot`) read the members
column-wise with one Core select (no ORM rows, no snapshot objects): at 100,000
members building ORM rows cost a hundred times the ranking they fed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from sys import intern
from typing import Any

from sqlalchemy import (
    Select,
    String,
    bindparam,
    select,
    type_coerce,
)
from sqlalchemy.orm import Session

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.domain.values import parse_bool
from herd.json_types import float_value, int_value
from herd.policies.members import MemberChanges, MemberLists, MemberTable
from herd.store import member_cache, member_revisions
from herd.store.bulk import chunked
from herd.store.driver_rows import AnySelect, driver_rows
from herd.store.models import (
    ClusterRow,
    MemberChangeRow,
    MemberRevisionRow,
    NodeRow,
    ProfileRow,
)
from herd.types import ClusterStatus, HealthStatus, NodeStatus


def node_snapshot(row: NodeRow, profile_created_at: float | None = None) -> NodeSnapshot:
    placement = (row.data or {}).get("placement") or {}
    protected, cost = _guard(row.meta_data or {})
    return NodeSnapshot(
        id=row.id,
        name=row.name,
        index=row.index,
        status=NodeStatus(row.status),
        health=HealthStatus(row.health),
        created_at=row.created_at,
        profile_created_at=profile_created_at,
        zone=placement.get("zone"),
        region=placement.get("region_name"),
        protected=protected,
        deletion_cost=cost,
        tainted=row.tainted,
        physical_id=row.physical_id,
    )


def cluster_snapshot(
    cluster: ClusterRow,
    nodes: Iterable[NodeRow],
    profile_times: Mapping[str, float | None] | None = None,
) -> ClusterSnapshot:
    times = profile_times or {}
    return ClusterSnapshot(
        id=cluster.id,
        name=cluster.name,
        min_size=cluster.min_size,
        max_size=cluster.max_size,
        desired_capacity=cluster.desired_capacity,
        status=ClusterStatus(cluster.status),
        nodes=tuple(node_snapshot(n, times.get(n.profile_id)) for n in nodes),
        config=dict(cluster.config or {}),
    )


def _guard(metadata: Mapping[str, object]) -> tuple[bool, float]:
    """A member's ``protected`` flag and ``deletion_cost`` from its metadata."""
    try:
        cost = float_value(metadata.get("deletion_cost", 0) or 0)
    except (TypeError, ValueError):
        cost = 0.0
    # The API refuses a value parse_bool cannot read; rows written before that read False.
    return bool(parse_bool(metadata.get("protected", False))), cost


def _metadata(raw: object) -> Mapping[str, object]:
    """Node metadata as the driver returned it: JSON text (SQLite) or decoded (psycopg)."""
    if isinstance(raw, str):
        # Most members carry no metadata; skip decoding the common empty object.
        return {} if raw in ("{}", "", "null") else json.loads(raw)
    return raw if isinstance(raw, Mapping) else {}


def member_table(
    session: Session, cluster_id: str, revision: tuple[int, int] | None = None
) -> MemberTable:
    """A cluster's members (by index) as columns: from the process's member cache when the
    session has one (checked against the member revision), else read with one select.

    ``revision``: the member revision and horizon, if this transaction read them already.
    """
    cache = member_cache.of(session)
    if cache is None or member_revisions.has_own_writes(session, cluster_id):
        return read_members(session, cluster_id)
    return cache.members(session, cluster_id, read_members, read_changed_members, revision)


@functools.cache
def _member_columns() -> Select[Any]:
    """What a decision reads of each member, in the order MemberLists takes it."""
    return select(*_MEMBER_COLUMNS).outerjoin(ProfileRow, ProfileRow.id == NodeRow.profile_id)


_MEMBER_COLUMNS = (
    NodeRow.id,
    NodeRow.name,
    NodeRow.index,
    # Plain strings, interned by _table (not one enum member per row through EnumText):
    # an enum member's hash is a Python call, and patches and rankings look these up.
    type_coerce(NodeRow.status, String),
    type_coerce(NodeRow.health, String),
    NodeRow.created_at,
    ProfileRow.created_at,
    NodeRow.data[("placement", "zone")].as_string(),
    NodeRow.data[("placement", "region_name")].as_string(),
    # Undecoded: only members with metadata pay for parsing it.
    type_coerce(NodeRow.meta_data, String),
    NodeRow.tainted,
    NodeRow.physical_id,
)


@functools.cache
def _logged_parts() -> AnySelect:
    """The member changes logged after a revision, in order: a row per revision and way of
    change (store/member_revisions.py), its node ids packed.

    No join and no grouping: the log's primary key (cluster, revision, part) gives them in one
    short range, usually one row for the one revision since the reader's.
    """
    return (
        select(
            MemberChangeRow.fields,
            MemberChangeRow.status,
            MemberChangeRow.health,
            MemberChangeRow.count,
            MemberChangeRow.node_ids,
        )
        .where(
            MemberChangeRow.cluster_id == bindparam("cluster_id"),
            MemberChangeRow.revision > bindparam("since"),
        )
        .order_by(MemberChangeRow.revision, MemberChangeRow.part)
    )


def read_changed_members(
    session: Session, cluster_id: str, since: int, limit: int
) -> MemberChanges | None:
    """What changed in the cluster's members after revision ``since``, read as narrowly as the
    log allows: the new status and health of members whose state alone changed come with
    the log (one statement); the rows of the others are read again (a select by id, only
    when there are any).

    None when the log says every member may have changed, or logs more than ``limit``
    changes (then reading every member is the cheaper way).
    """
    connection = session.connection()
    # Rows from the driver's cursor: a quarter less CPU than Core's rows.
    parts = driver_rows(connection, _logged_parts(), {"cluster_id": cluster_id, "since": since})
    if sum(part[3] for part in parts) > limit:
        return None
    rewritten: set[str] = set()
    states: dict[str, member_revisions.State] = {}
    for fields, status, health, _count, packed in parts:
        node_ids = packed.split(member_revisions.SEPARATOR)
        if fields != member_revisions.STATE:
            if member_revisions.EVERY_MEMBER in node_ids:
                return None
            rewritten.update(node_ids)
            continue
        state = (status and intern(status), health and intern(health))
        if not states or None not in state:
            states.update(dict.fromkeys(node_ids, state))
            continue
        for node_id in node_ids:  # a later revision's values win; None: not written then
            before = states.get(node_id)
            states[node_id] = state if before is None else (
                before[0] if state[0] is None else state[0],
                before[1] if state[1] is None else state[1],
            )  # fmt: skip
    if not rewritten:
        return MemberChanges((), _NO_MEMBERS, states)
    for node_id in rewritten:
        states.pop(node_id, None)  # its row, read now, holds its state too
    # Those still in the cluster; the others left it.
    return MemberChanges(rewritten, read_members(session, cluster_id, rewritten), states)


def _by_index(row: Sequence[object]) -> int:
    index = row[2]  # the index column, an int (the isinstance is the fast path of a sort key)
    return index if isinstance(index, int) else int_value(index)


def read_members(
    session: Session, cluster_id: str, only: Collection[str] | None = None
) -> MemberTable:
    """A cluster's members (by index) as columns, read with one select; with ``only``,
    just those of these ids still in the cluster (a select per 5,000 ids)."""
    columns = _member_columns()
    # On the connection, not the session: the ORM's result handling doubled the cost.
    connection = session.connection()
    if only is None:
        query = columns.where(NodeRow.cluster_id == cluster_id).order_by(NodeRow.index)
        rows: Sequence[Sequence[object]] = connection.execute(query).all()
    else:
        # By primary key alone: with the cluster in the WHERE clause SQLite walks the
        # cluster's index over every member.
        rows = [
            row[:-1]
            for ids in chunked(only)
            for row in connection.execute(
                columns.add_columns(NodeRow.cluster_id).where(NodeRow.id.in_(ids))
            ).all()
            if row[-1] == cluster_id
        ]
        rows.sort(key=_by_index)
    return _table(rows)


def _table(rows: Sequence[Sequence[object]]) -> MemberTable:
    """Rows of :func:`_member_columns` (by index) as a member table."""
    if not rows:
        return MemberTable(MemberLists([], [], [], [], [], [], [], [], [], [], [], [], []))
    (ids, names, index, status, health, created, profile_created, zone, region, meta,
     tainted, physical) = (list(column) for column in zip(*rows, strict=True))  # fmt: skip
    # One string object per status and health value, shared with the change log's values.
    status, health = list(map(intern, status)), list(map(intern, health))
    protected: list[bool] = [False] * len(ids)
    costs: list[float] = [0.0] * len(ids)
    for position, raw in enumerate(meta):
        metadata = _metadata(raw)
        if metadata:
            protected[position], costs[position] = _guard(metadata)
    return MemberTable(
        MemberLists(
            ids=ids,
            names=names,
            index=index,
            status=status,
            health=health,
            created_at=created,
            profile_created_at=profile_created,
            zone=zone,
            region=region,
            protected=protected,
            deletion_cost=costs,
            tainted=[bool(t) for t in tainted],
            physical_id=physical,
        )
    )


@functools.cache
def _cluster_and_revision() -> AnySelect:
    """What a snapshot reads of the cluster row, and its member revision and horizon (NULL:
    its members were never written), in one statement."""
    return (
        select(
            ClusterRow.name,
            ClusterRow.min_size,
            ClusterRow.max_size,
            ClusterRow.desired_capacity,
            type_coerce(ClusterRow.status, String),
            # Undecoded (the driver's rows): JSON text on SQLite, decoded by psycopg.
            type_coerce(ClusterRow.config, String),
            MemberRevisionRow.revision,
            MemberRevisionRow.horizon,
        )
        .outerjoin(MemberRevisionRow, MemberRevisionRow.cluster_id == ClusterRow.id)
        .where(ClusterRow.id == bindparam("cluster_id"))
    )


_NO_MEMBERS = _table(())


def load_cluster_snapshot(session: Session, cluster_id: str) -> ClusterSnapshot | None:
    """The cluster and its members (by index, column-wise) with their profiles' ages.

    The cluster row and the member revision come in one statement from the driver's
    cursor (no ORM row), unless the session holds the cluster row or unflushed changes:
    then the session's view of the cluster is the one to snapshot.
    """
    held = session.identity_map.get(session.identity_key(ClusterRow, cluster_id))
    if held is not None or session.new or session.dirty or session.deleted:
        return _orm_snapshot(session, cluster_id)
    found = driver_rows(session.connection(), _cluster_and_revision(), {"cluster_id": cluster_id})
    if not found:
        return None
    name, min_size, max_size, desired, status, config, revision, horizon = found[0]
    return ClusterSnapshot(
        id=cluster_id,
        name=name,
        min_size=min_size,
        max_size=max_size,
        desired_capacity=desired,
        status=ClusterStatus(status),
        nodes=member_table(session, cluster_id, (revision or 0, horizon or 0)),
        config=dict(_metadata(config)),
    )


def _orm_snapshot(session: Session, cluster_id: str) -> ClusterSnapshot | None:
    cluster = session.get(ClusterRow, cluster_id)
    if cluster is None:
        return None
    return ClusterSnapshot(
        id=cluster.id,
        name=cluster.name,
        min_size=cluster.min_size,
        max_size=cluster.max_size,
        desired_capacity=cluster.desired_capacity,
        status=ClusterStatus(cluster.status),
        nodes=member_table(session, cluster_id),
        config=dict(cluster.config or {}),
    )
