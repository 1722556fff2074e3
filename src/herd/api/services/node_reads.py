"""Reading nodes for ``GET /v1/nodes`` and ``GET /v1/nodes/<id>``: plain values to JSON.

Each read is one statement of ``herd.store.node_reads`` (a list adds the lookup of its
``cluster_id``); rows are turned into Senlin's shapes without ORM objects.
"""

from __future__ import annotations

from herd.api import pagination
from herd.api.auth import RequestContext, for_caller
from herd.api.services import agent_regions, deletions
from herd.api.view_models import NodeView
from herd.api.views import node_view_from_values
from herd.errors import InvalidRequest, NotFound
from herd.store import node_reads
from herd.store.database import Connection, Session
from herd.store.lookup import Scope, find
from herd.store.models import ClusterRow, NodeRow
from herd.types import NodeStatus, ResourceType

LIST_SPEC = pagination.ListSpec(
    model=NodeRow,
    sort_keys={
        "index": NodeRow.index,
        "name": NodeRow.name,
        "status": NodeRow.status,
        "init_at": NodeRow.init_at,
        "created_at": NodeRow.created_at,
        "updated_at": NodeRow.updated_at,
        # herd's addition (docs/api.md)
        "health": NodeRow.health,
    },
    default_sort=("init_at",),
    # health, zone and region: herd's additions (docs/api.md)
    filters={"name": NodeRow.name, "status": NodeRow.status, "health": NodeRow.health},
    valid={"status": pagination.one_of(NodeStatus)},
    extra=frozenset({"cluster_id", "show_details", *node_reads.PLACEMENT_KEYS}),
)


def details_wanted(params: dict[str, str]) -> bool:
    value = params.get("show_details")
    return value is not None and pagination.parse_bool("show_details", value)


def get_node(connection: Connection, ctx: RequestContext, identity: str, details: bool) -> NodeView:
    row = node_reads.read_node(
        connection, identity, ctx.scope(), agent=ctx.is_agent, regions=ctx.regions
    )
    return for_caller(ctx, node_view_from_values(row, ctx.version, details))


def _cluster_id(session: Session, ctx: RequestContext, identity: str, scope: Scope) -> str:
    try:
        cluster = find(session, ClusterRow, identity, scope, "cluster")
        deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, cluster)
        agent_regions.hide_cluster(session, ctx, cluster)
    except NotFound:
        raise InvalidRequest(
            f"Cannot find the given cluster: {identity}.", field="cluster_id"
        ) from None
    return cluster.id


def list_nodes(
    session: Session, ctx: RequestContext, params: pagination.ListParams
) -> list[NodeView]:
    scope = ctx.list_scope(params.global_project)
    details = details_wanted(params.extra)
    query = node_reads.node_select(agent=ctx.is_agent)
    if ctx.regions is not None:
        # a regional agent token: nodes placed elsewhere are left out (issue 24)
        query = node_reads.where_placed(query, "region", ctx.regions)
    cluster_identity = params.extra.get("cluster_id")
    if cluster_identity:
        query = query.where(
            NodeRow.cluster_id == _cluster_id(session, ctx, cluster_identity, scope)
        )
    for key in node_reads.PLACEMENT_KEYS:
        if params.extra.get(key):
            query = node_reads.where_placed(query, key, [params.extra[key]])
    rows = node_reads.fetch(session, pagination.page(session, query, LIST_SPEC, params, scope))
    version = ctx.version
    return [for_caller(ctx, node_view_from_values(row, version, details)) for row in rows]
