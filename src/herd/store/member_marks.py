"""What marking a member (un)healthy reads of one member, in a few Core statements.

``herd.api.services.member_health`` decides; this module finds the cluster (with its
tombstone) and the member (with its profile name, last check, lock holders and pending
deletion) by id, unique name or unique short id, without ORM objects. A batch of marks
reads the members it names by full id all at once (``herd.store.mark_batches``, which also
writes them); this module answers the rest one by one. Every function runs in the caller's
transaction and never commits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, TypeVarTuple

from sqlalchemy import (
    ColumnElement,
    Connection,
    Exists,
    Row,
    Select,
    and_,
    bindparam,
    case,
    exists,
    func,
    select,
)
from sqlalchemy.orm import QueryableAttribute

from herd.errors import MultipleChoices, NotFound
from herd.store import node_reads
from herd.store.lookup import Scope
from herd.store.models import (
    ActionRow,
    ClusterLockRow,
    ClusterRow,
    NodeLockRow,
    NodeRow,
    TombstoneRow,
)
from herd.types import ACTIVE_ACTION_STATUSES, ActionName, ResourceType

T = TypeVar("T")
Columns = TypeVarTuple("Columns")

#: positions in a member row, after the columns of ``node_reads.node_select``
_EXTRA = len(node_reads.NODE_COLUMNS) + len(node_reads.EXTRA_COLUMNS)
HEALTH, HEALTH_REASON, MARKED_BY, MARKED_AT, GENERATION = 18, 19, 20, 21, 22
UPDATED_AT, STATUS = 12, 13


@dataclass(frozen=True, slots=True)
class ClusterRef:
    id: str
    name: str
    deleting: bool


@dataclass(frozen=True, slots=True)
class MarkedMember:
    """A member as the mark reads it: its view values and what may stop the mark."""

    values: list[Any]
    cluster_lock_holders: list[str]
    node_lock_holder: str | None
    delete_pending: bool

    @property
    def id(self) -> str:
        return str(self.values[0])


_BY = ("id", "name", "prefix")


def tombstoned(
    resource_type: ResourceType, id_column: QueryableAttribute[T] | ColumnElement[T]
) -> Exists:
    """Whether the resource of ``id_column`` carries a tombstone (is being deleted)."""
    return exists().where(
        and_(TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id == id_column)
    )


@functools.cache
def _cluster_lookup(by: str, scoped: bool) -> Select[str, str, bool]:
    # Built once: the values travel as bound parameters (see node_reads._lookup).
    query = select(ClusterRow.id, ClusterRow.name, tombstoned(ResourceType.CLUSTER, ClusterRow.id))
    if scoped:
        query = query.where(ClusterRow.project == bindparam("project"))
    return _by(query, ClusterRow.id, ClusterRow.name, by)


def member_select(cluster_id: Any) -> Select[Any]:
    """A member's view columns, then its cluster's lock holders (of the cluster
    ``cluster_id`` names), its node lock's holder and whether a NODE_DELETE is pending."""
    cluster_holders = (
        select(ClusterLockRow.action_ids)
        .where(ClusterLockRow.cluster_id == cluster_id)
        .scalar_subquery()
    )
    node_holder = (
        select(NodeLockRow.action_id).where(NodeLockRow.node_id == NodeRow.id).scalar_subquery()
    )
    # Whether one of the member's NODE_DELETE actions is active, found through the index on
    # ``target`` (a member has few actions). The status is tested in the select list, not in
    # the WHERE clause, so that no plan reads the actions' status index: its entries for
    # every version of every action stay until a vacuum, and right after a cluster of 10,000
    # was made, an EXISTS with the status in its WHERE clause read 10,000 of them per batch
    # of marks, half a mark's database time (issue 28). NULL (no NODE_DELETE) or 0: none.
    deleting = (
        select(func.max(case((ActionRow.status.in_(list(ACTIVE_ACTION_STATUSES)), 1), else_=0)))
        .where(ActionRow.target == NodeRow.id, ActionRow.action == ActionName.NODE_DELETE)
        .scalar_subquery()
    )
    return node_reads.node_select(agent=False).add_columns(cluster_holders, node_holder, deleting)


def member_from(values: list[Any]) -> MarkedMember:
    """A :class:`MarkedMember` from a row of :func:`member_select`."""
    holders = values[_EXTRA]
    return MarkedMember(
        values=values[:_EXTRA],
        cluster_lock_holders=[str(h) for h in holders or []],
        node_lock_holder=values[_EXTRA + 1],
        delete_pending=bool(values[_EXTRA + 2]),
    )


@functools.cache
def _member_lookup(by: str, for_update: bool) -> Select[Any]:
    query = member_select(bindparam("cluster_id")).where(
        NodeRow.cluster_id == bindparam("cluster_id")
    )
    query = _by(query, NodeRow.id, NodeRow.name, by)
    return query.with_for_update(of=NodeRow) if for_update else query


def _by(
    query: Select[*Columns],
    id_column: QueryableAttribute[str],
    name_column: QueryableAttribute[str],
    by: str,
) -> Select[*Columns]:
    if by == "id":
        return query.where(id_column == bindparam("identity"))
    if by == "name":
        return query.where(name_column == bindparam("identity")).limit(2)
    return query.where(id_column.like(bindparam("identity"), escape="\\")).limit(2)


def _find(
    connection: Connection,
    statement: Callable[[str], Select[*Columns]],
    identity: str,
    **params: object,
) -> Row[*Columns] | None:
    """By id (a full-length one), else by unique name, else by unique id prefix."""
    if len(identity) == 36:
        row = connection.execute(statement("id"), {**params, "identity": identity}).first()
        if row is not None:
            return row
    row = _unique(connection, statement("name"), {**params, "identity": identity}, identity)
    if row is None:
        escaped = identity.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        prefix = {**params, "identity": escaped + "%"}
        row = _unique(connection, statement("prefix"), prefix, identity)
    return row


def find_cluster(connection: Connection, identity: str, scope: Scope) -> ClusterRef:
    """A cluster by id, unique name or unique short id, and whether it carries a tombstone."""
    scoped = not scope.all_projects
    params = {"project": scope.project} if scoped else {}
    row = _find(connection, lambda by: _cluster_lookup(by, scoped), identity, **params)
    if row is None:
        raise NotFound("cluster", identity)
    cluster_id, name, deleting = row[0], row[1], row[2]
    return ClusterRef(cluster_id, name, bool(deleting))


def find_member(connection: Connection, cluster: ClusterRef, identity: str) -> MarkedMember:
    """A member of ``cluster`` by id, name or short id; 404 for anything else.

    On PostgreSQL the member's row is locked, so concurrent marks of one member queue
    instead of losing an update (SQLite's write transactions already exclude each other).
    """
    for_update = connection.dialect.name == "postgresql"
    locked = _member_lookup("id", True) if for_update else None
    row: Row[Any] | None = None
    if locked is not None and len(identity) == 36:
        # The common case, a full id: found and locked in one round trip.
        row = connection.execute(locked, {"cluster_id": cluster.id, "identity": identity}).first()
        locked = None if row is not None else locked
    if row is None:
        row = _find(
            connection, lambda by: _member_lookup(by, False), identity, cluster_id=cluster.id
        )
    if row is None:
        raise NotFound(
            "node", identity, f"The node '{identity}' is not a member of cluster '{cluster.name}'."
        )
    if locked is not None:
        row = connection.execute(locked, {"cluster_id": cluster.id, "identity": row[0]}).one()
    return member_from(list(row))


def _unique(
    connection: Connection, query: Select[*Columns], params: dict[str, object], identity: str
) -> Row[*Columns] | None:
    rows = connection.execute(query, params).all()
    if len(rows) > 1:
        raise MultipleChoices(
            f"Multiple results found matching the query criteria '{identity}'. "
            "Please be more specific."
        )
    return rows[0] if rows else None
