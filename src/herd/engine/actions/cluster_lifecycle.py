"""CLUSTER_CREATE, CLUSTER_DELETE, CLUSTER_UPDATE and the policy bindings."""

from __future__ import annotations

from herd.engine.actions.cluster_health import HealthHandlers
from herd.engine.actions.removal import RemovalPlan, remove_nodes
from herd.engine.actions.rolling_update import rolling_update
from herd.engine.clusters import eval_status, load_cluster, members, placements, update_cluster
from herd.engine.execution import ActionExecution, Outcome
from herd.engine.nodeops import NodeOperations
from herd.engine.server_groups import attach_group, release_all, release_group
from herd.policies.affinity import AffinityPolicy
from herd.store import bindings, clusters, policies, profiles, receivers, tombstones
from herd.types import ClusterStatus, ResourceType


def record_regions(ex: ActionExecution, cluster_id: str) -> list[str]:
    """Add the members' regions to ``cluster.data['regions']`` and return the full list.

    The list only grows: a cluster keeps "spanning" a region after its members
    there are gone, so agents keep seeing it (and central keeps deleting its
    copy there) until the cluster itself is gone.
    """
    with ex.ctx.database.read(streaming=True) as session:
        regions = clusters.member_regions(session, cluster_id)
    with ex.ctx.database.write() as session:
        row = clusters.get(session, cluster_id)
        if row is None:
            return []
        known = set((row.data or {}).get("regions") or [])
        merged = sorted(known | regions)
        if merged != sorted(known):
            row.data = {**(row.data or {}), "regions": merged}
        return merged


class LifecycleHandlers:
    def __init__(self, nodeops: NodeOperations, health: HealthHandlers) -> None:
        self.nodeops = nodeops
        self.health = health

    def create(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        if not ex.planned():
            update_cluster(
                ex,
                cluster.id,
                status=ClusterStatus.CREATING,
                status_reason="Cluster creation started.",
            )
            if cluster.desired_capacity > 0:
                self.nodeops.plan_create(
                    ex, cluster.id, placements(ex.data, cluster.desired_capacity)
                )
        results = self.nodeops.run(ex)
        ex.outputs["nodes_added"] = sorted(results.succeeded)
        record_regions(ex, cluster.id)
        if cluster.created_at is None:
            update_cluster(ex, cluster.id, created_at=ex.ctx.now())
        eval_status(ex, cluster.id)
        if not results.ok:
            return Outcome.failed(f"Failed in creating nodes: {results.reason()}")
        return Outcome.ok("Cluster creation succeeded.")

    def delete(self, ex: ActionExecution) -> Outcome:
        with ex.ctx.database.write() as session:
            if clusters.get(session, ex.target) is None:
                # Deleted by an earlier run of this action, stopped before its end was written.
                tombstones.remove(session, ResourceType.CLUSTER, ex.target)
                return Outcome.ok("Cluster deletion succeeded.")
        cluster = load_cluster(ex)
        update_cluster(
            ex,
            cluster.id,
            status=ClusterStatus.DELETING,
            status_reason="Deletion in progress.",
        )
        # Senlin detached every policy first: the server groups the affinity policy made go
        reason = release_all(ex, cluster.id, cluster.profile_id)
        if reason:
            update_cluster(ex, cluster.id, status=ClusterStatus.ERROR, status_reason=reason)
            return Outcome.failed(reason)
        with ex.ctx.database.write() as session:
            bindings.remove_all(session, cluster.id)
        # Remember where the members were before they go: the regional copies are
        # deleted after the members, and agents list clusters by region meanwhile.
        regions = record_regions(ex, cluster.id)
        node_ids = [node.id for node in members(ex, cluster.id)]
        plan = RemovalPlan(node_ids, True, 0.0, True, None)
        results = remove_nodes(ex, self.nodeops, plan)
        if not results.ok:
            reason = f"Failed in deleting nodes: {results.reason()}"
            self._keep_tombstone(ex, cluster.id, reason)
            update_cluster(ex, cluster.id, status=ClusterStatus.ERROR, status_reason=reason)
            return Outcome.failed(reason)
        error = self._delete_regional_copies(ex, cluster.id, regions)
        if error:
            reason = f"Failed in deleting regional copies: {error}"
            self._keep_tombstone(ex, cluster.id, reason)
            update_cluster(ex, cluster.id, status=ClusterStatus.ERROR, status_reason=reason)
            return Outcome.failed(reason)
        with ex.ctx.database.write() as session:
            # Senlin deleted a cluster's receivers with it: a receiver of a gone cluster
            # could only answer errors.
            receivers.delete_of_cluster(session, cluster.id)
            clusters.remove(session, cluster.id)
        return Outcome.ok("Cluster deletion succeeded.")

    def _delete_regional_copies(
        self, ex: ActionExecution, cluster_id: str, regions: list[str]
    ) -> str | None:
        if ex.ctx.regions_delete is None:
            if regions and ex.ctx.settings.regions:
                return (
                    "this engine has no region backends; run it from 'herd serve' "
                    "or pass regions_delete to build_engine"
                )
            return None
        # Reload: record_regions changed data['regions'] after the first load.
        return ex.ctx.regions_delete(load_cluster(ex, cluster_id))

    def _keep_tombstone(self, ex: ActionExecution, cluster_id: str, reason: str) -> None:
        with ex.ctx.database.write() as session:
            tombstones.mark_error(session, ResourceType.CLUSTER, cluster_id, reason)

    def update(self, ex: ActionExecution) -> Outcome:
        cluster = load_cluster(ex)
        values = {}
        for key, column in (
            ("name", "name"),
            ("metadata", "meta_data"),
            ("timeout", "timeout"),
            ("config", "config"),
        ):
            if key in ex.inputs and ex.inputs[key] is not None:
                values[column] = ex.inputs[key]
        update_cluster(
            ex,
            cluster.id,
            status=ClusterStatus.UPDATING,
            status_reason="Cluster update started.",
            **values,
        )
        profile_id = ex.inputs.get("profile_id")
        # The profile before this action: a resumed run finds the new one already stored.
        profile_before = ex.once("profile_before", lambda: cluster.profile_id)
        if profile_id and profile_id != profile_before:
            outcome = rolling_update(
                ex, self.health.pool, cluster.id, profile_id, bool(ex.inputs.get("profile_only"))
            )
            if outcome.status != "SUCCEEDED":
                return outcome  # the rollout set the cluster's status and where it stopped
        outcome = self.health.replace_unhealthy(ex)
        if outcome.status != "SUCCEEDED":
            return outcome
        eval_status(ex, cluster.id)
        return Outcome.ok("Cluster update completed.")

    # -- policy bindings ---------------------------------------------------------------

    def _was_attached(self, ex: ActionExecution, policy_id: str) -> bool:
        """Whether the policy was bound before this action (a resumed run finds its own
        binding, or its own detach, and must answer as the first run did)."""

        def look() -> bool:
            with ex.ctx.database.read() as session:
                return bindings.get_binding(session, ex.target, policy_id) is not None

        return ex.once("was_attached", look)

    def attach_policy(self, ex: ActionExecution) -> Outcome:
        policy_id = str(ex.inputs.get("policy_id"))
        enabled = bool(ex.inputs.get("enabled", True))
        if self._was_attached(ex, policy_id):
            return Outcome.ok("Policy already attached.")
        with ex.ctx.database.write() as session:
            policy = policies.get(session, policy_id)
            cluster = clusters.get(session, ex.target)
            if policy is None or cluster is None:
                return Outcome.failed(f"The specified policy '{policy_id}' could not be found.")
            existing = bindings.of_cluster(session, cluster.id)
            if any(b.policy_id == policy.id for b in existing):
                return Outcome.ok("Policy attached.")  # by an earlier run of this action
            _, instance = ex.ctx.policies.create(policy.spec)
            profile = profiles.get(session, cluster.profile_id)
            allowed = type(instance).profile_types
            if "ANY" not in allowed and profile is not None and profile.type not in allowed:
                why = type(instance).profile_type_reason
                return Outcome.failed(
                    f"Policy not applicable on profile type: {profile.type}"
                    + (f" ({why})." if why else "")
                )
            if type(instance).singleton:
                family = policy.type.rsplit("-", 1)[0].split(".")[-1]
                for binding in existing:
                    other = policies.get(session, binding.policy_id)
                    if other is not None and other.type.rsplit("-", 1)[0].split(".")[-1] == family:
                        return Outcome.failed(
                            f"Only one instance of policy type ({policy.type}) can be attached to "
                            f"a cluster, but another instance ({other.id}) is found attached to "
                            f"the cluster ({cluster.id}) already."
                        )
            priority, profile_id = type(instance).priority, cluster.profile_id
        data: dict[str, object] = {}
        if isinstance(instance, AffinityPolicy):
            # the cloud is asked outside any transaction; the cluster's lock is held
            found = attach_group(ex, instance, profile_id)
            if isinstance(found, str):
                return Outcome.failed(found)
            data = found
        with ex.ctx.database.write() as session:
            row = bindings.add(session, ex.target, policy_id, enabled=enabled, priority=priority)
            row.data = data
        return Outcome.ok("Policy attached.")

    def detach_policy(self, ex: ActionExecution) -> Outcome:
        policy_id = str(ex.inputs.get("policy_id"))
        if not self._was_attached(ex, policy_id):
            return Outcome.failed("Policy not attached.")
        with ex.ctx.database.read() as session:
            binding = bindings.get_binding(session, ex.target, policy_id)
            cluster = clusters.get(session, ex.target)
            data = dict(binding.data or {}) if binding is not None else {}
            profile_id = cluster.profile_id if cluster is not None else ""
        reason = release_group(ex, data, profile_id)  # the affinity policy's, if it made one
        if reason:
            return Outcome.failed(reason)
        with ex.ctx.database.write() as session:
            bindings.remove(session, ex.target, policy_id)  # or an earlier run did
        return Outcome.ok("Policy detached.")

    def update_policy(self, ex: ActionExecution) -> Outcome:
        policy_id = str(ex.inputs.get("policy_id"))
        with ex.ctx.database.write() as session:
            binding = bindings.get_binding(session, ex.target, policy_id)
            if binding is None:
                return Outcome.failed("Policy not attached.")
            if "enabled" in ex.inputs and ex.inputs["enabled"] is not None:
                binding.enabled = bool(ex.inputs["enabled"])
        return Outcome.ok("Policy updated.")
