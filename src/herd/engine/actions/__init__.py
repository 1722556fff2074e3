"""Action handlers, one module per family, and the table that maps action names to them.

The rule every handler follows: **a handler may run again over its own stored state.**
An engine that dies mid-action has its top-level actions re-queued (``engine/recovery.py``),
and the resumed run starts the handler from the top, with the data, children and rows the
first run left. So a handler never decides twice and never acts twice:

* Every decision a later side effect depends on (a desired capacity counted from the members,
  the victims of a shrink, the profile a node had, whether a policy was attached) is made
  through ``ex.once(key, compute)`` (``engine/execution.py``). The result is stored in the
  action's data before ``once`` returns, so before the side effect it guards; a resumed run
  reads it instead of computing again (Temporal's recorded results, without the replay).
  Counting again after a restart is how "desired capacity doubled" happened.
* A driver call the handler makes itself (a recovery, an operation) goes through ``once``
  too: its result is stored when it returns, so a resumed run does not call again (at least
  once: the engine may die between the call and the store).
* A plan of child actions is its own record: the node rows and the children are written in
  one transaction (``engine/nodeops.py``), and ``ex.planned()`` (one EXISTS query,
  ``store.actions.has_children``) says it was made. A resumed parent runs only the children
  that have not ended, and a child's node lock passes to its resumed parent (``store/locks.py``).
* Whatever else a handler writes is written as a target state (set this status, attach this
  node if it is not attached), never as a change relative to what it reads.

``tests/functional/engine/test_run_twice.py`` runs every handler a second time over the state
its first run stored and fails on any second side effect.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from herd.engine.actions.cluster_health import HealthHandlers
from herd.engine.actions.cluster_lifecycle import LifecycleHandlers
from herd.engine.actions.cluster_scaling import ScalingHandlers
from herd.engine.actions.deletion_purge import PurgeHandlers
from herd.engine.actions.node_actions import NodeHandlers
from herd.engine.actions.operations import OperationHandlers
from herd.engine.actions.replace_nodes import replace_nodes
from herd.engine.nodeops import NodeOperations
from herd.engine.runner import Handler
from herd.types import ActionName


def handler_table(nodeops: NodeOperations, pool: ThreadPoolExecutor) -> dict[ActionName, Handler]:
    health = HealthHandlers(nodeops, pool)
    scaling = ScalingHandlers(nodeops)
    lifecycle = LifecycleHandlers(nodeops, health)
    nodes = NodeHandlers(nodeops)
    operations = OperationHandlers(pool)
    return {
        ActionName.CLUSTER_CREATE: lifecycle.create,
        ActionName.CLUSTER_DELETE: lifecycle.delete,
        ActionName.CLUSTER_UPDATE: lifecycle.update,
        ActionName.CLUSTER_ATTACH_POLICY: lifecycle.attach_policy,
        ActionName.CLUSTER_DETACH_POLICY: lifecycle.detach_policy,
        ActionName.CLUSTER_UPDATE_POLICY: lifecycle.update_policy,
        ActionName.CLUSTER_SCALE_OUT: scaling.scale_out,
        ActionName.CLUSTER_SCALE_IN: scaling.scale_in,
        ActionName.CLUSTER_RESIZE: scaling.resize,
        ActionName.CLUSTER_ADD_NODES: scaling.add_nodes,
        ActionName.CLUSTER_DEL_NODES: scaling.del_nodes,
        ActionName.CLUSTER_REPLACE_NODES: replace_nodes,
        ActionName.CLUSTER_CHECK: health.check,
        ActionName.CLUSTER_RECOVER: health.recover,
        ActionName.CLUSTER_REPLACE_UNHEALTHY: health.replace_unhealthy,
        ActionName.NODE_CREATE: nodes.create,
        ActionName.NODE_DELETE: nodes.delete,
        ActionName.NODE_UPDATE: nodes.update,
        ActionName.NODE_CHECK: nodes.check,
        ActionName.NODE_RECOVER: nodes.recover,
        ActionName.NODE_OPERATION: operations.node_operation,
        ActionName.CLUSTER_OPERATION: operations.cluster_operation,
        ActionName.DELETION_PURGE: PurgeHandlers().purge,
    }
