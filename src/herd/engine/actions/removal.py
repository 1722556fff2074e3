"""Taking members away: the step every shrink ends with (scale-in, resize, del-nodes, delete)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from herd.engine.execution import ActionExecution
from herd.engine.node_results import ChildResults
from herd.engine.nodeops import NodeOperations


@dataclass(frozen=True)
class RemovalPlan:
    """What the deletion policy (or the defaults) decided for the victims."""

    node_ids: Sequence[str]
    destroy: bool
    grace_period: float
    reduce_desired_capacity: bool
    hooks: Mapping[str, object] | None


def removal_plan(
    ex: ActionExecution,
    node_ids: Sequence[str],
    *,
    destroy_default: bool,
    reduce_default: bool = True,
) -> RemovalPlan:
    """Merge the policy's ``data['deletion']`` and ``data['hooks']`` with the defaults.

    As in Senlin, when a deletion policy has decided, its values win over the
    request's ``destroy_after_deletion`` (docs/api.md records this).
    """
    deletion = ex.data.get("deletion") or {}
    has_policy = "destroy_after_deletion" in deletion
    destroy = bool(deletion["destroy_after_deletion"]) if has_policy else destroy_default
    grace = float(deletion.get("grace_period") or 0)
    reduce = bool(deletion.get("reduce_desired_capacity", reduce_default))
    hooks = ex.data.get("hooks") or None
    return RemovalPlan(list(node_ids), destroy, max(grace, 0.0), reduce, hooks)


def _wait(ex: ActionExecution, plan: RemovalPlan) -> float:
    ex.wait(plan.grace_period)
    return plan.grace_period


def remove_nodes(ex: ActionExecution, nodeops: NodeOperations, plan: RemovalPlan) -> ChildResults:
    """Run the removal: grace period, lifecycle hooks, then destroy or release.

    A resumed action (its children already stored) goes straight to running them.
    """
    if not ex.planned():
        if not plan.node_ids:
            return ChildResults()
        if plan.grace_period > 0:
            ex.outputs["grace_period_waited"] = ex.once("grace_period", lambda: _wait(ex, plan))
        nodeops.plan_removal(ex, plan.node_ids, destroy=plan.destroy, hooks=plan.hooks)
    results = nodeops.run(ex)
    ex.outputs["nodes_removed"] = sorted(results.succeeded)
    if results.abandoned:
        ex.outputs["nodes_kept_by_hook"] = sorted(results.abandoned)
    return results
