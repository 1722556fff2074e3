"""What a cancelled action leaves behind, made consistent (issue 24).

A cancel stops an action between driver calls: calls under way finish and are
written, the children that never ran end CANCELLED. Before this module the rest
stayed as the action had left it: a cluster RESIZING or CREATING for good,
``desired_capacity`` disagreeing with the members, node rows planned for creations
that never ran (no resource behind them), members DELETING whose deletion never
started. In the transaction that ends the action:

* a node row planned by a creation that never ran is removed (it has no resource);
* a member whose deletion never ran is ACTIVE again (its resource is untouched);
* a change of size stops where it is: ``desired_capacity`` becomes the number of
  members, within ``min_size`` and ``max_size``;
* the cluster's status is evaluated from its members, as at the end of every action.

A member whose deletion never ran and that has no resource (a failed create) is
ERROR with the same reason: it has nothing to be ACTIVE with, and DELETING would say
that something is still deleting it.

Deletions keep their own rule (docs/deletion.md): an accepted deletion is never
dropped, and one cancelled is a deletion that did not finish, as a failed one. A
cancelled CLUSTER_DELETE leaves its tombstone ERROR with the reason (listed by
``GET /v1/deletions``; the next DELETE finishes it), the members whose deletion never
ran are ACTIVE again, and the cluster is what is left, its status from its members (it
said DELETING "Deletion in progress." with no action running, found by the cancel
matrix). A cancelled NODE_DELETE leaves its node ERROR and its tombstone ERROR, both
saying a new DELETE finishes it, when the node is still there (the resource is what
it was: untouched, or whatever a failed call left); when the node is gone (its call
ran before the cancel landed), its tombstone went with it (``nodes.delete_many``; the
bulk delete left it DELETING before). Both said DELETING with nothing running until the
next DELETE or engine start before.
"""

from __future__ import annotations

from herd.engine.clusters import evaluate_in
from herd.engine.execution import ActionExecution
from herd.engine.recovery import INTERRUPTED
from herd.store import actions as action_store
from herd.store import clusters, tombstones
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.store.models import ClusterRow
from herd.types import ActionName, ActionStatus, ClusterStatus, NodeStatus, ResourceType

#: cluster actions whose cancel leaves the cluster at the size it reached
SIZE_CHANGES = frozenset(
    {
        ActionName.CLUSTER_CREATE,
        ActionName.CLUSTER_SCALE_OUT,
        ActionName.CLUSTER_SCALE_IN,
        ActionName.CLUSTER_RESIZE,
        ActionName.CLUSTER_DEL_NODES,
        ActionName.CLUSTER_ADD_NODES,
        ActionName.NODE_CREATE,
        ActionName.NODE_DELETE,
    }
)
#: why a member whose deletion was cancelled before it started is ACTIVE (or ERROR) again
DELETION_CANCELLED = "Deletion cancelled before it started"
#: why a node whose own deletion (NODE_DELETE) was cancelled is ERROR, and its tombstone too
NODE_DELETION_CANCELLED = "Deletion cancelled; a new DELETE finishes it."
_NEVER_RAN = (ActionStatus.CANCELLED, ActionStatus.FAILED)


def settle_cancelled(session: Session, ex: ActionExecution, now: float) -> None:
    """Make the cluster (or node) a cancelled action worked on consistent again."""
    if ex.action is ActionName.CLUSTER_DELETE:
        _stop_cluster_deletion(session, ex, now)
        return
    if ex.action is ActionName.NODE_DELETE:
        _stop_node_deletion(session, ex, now)
    else:
        _undo_children_that_never_ran(session, ex.id, now)
    cluster_id = ex.target if ex.action.is_cluster_action else ex.cluster_id
    if not cluster_id:
        return
    cluster = clusters.get(session, cluster_id)
    if cluster is None or cluster.status == ClusterStatus.DELETING:
        return
    if ex.action in SIZE_CHANGES:
        session.flush()
        _stop_at(cluster, clusters.member_count(session, cluster.id))
    evaluate_in(session, cluster, ex.action, user=ex.user, now=now)


def _stop_cluster_deletion(session: Session, ex: ActionExecution, now: float) -> None:
    cluster = clusters.get(session, ex.target)
    if cluster is None:  # deleted before the cancel landed
        return
    _undo_children_that_never_ran(session, ex.id, now)
    session.flush()
    members = clusters.member_count(session, cluster.id)
    tombstones.mark_error(session, ResourceType.CLUSTER, cluster.id, deletion_cancelled(members))
    _stop_at(cluster, members)
    evaluate_in(session, cluster, ex.action, user=ex.user, now=now)


def _stop_node_deletion(session: Session, ex: ActionExecution, now: float) -> None:
    """The node a cancelled NODE_DELETE leaves: ERROR with an ERROR tombstone, or gone.

    Its own child (``remove_nodes``) is the only one: a call that ran has been written
    (the node is gone or ERROR with the driver's error), one that never ran left the
    node as the API or the plan made it, DELETING.
    """
    node = node_store.get(session, ex.target)
    if node is None:  # its call ran: the writer took the tombstone with the row
        return
    tombstone = tombstones.get(session, ResourceType.NODE, node.id)
    # Only this deletion's: a new one (a forced DELETE after the cancel) owns it otherwise.
    if tombstone is not None and tombstone.action_id in (ex.id, None):
        tombstones.mark_error(session, ResourceType.NODE, node.id, NODE_DELETION_CANCELLED)
    if _left_deleting(node.status, node.status_reason):
        node.status, node.status_reason = NodeStatus.ERROR, NODE_DELETION_CANCELLED
        node.updated_at = now


def _stop_at(cluster: ClusterRow, members: int) -> None:
    """The desired capacity is the members there are, within the cluster's sizes."""
    upper = cluster.max_size if cluster.max_size >= 0 else members
    cluster.desired_capacity = max(cluster.min_size, min(members, upper))


def deletion_cancelled(members: int) -> str:
    return f"Deletion cancelled with {members} member(s) left; a new DELETE finishes it."


def _undo_children_that_never_ran(session: Session, parent_id: str, now: float) -> None:
    """Planned node rows without a resource go; members whose deletion never ran stay
    (ACTIVE, or ERROR without a resource).

    A child the engine cancelled never had its driver call: calls under way are
    waited for and written before the cancel ends the children (``NodeOperations.run``).
    """
    creations: list[str] = []
    deletions: list[str] = []
    for child in action_store.children(session, parent_id):
        if child.status not in _NEVER_RAN:
            continue
        if child.action == ActionName.NODE_CREATE:
            creations.append(child.target)
        elif child.action == ActionName.NODE_DELETE:
            deletions.append(child.target)
    unmade = [n.id for n in node_store.get_many(session, creations) if not n.physical_id]
    node_store.delete_many(session, unmade)
    # ACTIVE again with its resource; ERROR without one (a failed create being removed)
    kept = [
        {"id": n.id, "status": NodeStatus.ACTIVE if n.physical_id else NodeStatus.ERROR}
        | {"status_reason": DELETION_CANCELLED, "updated_at": now}
        for n in node_store.get_many(session, deletions)
        if _left_deleting(n.status, n.status_reason)
    ]
    node_store.update_many(session, kept)


def _left_deleting(status: str, reason: str | None) -> bool:
    """DELETING, or the ERROR ``end_children`` gives a node its ended child left half-way."""
    if status == NodeStatus.DELETING:
        return True
    return status == NodeStatus.ERROR and (reason or "").startswith(INTERRUPTED)
