"""Node reads for the API's hot paths: one Core query per read, plain column values out.

``GET /v1/nodes/<id>`` and ``GET /v1/nodes`` used to load ORM rows and then ask for the
profile names, the health manager's check records and (for agents) the tombstones in further
queries. Here the node, its profile's name, its last check and, for agents, whether it or its
cluster is being deleted come back in one statement as plain tuples: no identity map, no
attribute instrumentation, nothing to expire. ``herd.api.views.node_view_from_values`` turns a
row into Senlin's JSON shape.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Exists,
    Row,
    Select,
    String,
    and_,
    any_,
    bindparam,
    exists,
    select,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import QueryableAttribute, Session

from herd.errors import MultipleChoices, NotFound
from herd.store.lookup import Scope
from herd.store.models import NodeCheckRow, NodeRow, ProfileRow, TombstoneRow
from herd.types import ResourceType

T = TypeVar("T")

#: the node's own columns, in the order ``node_view_from_values`` reads them
NODE_COLUMNS = (
    NodeRow.id,
    NodeRow.name,
    NodeRow.cluster_id,
    NodeRow.physical_id,
    NodeRow.profile_id,
    NodeRow.user,
    NodeRow.project,
    NodeRow.domain,
    NodeRow.index,
    NodeRow.role,
    NodeRow.init_at,
    NodeRow.created_at,
    NodeRow.updated_at,
    NodeRow.status,
    NodeRow.status_reason,
    NodeRow.meta_data,
    NodeRow.data,
    NodeRow.dependents,
    NodeRow.health,
    NodeRow.health_reason,
    NodeRow.health_marked_by,
    NodeRow.health_marked_at,
    NodeRow.health_generation,
    NodeRow.deleted_at,
    NodeRow.tainted,
)
#: full ids are 36 characters: anything shorter is a name or a short id
FULL_ID = 36
#: the position of the node's project in a row of :func:`node_select`
PROJECT = 6
#: what follows the node's columns: its profile's name and its last check
EXTRA_COLUMNS = (
    ProfileRow.name,
    NodeCheckRow.checked_at,
    NodeCheckRow.mode,
    NodeCheckRow.healthy,
    NodeCheckRow.reason,
)


def _hidden(
    resource_type: ResourceType, id_column: QueryableAttribute[T] | ColumnElement[T]
) -> Exists:
    return exists().where(
        and_(TombstoneRow.resource_type == resource_type, TombstoneRow.resource_id == id_column)
    )


def node_select(*, agent: bool) -> Select[Any]:
    """The node columns joined with their profile name and last check.

    For an agent the statement leaves out nodes that, or whose cluster, carry a tombstone
    (agents see resources being deleted as gone, docs/deletion.md).
    """
    query = (
        select(*NODE_COLUMNS, *EXTRA_COLUMNS)
        .select_from(NodeRow)
        .outerjoin(ProfileRow, ProfileRow.id == NodeRow.profile_id)
        .outerjoin(NodeCheckRow, NodeCheckRow.node_id == NodeRow.id)
    )
    if agent:
        query = query.where(
            ~_hidden(ResourceType.NODE, NodeRow.id),
            ~_hidden(ResourceType.CLUSTER, NodeRow.cluster_id),
        )
    return query


#: placement keys a node list filters on (herd's ``zone`` and ``region`` filters)
PLACEMENT_KEYS = {"zone": "zone", "region": "region_name"}


def where_placed(query: Select[Any], key: str, values: Sequence[str]) -> Select[Any]:
    """Only nodes whose ``data.placement.<key>`` is one of ``values`` (JSON path on both stores)."""
    placed = NodeRow.data[("placement", PLACEMENT_KEYS[key])].as_string()
    return query.where(placed.in_(list(values)))


def fetch(session: Session, query: Select[Any]) -> Sequence[Row[Any]]:
    """Run a statement built on :func:`node_select`."""
    return session.execute(query).all()


@functools.cache
def _lookup(by: str, scoped: bool, agent: bool, regional: bool = False) -> Select[Any]:
    """The statement finding one node ``by`` id, name or id prefix, built once.

    Reusing one statement object spares SQLAlchemy building it and computing its cache
    key on every request: the values travel as bound parameters. ``regional`` keeps only
    nodes placed in the ``regions`` parameter (a regional agent token), so a name shared
    with another region's node is not ambiguous to it and never reveals that node.
    """
    query = node_select(agent=False)
    if scoped:
        query = query.where(NodeRow.project == bindparam("project"))
    if regional:
        placed = NodeRow.data[("placement", PLACEMENT_KEYS["region"])].as_string()
        query = query.where(placed.in_(bindparam("regions", expanding=True)))
    if agent:
        # Tombstone visibility travels with the row: no second round trip.
        query = query.add_columns(
            _hidden(ResourceType.NODE, NodeRow.id),
            _hidden(ResourceType.CLUSTER, NodeRow.cluster_id),
        )
    if by == "id":
        return query.where(NodeRow.id == bindparam("identity"))
    if by == "name":
        return query.where(NodeRow.name == bindparam("identity")).limit(2)
    return query.where(NodeRow.id.like(bindparam("identity"), escape="\\")).limit(2)


def read_node(
    connection: Connection | Session,
    identity: str,
    scope: Scope,
    *,
    agent: bool,
    regions: Sequence[str] | None = None,
) -> Row[Any]:
    """One node by id, unique name or unique short id, with its profile name and last check.

    ``regions`` (a regional agent token's) leaves out nodes placed in other regions.

    Raises:
        NotFound: nothing visible matches (for an agent: also a node being deleted or,
            with ``regions``, placed elsewhere).
        MultipleChoices: a name or short id matches more than one node.
    """
    scoped = not scope.all_projects
    params: dict[str, object] = {"project": scope.project} if scoped else {}
    regional = regions is not None
    if regions is not None:
        params["regions"] = list(regions)
    row: Row[Any] | None = None
    if len(identity) == 36:
        row = connection.execute(
            _lookup("id", scoped, agent, regional), {**params, "identity": identity}
        ).first()
    if row is None:
        row = _unique(
            connection, _lookup("name", scoped, agent, regional), params, identity, identity
        )
    if row is None and len(identity) < 36:
        escaped = identity.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        row = _unique(
            connection, _lookup("prefix", scoped, agent, regional), params, escaped + "%", identity
        )
    if row is None:
        raise NotFound("node", identity)
    if agent and any(tuple(row)[-2:]):
        raise NotFound("node", row[0])
    return row


def _unique(
    connection: Connection | Session,
    query: Select[Any],
    params: dict[str, object],
    value: str,
    identity: str,
) -> Row[Any] | None:
    rows = connection.execute(query, {**params, "identity": value}).all()
    if len(rows) > 1:
        raise MultipleChoices(
            f"Multiple results found matching the query criteria '{identity}'. "
            "Please be more specific."
        )
    return rows[0] if rows else None


@functools.cache
def _by_ids(postgresql: bool) -> Select[Any]:
    """Nodes by full id, for :func:`read_nodes_by_id`, built once.

    On PostgreSQL the ids travel as one array (``= ANY(:ids)``): one statement text
    whatever the number of ids, so the server's prepared statement is reused.
    """
    query = node_select(agent=False)
    if postgresql:
        return query.where(NodeRow.id == any_(bindparam("ids", type_=ARRAY(String))))
    return query.where(NodeRow.id.in_(bindparam("ids", expanding=True)))


def read_nodes_by_id(connection: Connection, node_ids: Sequence[str]) -> dict[str, Row[Any]]:
    """The nodes of these full ids that exist (in any project), each with the columns of
    :func:`node_select`, in one statement. The caller decides who may see which."""
    statement = _by_ids(connection.dialect.name == "postgresql")
    return {row[0]: row for row in connection.execute(statement, {"ids": list(node_ids)})}


#: what a health round reads of each member
_HEALTH_COLUMNS = (
    NodeRow.id,
    NodeRow.name,
    NodeRow.index,
    NodeRow.cluster_id,
    NodeRow.physical_id,
    NodeRow.data,
    NodeRow.profile_id,
    NodeRow.status,
    NodeRow.status_reason,
    NodeRow.updated_at,
    NodeRow.init_at,
    NodeRow.health,
    NodeRow.health_marked_by,
)

#: what watching members for lifecycle events reads of each
_WATCH_COLUMNS = (
    NodeRow.id,
    NodeRow.cluster_id,
    NodeRow.physical_id,
    NodeRow.status,
    NodeRow.updated_at,
    NodeRow.profile_id,
    NodeRow.data,
)


def health_rows(session: Session, cluster_id: str) -> Sequence[Row[Any]]:
    """The members of a cluster as a health round reads them (plain columns, no ORM objects)."""
    return session.execute(select(*_HEALTH_COLUMNS).where(NodeRow.cluster_id == cluster_id)).all()


def watch_rows(session: Session, cluster_ids: Collection[str]) -> Sequence[Row[Any]]:
    """The members of several clusters as the lifecycle-event watch reads them."""
    return session.execute(
        select(*_WATCH_COLUMNS).where(NodeRow.cluster_id.in_(list(cluster_ids)))
    ).all()
