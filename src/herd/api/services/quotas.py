"""Per-project quotas: clusters (Senlin's ``max_clusters_per_project``) and nodes (herd's).

Senlin checks the cluster quota when a cluster is created and answers 403 with
"Quota exceeded for resources."; herd does the same, and checks the node quota (off by
default) wherever a request asks for more nodes: a cluster's initial capacity, a node
create, a scale-out with a count, a resize that grows.
"""

from __future__ import annotations

from herd.api.deps import Services
from herd.errors import OverQuota
from herd.store import quotas
from herd.store.database import Session

OVER_QUOTA = "Quota exceeded for resources."


def check_cluster_quota(session: Session, services: Services, project: str) -> None:
    if quotas.clusters_in_project(session, project) >= services.settings.max_clusters_per_project:
        raise OverQuota(OVER_QUOTA)


def check_node_quota(session: Session, services: Services, project: str, more: int) -> None:
    limit = services.settings.max_nodes_per_project
    if limit <= 0 or more <= 0:
        return
    if quotas.nodes_in_project(session, project) + more > limit:
        raise OverQuota(OVER_QUOTA)
