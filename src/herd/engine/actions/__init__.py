"""Action handlers, one module per family, and the table that maps action names to them."""

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
