"""Preview of a shrink: the victims the action would remove now, and why.

Runs the same BEFORE checks (:func:`herd.policies.checks.run_checks`) and the
same victim decision (:func:`herd.policies.shrink.plan_shrink`) as the engine,
on a snapshot, with no side effects. The cooldown of a scaling policy is not
applied (the bindings come without ``last_op``): a preview asks "which nodes",
not "may I scale now".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from herd.domain.snapshots import ClusterSnapshot
from herd.errors import InvalidRequest, PolicyRejected
from herd.policies.base import PolicyContext
from herd.policies.checks import BoundPolicy, run_checks
from herd.policies.shrink import plan_shrink
from herd.policies.victims import Victims
from herd.types import ActionName, Phase


def preview_shrink(
    action: ActionName,
    cluster: ClusterSnapshot,
    bound: Sequence[BoundPolicy],
    inputs: Mapping[str, object],
    now: float,
    seed: int,
    max_nodes_per_cluster: int = 1000,
) -> Victims:
    """Victims a shrinking action with these inputs and seed would remove now, in order.

    Args:
        action: CLUSTER_SCALE_IN, CLUSTER_RESIZE or CLUSTER_DEL_NODES.
        cluster: The cluster snapshot.
        bound: The enabled attached policies, in ascending priority order.
        inputs: The action's inputs, as the API would store them.
        now: The current time (epoch seconds).
        seed: The seed the real action would run with.
        max_nodes_per_cluster: The service-wide cap.

    Raises:
        PolicyRejected: When a policy's BEFORE check fails (the action would fail).
        InvalidRequest: When the action would fail for another reason (size bounds,
            protected members leaving too few to remove).
    """
    without_cooldown = [replace(b, last_op=None) for b in bound]
    outcome = run_checks(
        without_cooldown,
        PolicyContext(
            action=action,
            phase=Phase.BEFORE,
            cluster=cluster,
            inputs=inputs,
            data={},
            now=now,
            seed=seed,
            max_nodes_per_cluster=max_nodes_per_cluster,
        ),
    )
    if not outcome.ok:
        raise PolicyRejected(outcome.failed_policy, outcome.failed_reason)
    plan = plan_shrink(
        action,
        cluster,
        inputs,
        outcome.data,
        seed,
        max_nodes_per_cluster,
        rules=_rules(outcome.notes.get("rules")),
    )
    if plan.error:
        raise InvalidRequest(plan.error)
    return plan.victims


def _rules(value: object) -> list[str] | None:
    # the deletion policy's notes: the rule of each victim, in order
    return [str(rule) for rule in value] if isinstance(value, list) else None
