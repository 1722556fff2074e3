"""A cluster's members moved to a new profile batch by batch (the batch policy's schedule).

The schedule is the one ``senlin.policy.batch`` wrote into ``data['update']``
(see :mod:`herd.policies.batch`); without the policy every member is one batch,
as in Senlin. Each member is moved to the new profile in place: the driver's
``update`` where it can change the resource (a Nova server is renamed, rebuilt or
resized), otherwise its ``recover`` (stop, then start with the new properties,
waiting until it is healthy); its row gets the new ``profile_id`` in the transaction that records
the result, so a member that is done is never rebuilt twice.

Durability: before a batch's first side effect the batch's number is stored in
``data['update']['batch']``. A run resumed after a crash (the policy keeps the
stored schedule) starts at that batch and rebuilds only its members that do not
have the new profile yet; the batches before it are done.

A failed batch stops the rollout: later batches are left alone, the cluster goes
WARNING with a reason that names the batch, and the action fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from herd.drivers.base import CreatedResource
from herd.engine.clusters import eval_status, members, update_cluster
from herd.engine.driver_args import node_request, resource_ref
from herd.engine.execution import ActionExecution, Outcome
from herd.errors import HerdError
from herd.policies.batch import DATA_KEY
from herd.store import clusters, events, profiles
from herd.store import nodes as node_store
from herd.store.models import ProfileRow
from herd.types import ClusterStatus, HealthStatus, NodeStatus


def _schedule(ex: ActionExecution, cluster_id: str) -> dict[str, Any]:
    """The stored schedule, or one batch of every member (no batch policy attached)."""
    stored = ex.data.get(DATA_KEY)
    if isinstance(stored, dict) and isinstance(stored.get("plan"), list):
        return dict(stored)
    return {"pause_time": 0, "plan": [[n.id for n in members(ex, cluster_id)]], "batch": 0}


def update_node(ex: ActionExecution, node_id: str, profile: ProfileRow) -> str | None:
    """Rebuild one member with ``profile``; return an error text or None."""
    ctx = ex.ctx
    with ctx.database.write() as session:
        node = node_store.get(session, node_id)
        if node is None:
            return None  # left the cluster since the plan: nothing to update
        if node.profile_id == profile.id:
            return None  # done by an earlier run of this action
        node.status, node.status_reason = NodeStatus.UPDATING, "Node update in progress."
        node.updated_at = ctx.now()
        old_profile = profiles.get(session, node.profile_id)
        facts = node_store.facts_of(node)  # the row is not read after the session ends
    created: CreatedResource | None = None
    error: str | None = None
    try:
        driver = ctx.drivers.get(profile.type)
        old_spec = (old_profile or profile).spec.get("properties", {})
        old_properties = driver.validate_properties(old_spec)
        properties = driver.validate_properties(profile.spec.get("properties", {}))
        ref = resource_ref(facts, old_properties)
        request = node_request(facts, properties)
        same_type = old_profile is None or old_profile.type == profile.type
        if same_type and driver.supports_update:  # e.g. a Nova server: rename, rebuild, resize
            created = driver.update(ref, request)
        else:
            created = driver.recover(ref, request)
    except HerdError as exc:
        error = f"Update failed: {exc}"
    except Exception as exc:  # a driver bug fails this member, not the engine
        error = f"Update failed: {exc!r}"
    now = ctx.now()
    with ctx.database.write() as session:
        row = node_store.get(session, node_id)
        if row is None:
            return error
        if created is not None:
            row.profile_id = profile.id
            row.physical_id = created.physical_id
            row.data = {**(row.data or {}), **created.data}
            row.status, row.status_reason = NodeStatus.ACTIVE, "Update succeeded."
            row.health, row.health_reason = HealthStatus.CHECK_COMPLETE, "Updated"
            row.health_marked_by, row.health_marked_at = "update", now
        else:
            row.status, row.status_reason = NodeStatus.ERROR, error or "Update failed."
        row.updated_at = now
        events.record(
            session,
            now=now,
            **ex.node_event_row(
                row, row.status, row.status_reason, "INFO" if error is None else "ERROR"
            ),
        )
    return error


def _stop(ex: ActionExecution, cluster_id: str, reason: str) -> Outcome:
    status, _ = eval_status(ex, cluster_id)
    if status is not ClusterStatus.ERROR:
        update_cluster(ex, cluster_id, status=ClusterStatus.WARNING, status_reason=reason)
    return Outcome.failed(reason)


def rolling_update(
    ex: ActionExecution,
    pool: ThreadPoolExecutor,
    cluster_id: str,
    profile_id: str,
    profile_only: bool,
) -> Outcome:
    """CLUSTER_UPDATE's profile change: the cluster's profile, then its members by batch."""
    with ex.ctx.database.write() as session:
        cluster = clusters.get(session, cluster_id)
        profile = profiles.get(session, profile_id)
        if cluster is not None and profile is not None and profile_only:
            # Senlin: only the cluster's profile changes; members keep theirs until
            # they are replaced or recovered.
            cluster.profile_id = profile_id
    if cluster is None or profile is None:
        eval_status(ex, cluster_id)
        return Outcome.failed(f"The profile '{profile_id}' could not be found.")
    if profile_only:
        eval_status(ex, cluster_id)
        return Outcome.ok("Cluster profile updated.")
    schedule = _schedule(ex, cluster_id)
    plan: Sequence[Sequence[str]] = schedule["plan"]
    start = int(schedule.get("batch") or 0)
    pause = float(schedule.get("pause_time") or 0)
    for number in range(start, len(plan)):
        ex.check_cancel()
        schedule["batch"] = number
        ex.data[DATA_KEY] = schedule
        ex.save_data()  # durable before this batch touches anything
        batch = [str(n) for n in plan[number]]
        errors = [e for e in pool.map(lambda n: update_node(ex, n, profile), batch) if e]
        if errors:
            reason = (
                f"Rolling update stopped at batch {number + 1} of {len(plan)} "
                f"({len(errors)} of {len(batch)} node(s) failed: {'; '.join(errors)}); "
                f"batches {number + 2}..{len(plan)} not started."
                if number + 1 < len(plan)
                else f"Rolling update stopped at batch {number + 1} of {len(plan)} "
                f"({len(errors)} of {len(batch)} node(s) failed: {'; '.join(errors)})."
            )
            return _stop(ex, cluster_id, reason)
        update_cluster(
            ex,
            cluster_id,
            status=ClusterStatus.UPDATING,
            status_reason=f"Rolling update: batch {number + 1} of {len(plan)} done.",
        )
        if number + 1 < len(plan) and pause > 0:
            ex.wait(pause)
    schedule["batch"] = len(plan)
    ex.data[DATA_KEY] = schedule
    ex.save_data()
    update_cluster(ex, cluster_id, profile_id=profile_id)
    return Outcome.ok("Cluster update completed.")
