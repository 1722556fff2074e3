"""NODE_CREATE's driver call, made by the node's own action (no child action).

Senlin recorded one NODE_CREATE per node created through ``POST /v1/nodes``;
herd used to store a second, derived NODE_CREATE only to run the call through
the child machinery. Here the action makes the call itself and writes the
result with the same writer the children use (node row, event), passing a
child id that names no action row, so the writer ends no action: the runner
ends this one with its outcome. A resumed action calls again; the driver call
is idempotent per node (a node whose resource exists is adopted).
"""

from __future__ import annotations

from herd.engine.clusters import placements
from herd.engine.execution import ActionExecution
from herd.engine.node_calls import call_driver, load_targets
from herd.engine.node_results import ChildResults, NodeResultWriter
from herd.store import nodes as node_store
from herd.types import ActionName, NodeStatus

#: the "child id" of a call an action makes for itself: no action row has it
OWN_CALL = ""


def create_own_node(ex: ActionExecution, node_id: str) -> ChildResults:
    """Create the node's resource and record it; the results, as the children's would be."""
    with ex.ctx.database.write() as session:
        row = node_store.get(session, node_id)
        if row is not None:
            row.status, row.status_reason = NodeStatus.CREATING, "Creation in progress"
            # where the cluster's policies placed it (a zone, the affinity policy's group)
            placed = placements(ex.data, 1)[0]
            if placed:
                data = dict(row.data or {})
                row.data = {**data, "placement": {**(data.get("placement") or {}), **placed}}
    targets = load_targets(ex.ctx, [node_id])
    item = call_driver(ex.ctx, OWN_CALL, ActionName.NODE_CREATE, node_id, targets.get(node_id), {})
    results = ChildResults()
    NodeResultWriter(ex.ctx).flush(ex, [item], results, {OWN_CALL: ActionName.NODE_CREATE})
    # A cancel asked for while the call ran takes effect now, as it did for a child: the
    # result is recorded, and the action ends CANCELLED.
    ex.check_cancel()
    return results
