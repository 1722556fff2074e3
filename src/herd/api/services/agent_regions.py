"""What a regional agent token reads: the nodes placed in its regions and the clusters
spanning them (issue 24, least privilege).

A node's region is where placement put it (``data.placement.region_name``, the key the
``region`` list filter and ``herd agent`` use). A cluster is the agent's when it spans one
of its regions (a member placed there, or the region in ``data['regions']``): that is what
``herd agent`` lists and shows to make and remove its copies. Its view lists (or counts)
only the members in the token's regions, so the ids of other regions' nodes never reach it.
Everything outside is 404, never 403: a 403 would say the resource exists.
"""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.view_models import ClusterView
from herd.errors import NotFound
from herd.store import region_reads
from herd.store.database import Session
from herd.store.listing import Clause, spans_any_region
from herd.store.models import ClusterRow
from herd.types import ResourceType


def cluster_filter(ctx: RequestContext) -> list[Clause]:
    """WHERE clauses that leave clusters outside the token's regions out of its lists."""
    return [] if ctx.regions is None else [spans_any_region(ctx.regions)]


def hide_cluster(session: Session, ctx: RequestContext, row: ClusterRow) -> None:
    """404 for a cluster that spans none of the token's regions.

    Raises:
        NotFound: the caller's regions do not include the cluster's.
    """
    if ctx.regions is None:
        return
    if not region_reads.cluster_spans(session, row.id, ctx.regions):
        raise NotFound(ResourceType.CLUSTER, row.id)


def regional_members(
    session: Session, ctx: RequestContext, views: list[ClusterView]
) -> list[ClusterView]:
    """``views`` with their ``nodes`` lists (or ``node_count``, with ``show_nodes=false``)
    cut to the members in the token's regions."""
    if ctx.regions is None or not views:
        return views
    rows = region_reads.members_in(session, [view["id"] for view in views], ctx.regions)
    kept = {node_id for node_id, _cluster in rows}
    for view in views:
        if "nodes" in view:
            view["nodes"] = [node for node in view["nodes"] if node in kept]
        if "node_count" in view:
            view["node_count"] = sum(1 for _node, cluster in rows if cluster == view["id"])
    return views
