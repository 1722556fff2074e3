"""The cluster a metadata call reads or changes (api/routers/cluster_metadata.py)."""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.services import deletions
from herd.api.services.common import refuse_if_deleting
from herd.store.database import Session
from herd.store.lookup import find
from herd.store.models import ClusterRow
from herd.types import ResourceType


def metadata_owner(
    session: Session, ctx: RequestContext, identity: str, *, change: bool
) -> ClusterRow:
    """The caller's cluster (agents do not see one being deleted; none being deleted changes)."""
    cluster: ClusterRow = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, cluster)
    if change:
        refuse_if_deleting(session, ResourceType.CLUSTER, [cluster.id])
    return cluster
