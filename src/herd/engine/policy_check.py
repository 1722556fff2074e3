"""Running a cluster's enabled policy bindings BEFORE or AFTER an action.

The decisions are :func:`herd.policies.checks.run_checks` (the preview runs the
same function); this module loads the bindings and the snapshot from the store
and saves what the policies decided. The first ERROR fails the action with
``Policy check failure: Failed policy '<name>': <reason>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from herd.engine.context import EngineContext
from herd.engine.execution import ActionExecution
from herd.policies.base import PolicyContext
from herd.policies.checks import BoundPolicy, run_checks
from herd.policies.scaling import ScalingPolicy
from herd.store import bindings
from herd.store.database import Session
from herd.store.snapshots import load_cluster_snapshot
from herd.types import Phase


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    reason: str = ""


def load_bound(ctx: EngineContext, session: Session, cluster_id: str) -> list[BoundPolicy]:
    """The cluster's enabled policies, instantiated, in the order they run."""
    loaded = []
    for binding, policy in bindings.enabled_policies(session, cluster_id):
        _, instance = ctx.policies.create(policy.spec)
        if isinstance(instance, ScalingPolicy):
            # Senlin's cooldown text names the policy by its id ("Policy <id> cooldown ...").
            instance.policy_id = policy.id
        loaded.append(
            BoundPolicy(
                binding.id, policy.name, instance, binding.last_op, dict(binding.data or {})
            )
        )
    return loaded


def policy_check(ex: ActionExecution, phase: Phase) -> CheckResult:
    """Run the bindings of ``ex``'s cluster for ``phase``; update ``ex.data`` in place."""
    ctx = ex.ctx
    if ex.cluster_id is None:
        return CheckResult(True)
    with ctx.database.read() as session:
        bound = load_bound(ctx, session, ex.cluster_id)
        if not bound:
            return CheckResult(True)
        snapshot = load_cluster_snapshot(session, ex.cluster_id)
    if snapshot is None:
        return CheckResult(True)
    outcome = run_checks(
        bound,
        PolicyContext(
            action=ex.action,
            phase=phase,
            cluster=snapshot,
            inputs=ex.inputs,
            data=ex.data,
            now=ctx.now(),
            seed=ex.seed,
            cause=ex.cause,
            target_node_id=ex.target if not ex.action.is_cluster_action else None,
            max_nodes_per_cluster=ctx.settings.max_nodes_per_cluster,
            action_id=ex.id,
        ),
    )
    if not outcome.applied:
        return CheckResult(True)
    ex.data = outcome.data
    ex.notes.update(outcome.notes)
    ex.save_data()
    if outcome.touched or outcome.binding_data:
        with ctx.database.write() as session:
            bindings.touch_last_op(session, outcome.touched, ctx.now())
            bindings.merge_data(session, outcome.binding_data)
    return CheckResult(outcome.ok, outcome.reason)
