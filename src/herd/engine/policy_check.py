"""Running a cluster's enabled policy bindings BEFORE or AFTER an action.

Bindings run in ascending priority (id breaks ties). Each policy sees the data
the earlier ones wrote; the first ERROR stops the check, and the action fails
with ``Policy check failure: Failed policy '<name>': <reason>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from herd.engine.context import EngineContext
from herd.engine.execution import ActionExecution
from herd.policies.base import Policy, PolicyContext
from herd.store.models import BindingRow, ClusterRow, NodeRow, PolicyRow, ProfileRow
from herd.store.snapshots import cluster_snapshot
from herd.types import CheckStatus, Phase


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class LoadedBinding:
    binding_id: str
    policy_name: str
    policy: Policy
    last_op: float | None


def load_bindings(ctx: EngineContext, session: Any, cluster_id: str) -> list[LoadedBinding]:
    rows = session.execute(
        select(BindingRow, PolicyRow)
        .join(PolicyRow, PolicyRow.id == BindingRow.policy_id)
        .where(BindingRow.cluster_id == cluster_id, BindingRow.enabled.is_(True))
        .order_by(BindingRow.priority, BindingRow.id)
    ).all()
    loaded = []
    for binding, policy in rows:
        _, instance = ctx.policies.create(policy.spec)
        loaded.append(LoadedBinding(binding.id, policy.name, instance, binding.last_op))
    return loaded


def snapshot_for(session: Any, cluster_id: str) -> Any:
    cluster = session.get(ClusterRow, cluster_id)
    nodes = session.scalars(
        select(NodeRow).where(NodeRow.cluster_id == cluster_id).order_by(NodeRow.index)
    ).all()
    profile_ids = {n.profile_id for n in nodes}
    times = {
        p.id: p.created_at
        for p in session.scalars(select(ProfileRow).where(ProfileRow.id.in_(profile_ids))).all()
    }
    return cluster_snapshot(cluster, nodes, times)


def policy_check(ex: ActionExecution, phase: Phase) -> CheckResult:
    """Run the bindings of ``ex``'s cluster for ``phase``; update ``ex.data`` in place."""
    ctx = ex.ctx
    if ex.cluster_id is None:
        return CheckResult(True)
    with ctx.database.read() as session:
        if session.get(ClusterRow, ex.cluster_id) is None:
            return CheckResult(True)
        bindings = load_bindings(ctx, session, ex.cluster_id)
        if not bindings:
            return CheckResult(True)
        snapshot = snapshot_for(session, ex.cluster_id)
    data: dict[str, Any] = dict(ex.data)
    applicable = [b for b in bindings if b.policy.applies_to(ex.action, phase)]
    if not applicable:
        return CheckResult(True)
    data["status"] = CheckStatus.OK.value
    # An AFTER check keeps the BEFORE result ("Candidates generated", ...) unless a
    # policy says something new, so the stored data reads as the spec shows it.
    data["reason"] = str(data.get("reason") or "") if phase is Phase.AFTER else ""
    touched: list[str] = []
    binding_updates: dict[str, dict[str, Any]] = {}
    for bound in applicable:
        policy_ctx = PolicyContext(
            action=ex.action,
            phase=phase,
            cluster=snapshot,
            inputs=ex.inputs,
            data=data,
            now=ctx.now(),
            seed=ex.seed,
            cause=ex.cause,
            target_node_id=ex.target if not ex.action.is_cluster_action else None,
            last_op=bound.last_op,
            max_nodes_per_cluster=ctx.settings.max_nodes_per_cluster,
            action_id=ex.id,
        )
        decision = (
            bound.policy.before(policy_ctx)
            if phase is Phase.BEFORE
            else bound.policy.after(policy_ctx)
        )
        if decision.status is CheckStatus.NONE:
            continue
        data = dict(decision.data)
        if decision.status is CheckStatus.ERROR:
            reason = f"Failed policy '{bound.policy_name}': {decision.reason}"
            data["status"] = CheckStatus.ERROR.value
            data["reason"] = reason
            ex.data = data
            ex.save_data()
            return CheckResult(False, reason)
        data["status"] = CheckStatus.OK.value
        data["reason"] = decision.reason or data.get("reason", "")
        if decision.touch_last_op:
            touched.append(bound.binding_id)
        if decision.binding_data:
            binding_updates[bound.binding_id] = dict(decision.binding_data)
    if not data.get("reason"):
        data["reason"] = "Completed policy checking."
    ex.data = data
    ex.save_data()
    if touched or binding_updates:
        with ctx.database.write() as session:
            for binding_id in touched:
                row = session.get(BindingRow, binding_id)
                if row is not None:
                    row.last_op = ctx.now()
            for binding_id, values in binding_updates.items():
                row = session.get(BindingRow, binding_id)
                if row is not None:
                    # A new dict: the JSON column only notices a change of object.
                    row.data = {**(row.data or {}), **values}
    return CheckResult(True)
