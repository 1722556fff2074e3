"""NODE_CREATE, NODE_DELETE, NODE_UPDATE, NODE_CHECK and NODE_RECOVER."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from herd.domain.sizing import SizeBounds, check_size_params
from herd.engine.actions.cluster_health import check_node, recover_node
from herd.engine.actions.node_create import create_own_node
from herd.engine.actions.removal import removal_plan, remove_nodes
from herd.engine.clusters import eval_status, load_cluster
from herd.engine.driver_args import node_request, resource_ref
from herd.engine.execution import ActionExecution, Outcome
from herd.engine.health.recover_node import (
    RecoveryOutcome,
    apply_recovery,
    mark_recovering,
    policy_options,
    recover_resource,
)
from herd.engine.nodeops import NodeOperations
from herd.engine.unclaimed import MadeFor, Unclaimed, destroy_later, unclaimed_event
from herd.errors import HerdError
from herd.store import clusters, events, profiles, tombstones
from herd.store import nodes as node_store
from herd.store.models import NodeRow
from herd.types import ActionCause, NodeStatus, ResourceType


def _node(ex: ActionExecution) -> NodeRow | None:
    with ex.ctx.database.read() as session:
        return node_store.get(session, ex.target)


class DeleteDecision(TypedDict):
    """A NODE_DELETE's decision, stored once (``steps['deletion']``)."""

    found: bool
    cluster_id: NotRequired[str | None]
    desired: NotRequired[int | None]
    error: NotRequired[str]


class RecoveryResult(TypedDict):
    """A NODE_RECOVER's result, stored once (``steps['recovery']``)."""

    ok: bool
    reason: str
    cluster_id: NotRequired[str | None]


class NodeHandlers:
    def __init__(self, nodeops: NodeOperations) -> None:
        self.nodeops = nodeops

    def create(self, ex: ActionExecution) -> Outcome:
        node = _node(ex)
        if node is None:
            return Outcome.failed(f"The node '{ex.target}' could not be found.")
        results = create_own_node(ex, node.id)
        if node.cluster_id:
            with ex.ctx.database.read() as session:
                count = clusters.member_count(session, node.cluster_id)
            eval_status(ex, node.cluster_id, desired=count)
        if not results.ok:
            return Outcome.failed(results.reason().split(": ", 1)[-1] or "Node creation failed.")
        return Outcome.ok("Node created successfully.")

    def delete(self, ex: ActionExecution) -> Outcome:
        node = _node(ex)
        # Decided once: counted again after the node went, the cluster would shrink twice.
        decided = ex.once("deletion", lambda: self._decide_delete(ex, node))
        if decided.get("error"):
            if node is not None:
                self._refused(ex, node, decided["error"])
            return Outcome.failed(decided["error"])
        cluster_id = decided.get("cluster_id")
        desired = decided.get("desired")
        if node is None:
            with ex.ctx.database.write() as session:
                tombstones.remove(session, ResourceType.NODE, ex.target)
            if not decided.get("found"):
                return Outcome.ok("Node already deleted.")
            # This action deleted it, and its engine stopped before the bookkeeping.
            if cluster_id:
                plan = removal_plan(ex, [ex.target], destroy_default=True)
                eval_status(
                    ex, cluster_id, desired=desired if plan.reduce_desired_capacity else None
                )
            return Outcome.ok("Node deleted successfully.")
        # Destroyed unless the deletion policy says destroy_after_deletion: false (spec S7
        # copies it into data.deletion, and S1's rule applies): then the node only leaves.
        plan = removal_plan(ex, [node.id], destroy_default=True)
        results = remove_nodes(ex, self.nodeops, plan)
        if cluster_id:
            reduce = plan.reduce_desired_capacity and results.ok and not results.abandoned
            eval_status(ex, cluster_id, desired=desired if reduce else None)
        if results.abandoned:
            return self._failed(
                ex, node.id, "Node deletion abandoned by its lifecycle hook: node kept."
            )
        if not results.ok:
            return self._failed(ex, node.id, "Node deletion failed: " + results.reason())
        if not plan.destroy:
            kept = "Node left its cluster: the deletion policy keeps it (destroy_after_deletion)."
            self._refused(ex, node, kept)
            return Outcome.ok(kept)
        # The node row went with its tombstone (models/tombstones.py); this only clears one left
        # by a deletion that ended in between (e.g. an engine stopped after the row went).
        with ex.ctx.database.write() as session:
            if node_store.get(session, node.id) is None:
                tombstones.remove(session, ResourceType.NODE, node.id)
        return Outcome.ok("Node deleted successfully.")

    def _decide_delete(self, ex: ActionExecution, node: NodeRow | None) -> DeleteDecision:
        """The node's cluster and the cluster's desired capacity after it, or the refusal."""
        if node is None:
            return {"found": False}
        cluster_id = node.cluster_id
        if not (cluster_id and ex.cause is ActionCause.RPC):
            return {"found": True, "cluster_id": cluster_id, "desired": None}
        cluster = load_cluster(ex, cluster_id)
        with ex.ctx.database.read() as session:
            count = clusters.member_count(session, cluster_id)
        error = check_size_params(
            SizeBounds(cluster.min_size, cluster.max_size, cluster.desired_capacity),
            count - 1,
            None,
            None,
            True,
            ex.ctx.settings.max_nodes_per_cluster,
        )
        if error:
            return {"found": True, "error": error}
        return {"found": True, "cluster_id": cluster_id, "desired": count - 1}

    def _refused(self, ex: ActionExecution, node: NodeRow, reason: str) -> None:
        """Nothing was deleted: take the tombstone away and give the node its state back."""
        with ex.ctx.database.write() as session:
            tombstones.remove(session, ResourceType.NODE, node.id)
            row = node_store.get(session, node.id)
            if row is not None and row.status == NodeStatus.DELETING:
                row.status = NodeStatus.ACTIVE if row.physical_id else NodeStatus.ERROR
                row.status_reason = reason
                row.deleted_at = None

    def _failed(self, ex: ActionExecution, node_id: str, reason: str) -> Outcome:
        """A failed deletion keeps the node's tombstone (ERROR): agents still get 404."""
        with ex.ctx.database.write() as session:
            tombstones.mark_error(session, ResourceType.NODE, node_id, reason)
        return Outcome.failed(reason)

    def update(self, ex: ActionExecution) -> Outcome:
        node = _node(ex)
        if node is None:
            return Outcome.failed(f"The node '{ex.target}' could not be found.")
        new_profile = ex.inputs.get("profile_id")
        # The profile before this action: a resumed run finds the new one already stored.
        old_profile = ex.once("profile_before", lambda: node.profile_id)
        with ex.ctx.database.write() as session:
            row = node_store.get(session, node.id)
            assert row is not None
            for key, column in (
                ("name", "name"),
                ("role", "role"),
                ("metadata", "meta_data"),
                ("tainted", "tainted"),
            ):
                if key in ex.inputs and ex.inputs[key] is not None:
                    setattr(row, column, ex.inputs[key])
            if new_profile and new_profile != row.profile_id:
                if profiles.get(session, new_profile) is None:
                    return Outcome.failed(f"The profile '{new_profile}' could not be found.")
                row.profile_id = new_profile
            row.updated_at = ex.ctx.now()
        if new_profile and new_profile != old_profile and node.physical_id:
            error = ex.once("recreated", lambda: recover_node(ex, node.id, old_profile))
            if error:
                return Outcome.failed(error)
        return Outcome.ok("Node updated successfully.")

    def check(self, ex: ActionExecution) -> Outcome:
        healthy, reason = check_node(ex, ex.target)
        node = _node(ex)
        if node is not None and node.cluster_id:
            eval_status(ex, node.cluster_id)
        return Outcome.ok("Node check succeeded." if healthy else f"Node check failed: {reason}")

    def recover(self, ex: ActionExecution) -> Outcome:
        """NODE_RECOVER through the API: the same recovery as a CLUSTER_RECOVER child.

        Done once: a resumed run reads the stored result rather than recover again.
        """
        done = ex.once("recovery", lambda: self._recover_once(ex))
        cluster_id = done.get("cluster_id")
        if cluster_id:
            eval_status(ex, cluster_id)
        return Outcome.ok(done["reason"]) if done["ok"] else Outcome.failed(done["reason"])

    def _recover_once(self, ex: ActionExecution) -> RecoveryResult:
        if ex.inputs.get("check"):
            healthy, _ = check_node(ex, ex.target)
            if healthy:
                return {"ok": True, "reason": "Node is healthy; no recovery needed."}
        ctx = ex.ctx
        with ctx.database.write() as session:
            node = node_store.get(session, ex.target)
            profile = profiles.get(session, node.profile_id) if node else None
            if node is None or profile is None:
                return {"ok": False, "reason": f"The node '{ex.target}' could not be found."}
            options = policy_options(ctx, session, node.cluster_id).merged(ex.inputs)
            mark_recovering(session, node, ctx.now())
        made: MadeFor | None = None
        try:
            driver = ctx.drivers.get(profile.type)
            properties = driver.validate_properties(profile.spec.get("properties", {}))
            made = MadeFor(profile.type, properties, node.name, node.cluster_id)
            ref = resource_ref(node, properties)
            request = node_request(node, properties)
            outcome = recover_resource(driver, ref, request, options, ctx.abandonable)
        except HerdError as exc:
            outcome = RecoveryOutcome(f"Recovery failed: {exc}", "nothing done")
        lost: list[Unclaimed] = []
        with ctx.database.write() as session:
            row = node_store.get(session, ex.target)
            if row is None:
                # A forced delete took the node meanwhile: what the recovery made is nobody's.
                if outcome.resource is not None and made is not None:
                    lost.append(Unclaimed(ex.target, outcome.resource, made))
                    events.record(session, now=ctx.now(), **unclaimed_event(ex, lost[0]))
            else:
                reason = apply_recovery(
                    session, row, outcome, options, ex.node_event_row(row, "", ""), ctx.now()
                )
        if row is None:
            destroy_later(ctx, lost)  # after the commit, on a thread of its own
            return {"ok": False, "reason": "Node disappeared during its recovery."}
        ctx.metrics.health_recovered(options.operation.value, outcome.ok)
        return {"ok": outcome.ok, "reason": reason, "cluster_id": node.cluster_id}
