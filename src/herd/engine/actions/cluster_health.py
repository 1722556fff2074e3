"""Health work on members: check, recover, replace unhealthy members, replace nodes, new profile.

Replacing a member keeps its name and index (Heat's name continuity): the new
node is created first and the old one is destroyed only once the new one is
ACTIVE, so the cluster never drops below its size while members are replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from herd.drivers.base import NodeRequest, ResourceRef
from herd.engine.actions.batched_recover import batched, recover_in_batches, store_recover_plan
from herd.engine.clusters import eval_status, load_cluster, members, update_cluster
from herd.engine.context import EngineContext
from herd.engine.driver_args import node_request, resource_ref
from herd.engine.execution import ActionExecution, Outcome
from herd.engine.health.recover_node import policy_options
from herd.engine.nodeops import NodeOperations
from herd.errors import HerdError
from herd.store import clusters, events, profiles, tombstones
from herd.store import nodes as node_store
from herd.store.models import NodeRow, ProfileRow
from herd.types import ClusterStatus, HealthStatus, NodeStatus, ResourceType

#: members a recovery may act on (the others are being created, changed or removed)
RECOVERABLE = (NodeStatus.ACTIVE, NodeStatus.ERROR, NodeStatus.WARNING)


def _driver_and_ref(
    ctx: EngineContext, node: NodeRow, profile: ProfileRow
) -> tuple[object, ResourceRef, NodeRequest]:
    driver = ctx.drivers.get(profile.type)
    properties = driver.validate_properties(profile.spec.get("properties", {}))
    ref = resource_ref(node, properties)
    request = node_request(node, properties)
    return driver, ref, request


def check_node(ex: ActionExecution, node_id: str) -> tuple[bool, str]:
    """Ask the driver about one node and record the answer as its health."""
    ctx = ex.ctx
    with ctx.database.read() as session:
        node = node_store.get(session, node_id)
        profile = profiles.get(session, node.profile_id) if node else None
    if node is None or profile is None:
        return False, "node is gone"
    try:
        driver, ref, _ = _driver_and_ref(ctx, node, profile)
        report = driver.check(ref) if node.physical_id else None  # type: ignore[attr-defined]
        healthy, reason = (
            (report.healthy, report.reason) if report else (False, "node has no physical resource")
        )
    except HerdError as exc:
        healthy, reason = False, str(exc)
    now = ctx.now()
    with ctx.database.write() as session:
        row = node_store.get(session, node_id)
        if row is None:
            return healthy, reason
        before = (row.health, row.status)
        if healthy:
            # A passing check clears a failed check, but never an application's mark.
            if row.health != HealthStatus.CHECK_FAILED or row.health_marked_by in (
                None,
                "check",
            ):
                row.health, row.health_reason = HealthStatus.CHECK_COMPLETE, "Check passed"
                row.health_marked_by, row.health_marked_at = "check", now
            if row.status == NodeStatus.ERROR and row.status_reason.startswith("Check failed"):
                row.status, row.status_reason = NodeStatus.ACTIVE, "Check passed"
        else:
            row.health, row.health_reason = HealthStatus.CHECK_FAILED, reason
            row.health_marked_by, row.health_marked_at = "check", now
            row.status, row.status_reason = NodeStatus.ERROR, f"Check failed: {reason}"
        row.updated_at = now
        if (row.health, row.status) != before:
            events.record(
                session,
                now=now,
                **ex.node_event_row(
                    row, row.health, row.health_reason, "INFO" if healthy else "WARNING"
                ),
            )
    return healthy, reason


def recover_node(
    ex: ActionExecution, node_id: str, old_profile_id: str | None = None
) -> str | None:
    """Recreate one node's resource in place; return an error text or None.

    With ``old_profile_id`` (a profile change) a driver that can update in place
    (``supports_update``, e.g. a Nova server: rename, rebuild, resize) moves the
    resource from the old profile's properties to the new ones instead.
    """
    ctx = ex.ctx
    with ctx.database.read() as session:
        node = node_store.get(session, node_id)
        profile = profiles.get(session, node.profile_id) if node else None
        old = profiles.get(session, old_profile_id) if old_profile_id else None
    if node is None or profile is None:
        return "node is gone"
    try:
        driver, ref, request = _driver_and_ref(ctx, node, profile)
        if old is not None and old.type == profile.type and driver.supports_update:  # type: ignore[attr-defined]
            old_properties = driver.validate_properties(old.spec.get("properties", {}))  # type: ignore[attr-defined]
            ref = resource_ref(node, old_properties)
            created = driver.update(ref, request)  # type: ignore[attr-defined]
        else:
            created = driver.recover(ref, request)  # type: ignore[attr-defined]
    except HerdError as exc:
        error = f"Recovery failed: {exc}"
        with ctx.database.write() as session:
            row = node_store.get(session, node_id)
            if row is not None:
                row.status, row.status_reason = NodeStatus.ERROR, error
        return error
    now = ctx.now()
    with ctx.database.write() as session:
        row = node_store.get(session, node_id)
        if row is not None:
            row.physical_id = created.physical_id
            row.data = {**(row.data or {}), **created.data}
            row.status, row.status_reason = NodeStatus.ACTIVE, "Recovery succeeded"
            row.health, row.health_reason = HealthStatus.CHECK_COMPLETE, "Recovered"
            row.health_marked_by, row.health_marked_at = "recover", now
            row.updated_at = now
            events.record(
                session, now=now, **ex.node_event_row(row, "ACTIVE", "Recovery succeeded")
            )
    return None


class HealthHandlers:
    def __init__(self, nodeops: NodeOperations, pool: ThreadPoolExecutor) -> None:
        self.nodeops = nodeops
        self.pool = pool

    def check(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        node_ids = [n.id for n in members(ex, cluster.id)]
        results = list(self.pool.map(lambda n: check_node(ex, n), node_ids))
        eval_status(ex, cluster.id)
        unhealthy = sum(1 for healthy, _ in results if not healthy)
        ex.outputs["unhealthy"] = unhealthy
        return Outcome.ok(f"Cluster checking completed: {unhealthy} of {len(node_ids)} unhealthy.")

    def recover(self, ex: ActionExecution) -> Outcome:
        """Recover broken members as NODE_RECOVER children, planned first, then run.

        The health manager names the nodes (``inputs.nodes``, with what it detected in
        ``inputs.detected``); otherwise every member in ERROR or WARNING, or marked
        CHECK_FAILED, is recovered. The operation is the request's, else the health
        policy's recovery action, else RECREATE.

        A member whose deletion is pending (its tombstone: a NODE_DELETE that failed or
        was cancelled) is left as it is: its user asked for it to go, and a recovery would
        bring it back (RECREATE, a new resource) where the next DELETE removes it.
        """
        cluster = load_cluster(ex)
        with ex.ctx.database.read() as session:
            base = policy_options(ex.ctx, session, cluster.id)
        if not ex.planned():
            if ex.inputs.get("check"):
                self.check(ex)
            current = members(ex, cluster.id)
            requested = ex.inputs.get("nodes")
            if requested is not None:
                wanted = {str(n) for n in requested}
                targets = [n for n in current if n.id in wanted and n.status in RECOVERABLE]
            else:
                targets = [
                    n
                    for n in current
                    if n.status in (NodeStatus.ERROR, NodeStatus.WARNING)
                    or n.health == HealthStatus.CHECK_FAILED
                ]
            with ex.ctx.database.read() as session:
                going = tombstones.tombstoned(session, ResourceType.NODE, [n.id for n in targets])
            targets = [n for n in targets if n.id not in going]
            options = base.merged(ex.inputs).to_inputs()
            detected = dict(ex.inputs.get("detected") or {})
            plan = {
                n.id: {**options, **({"detected": detected[n.id]} if n.id in detected else {})}
                for n in targets
            }
            if plan:
                update_cluster(
                    ex,
                    cluster.id,
                    status=ClusterStatus.RECOVERING,
                    status_reason="Cluster recovery started.",
                )
                if batched(ex):
                    store_recover_plan(ex, [n.id for n in targets], plan)
                else:
                    self.nodeops.plan_recover(ex, plan)
        stopped = ""
        if batched(ex):
            results, stopped = recover_in_batches(ex, self.nodeops)
        else:
            results = self.nodeops.run(ex)
        ex.outputs["nodes_recovered"] = sorted(results.succeeded)
        if results.failed:
            ex.outputs["nodes_failed"] = dict(sorted(results.failed.items()))
        status, _ = eval_status(ex, cluster.id)
        if stopped:
            reason = f"Failed in recovering nodes ({stopped}): {results.reason()}"
            if status is not ClusterStatus.ERROR:
                update_cluster(ex, cluster.id, status=ClusterStatus.WARNING, status_reason=reason)
            return Outcome.failed(reason)
        if not results.ok:
            return Outcome.failed("Failed in recovering nodes: " + results.reason())
        return Outcome.ok("Cluster recovery succeeded.")

    def replace_unhealthy(self, ex: ActionExecution) -> Outcome:
        """Replace every CHECK_FAILED member, in batches, under the same name and index."""
        cluster = load_cluster(ex)
        batch_size = max(1, int(ex.inputs.get("batch_size") or 1))
        self.nodeops.run(ex)  # finish whatever a previous run of this action left
        current = members(ex, cluster.id)
        failed = [n for n in current if n.health == HealthStatus.CHECK_FAILED]
        replaced: list[str] = []
        errors: list[str] = []
        for start in range(0, len(failed), batch_size):
            batch = failed[start : start + batch_size]
            pending = self._without_replacement(ex, cluster.id, batch)
            if pending:
                ex.check_cancel()
                children = self.nodeops.plan_create(
                    ex,
                    cluster.id,
                    [dict((n.data or {}).get("placement") or {}) for n in pending],
                    names=[(n.name, n.index) for n in pending],
                )
                results = self.nodeops.run(ex, children)
                errors += [f"{node[:8]}: {why}" for node, why in results.failed.items()]
            ready = self._with_active_replacement(ex, cluster.id, batch)
            if ready:
                removal = self.nodeops.plan_removal(ex, [n.id for n in ready], destroy=True)
                results = self.nodeops.run(ex, removal)
                replaced += results.succeeded
                errors += [f"{node[:8]}: {why}" for node, why in results.failed.items()]
        ex.outputs["nodes_replaced"] = sorted(replaced)
        eval_status(ex, cluster.id)
        if errors:
            return Outcome.failed("Failed in replacing unhealthy nodes: " + "; ".join(errors))
        return Outcome.ok(f"Replaced {len(replaced)} unhealthy node(s).")

    def _replacement_of(self, ex: ActionExecution, cluster_id: str, old: NodeRow) -> NodeRow | None:
        with ex.ctx.database.read() as session:
            return clusters.member_at(session, cluster_id, old.index, old.id)

    def _without_replacement(
        self, ex: ActionExecution, cluster_id: str, batch: Sequence[NodeRow]
    ) -> list[NodeRow]:
        return [n for n in batch if self._replacement_of(ex, cluster_id, n) is None]

    def _with_active_replacement(
        self, ex: ActionExecution, cluster_id: str, batch: Sequence[NodeRow]
    ) -> list[NodeRow]:
        ready = []
        for old in batch:
            new = self._replacement_of(ex, cluster_id, old)
            if new is not None and new.status == NodeStatus.ACTIVE:
                ready.append(old)
        return ready
