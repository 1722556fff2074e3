"""CLUSTER_REPLACE_NODES as Senlin ran it: each original leaves, each replacement joins.

Senlin's REPLACE_NODES made a NODE_LEAVE of every original (it stays, an orphan
node: no cluster, index -1) and a NODE_JOIN of every replacement (it takes the
cluster's next index). Nothing is destroyed: whoever asked for the replacement
deletes the original when they want to. herd does both sides in one
transaction, so a crash leaves either every pair swapped or none.
"""

from __future__ import annotations

from herd.engine.clusters import eval_status, load_cluster
from herd.engine.execution import ActionExecution, Outcome
from herd.store import clusters, events
from herd.store import nodes as node_store
from herd.types import ActionName


def replace_nodes(ex: ActionExecution) -> Outcome:
    """Swap members for orphan nodes: originals become orphans, replacements join."""
    pairs = {str(k): str(v) for k, v in dict(ex.inputs.get("candidates") or {}).items()}
    cluster = load_cluster(ex)
    now = ex.ctx.now()
    with ex.ctx.database.write() as session:
        row = clusters.get(session, cluster.id)
        assert row is not None
        for old_id, new_id in pairs.items():
            old = node_store.get(session, old_id)
            new = node_store.get(session, new_id)
            if old is None or new is None:
                missing = [i for i, node in ((old_id, old), (new_id, new)) if node is None]
                return Outcome.failed(f"Nodes not found: {missing}.")
            if old.cluster_id is None and new.cluster_id == cluster.id:
                continue  # swapped by a run of this action that stopped before it ended
            if old.cluster_id != cluster.id:
                return Outcome.failed(f"Node {old_id} is not a member of the cluster {cluster.id}.")
            if new.cluster_id:
                return Outcome.failed(
                    f"Node {new_id} is already owned by cluster {new.cluster_id}."
                )
            old.cluster_id, old.index, old.updated_at = None, -1, now
            new.cluster_id, new.index, new.updated_at = cluster.id, row.next_index, now
            row.next_index += 1
            for node, verb, reason in (
                (old, ActionName.NODE_LEAVE, "Node left cluster."),
                (new, ActionName.NODE_JOIN, "Node joined cluster."),
            ):
                fields = ex.node_event_row(node, node.status, reason)
                fields["action"] = verb
                fields["cluster_id"] = cluster.id
                events.record(session, now=now, **fields)
    ex.outputs["nodes_replaced"] = pairs
    eval_status(ex, cluster.id)
    return Outcome.ok("Completed replacing nodes.")
