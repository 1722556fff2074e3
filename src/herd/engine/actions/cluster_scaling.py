"""CLUSTER_SCALE_OUT, CLUSTER_SCALE_IN, CLUSTER_RESIZE, CLUSTER_DEL_NODES, CLUSTER_ADD_NODES."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from herd.domain.sizing import SizeBounds, check_size_params, parse_resize
from herd.engine.actions.removal import RemovalPlan, removal_plan, remove_nodes
from herd.engine.clusters import (
    eval_status,
    load_cluster,
    member_snapshots,
    placements,
    update_cluster,
    victims_in_order,
)
from herd.engine.execution import ActionExecution, Outcome
from herd.engine.nodeops import NodeOperations
from herd.policies.deletion import victim_records
from herd.policies.ranking import rank_victims
from herd.store import actions as action_store
from herd.store.models import ClusterRow, NodeRow
from herd.types import ClusterStatus, Criteria


def _bounds(cluster: ClusterRow) -> SizeBounds:
    return SizeBounds(cluster.min_size, cluster.max_size, cluster.desired_capacity)


def _positive_count(value: Any, verb: str) -> int | str:
    try:
        count = int(value)
    except (TypeError, ValueError):
        return f"Invalid count ({value}) for {verb}."
    if isinstance(value, bool) or count <= 0:
        return f"Invalid count ({value}) for {verb}."
    return count


class ScalingHandlers:
    def __init__(self, nodeops: NodeOperations) -> None:
        self.nodeops = nodeops

    # -- growing -----------------------------------------------------------------------

    def grow(self, ex: ActionExecution, cluster: ClusterRow, count: int, reason: str) -> Outcome:
        """Create ``count`` members (placed as a placement policy decided) and settle status."""
        with ex.ctx.database.read() as session:
            resumed = bool(action_store.children(session, ex.id))
        if not resumed and count > 0:
            self.nodeops.plan_create(ex, cluster.id, placements(ex.data, count))
        results = self.nodeops.run(ex)
        ex.outputs["nodes_added"] = sorted(results.succeeded)
        eval_status(ex, cluster.id)
        if not results.ok:
            return Outcome.failed(f"Failed in creating nodes: {results.reason()}")
        return Outcome.ok(reason)

    def scale_out(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        creation = ex.data.get("creation") or {}
        raw = creation.get("count", ex.inputs.get("count", 1))
        count = _positive_count(raw, "scaling out")
        if isinstance(count, str):
            return Outcome.failed(count)
        current = len(member_snapshots(ex, cluster.id))
        error = check_size_params(
            _bounds(cluster),
            current + count,
            None,
            None,
            True,
            ex.ctx.settings.max_nodes_per_cluster,
        )
        if error:
            return Outcome.failed(error)
        update_cluster(
            ex,
            cluster.id,
            status=ClusterStatus.RESIZING.value,
            status_reason="Cluster scale out started.",
            desired_capacity=current + count,
        )
        return self.grow(ex, cluster, count, "Cluster scaling succeeded.")

    # -- shrinking ---------------------------------------------------------------------

    def _default_victims(self, ex: ActionExecution, cluster_id: str, count: int) -> list[str] | str:
        """Senlin's choice without a deletion policy: broken first, then random (seeded)."""
        ranked = rank_victims(member_snapshots(ex, cluster_id), count, Criteria.RANDOM, ex.seed)
        if ranked.error:
            return ranked.error
        ex.outputs["victims"] = victim_records(ranked.victims)
        return ranked.node_ids

    def shrink(
        self,
        ex: ActionExecution,
        cluster: ClusterRow,
        plan: RemovalPlan,
        reason: str,
        *,
        desired: int | None,
        min_size: int | None = None,
        max_size: int | None = None,
    ) -> Outcome:
        results = remove_nodes(ex, self.nodeops, plan)
        if not results.ok:
            eval_status(ex, cluster.id, min_size=min_size, max_size=max_size)
            return Outcome.failed(f"Failed in deleting nodes: {results.reason()}")
        if desired is not None and results.abandoned:
            desired += len(results.abandoned)  # members a hook kept still count
        eval_status(ex, cluster.id, desired=desired, min_size=min_size, max_size=max_size)
        return Outcome.ok(reason)

    def scale_in(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        nodes = member_snapshots(ex, cluster.id)
        deletion = ex.data.get("deletion") or {}
        candidates = list(deletion.get("candidates") or [])
        if deletion:
            count: int | str = len(candidates) or int(deletion.get("count", 1))
        else:
            count = _positive_count(ex.inputs.get("count", 1), "scaling in")
        if isinstance(count, str):
            return Outcome.failed(count)
        count = min(count, len(nodes))
        error = check_size_params(
            _bounds(cluster),
            len(nodes) - count,
            None,
            None,
            True,
            ex.ctx.settings.max_nodes_per_cluster,
        )
        if error:
            return Outcome.failed(error)
        if not candidates:
            chosen = self._default_victims(ex, cluster.id, count)
            if isinstance(chosen, str):
                return Outcome.failed(chosen)
            candidates = chosen
        new_size = len(nodes) - len(candidates)
        update_cluster(
            ex,
            cluster.id,
            status=ClusterStatus.RESIZING.value,
            status_reason="Cluster scale in started.",
            desired_capacity=new_size,
        )
        plan = removal_plan(ex, candidates, destroy_default=True)
        return self.shrink(ex, cluster, plan, "Cluster scaling succeeded.", desired=new_size)

    def resize(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        nodes = member_snapshots(ex, cluster.id)
        current = len(nodes)
        new_min = ex.inputs.get("min_size")
        new_max = ex.inputs.get("max_size")
        if "deletion" not in ex.data and "creation" not in ex.data:
            parsed = parse_resize(
                current, _bounds(cluster), ex.inputs, ex.ctx.settings.max_nodes_per_cluster
            )
            if parsed.error:
                return Outcome.failed(parsed.error)
            ex.data.update(parsed.to_data())
        deletion = ex.data.get("deletion")
        if deletion:
            candidates = list(deletion.get("candidates") or [])
            count = min(len(candidates) or int(deletion.get("count", 0)), current)
            if not candidates:
                chosen = self._default_victims(ex, cluster.id, count)
                if isinstance(chosen, str):
                    return Outcome.failed(chosen)
                candidates = chosen
            desired = current - len(candidates)
            update_cluster(
                ex,
                cluster.id,
                status=ClusterStatus.RESIZING.value,
                status_reason="Cluster resize started.",
                desired_capacity=desired,
                **_bounds_update(new_min, new_max),
            )
            plan = removal_plan(ex, candidates, destroy_default=True)
            return self.shrink(
                ex,
                cluster,
                plan,
                "Cluster resize succeeded.",
                desired=desired,
                min_size=new_min,
                max_size=new_max,
            )
        count = int((ex.data.get("creation") or {}).get("count", 0))
        update_cluster(
            ex,
            cluster.id,
            status=ClusterStatus.RESIZING.value,
            status_reason="Cluster resize started.",
            desired_capacity=current + count,
            **_bounds_update(new_min, new_max),
        )
        return self.grow(ex, load_cluster(ex), count, "Cluster resize succeeded.")

    def del_nodes(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        nodes = member_snapshots(ex, cluster.id)
        requested = list(ex.inputs.get("candidates") or [])
        deletion = ex.data.get("deletion") or {}
        candidates = victims_in_order(
            list(deletion.get("candidates") or requested), [n.id for n in nodes]
        )
        with ex.ctx.database.read() as session:
            known = set(session.scalars(select(NodeRow.id).where(NodeRow.id.in_(requested))).all())
        missing = [n for n in requested if n not in known]
        if missing:
            return Outcome.failed(f"Nodes not found: {missing}.")
        error = check_size_params(
            _bounds(cluster),
            cluster.desired_capacity - len(candidates),
            None,
            None,
            True,
            ex.ctx.settings.max_nodes_per_cluster,
        )
        if error:
            return Outcome.failed(error)
        plan = removal_plan(
            ex,
            candidates,
            destroy_default=bool(ex.inputs.get("destroy_after_deletion", False)),
        )
        desired = (
            cluster.desired_capacity - len(candidates) if plan.reduce_desired_capacity else None
        )
        outcome = self.shrink(ex, cluster, plan, "Completed deleting nodes.", desired=desired)
        return outcome

    def add_nodes(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        node_ids = list(ex.inputs.get("nodes") or [])
        current = len(member_snapshots(ex, cluster.id))
        error = check_size_params(
            _bounds(cluster),
            current + len(node_ids),
            None,
            None,
            True,
            ex.ctx.settings.max_nodes_per_cluster,
        )
        if error:
            return Outcome.failed(error)
        with ex.ctx.database.write() as session:
            row = session.get(ClusterRow, cluster.id)
            assert row is not None
            for node in session.scalars(select(NodeRow).where(NodeRow.id.in_(node_ids))).all():
                if node.cluster_id and node.cluster_id != cluster.id:
                    return Outcome.failed(
                        f"Node {node.id} is already owned by cluster {node.cluster_id}."
                    )
                node.cluster_id = cluster.id
                node.index = row.next_index
                row.next_index += 1
                node.updated_at = ex.ctx.now()
        ex.outputs["nodes_added"] = node_ids
        eval_status(ex, cluster.id, desired=current + len(node_ids))
        return Outcome.ok("Completed adding nodes.")


def _bounds_update(new_min: Any, new_max: Any) -> dict[str, Any]:
    values: dict[str, int] = {}
    if new_min is not None:
        values["min_size"] = int(new_min)
    if new_max is not None:
        values["max_size"] = int(new_max)
    return values
