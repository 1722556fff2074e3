"""Rows to Senlin's JSON shapes.

The ``*_view`` functions are pure; the ``render_*`` helpers load what a batch
of rows refers to (member ids, profile names, dependencies) in a few queries.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from herd.api import action_summary
from herd.api.microversion import APIVersion
from herd.api.view_models import (
    ActionView,
    BindingView,
    ClusterView,
    EventView,
    NodeView,
    PolicyView,
    ProfileView,
    ReceiverView,
)
from herd.store import node_checks, references
from herd.store.database import Session
from herd.store.models import (
    ActionRow,
    BindingRow,
    ClusterRow,
    EventRow,
    NodeCheckRow,
    NodeRow,
    PolicyRow,
    ProfileRow,
    ReceiverRow,
)

V1_13 = APIVersion(1, 13)
V1_14 = APIVersion(1, 14)


def isotime(value: float | None) -> str | None:
    """Senlin's ``utils.isotime``: UTC, seconds precision, ``Z`` suffix."""
    if value is None:
        return None
    return _isotime_of_second(math.floor(value))


@functools.lru_cache(maxsize=8192)
def _isotime_of_second(second: int) -> str:
    # A page of 1,000 nodes has 5,000 timestamps, most of them a few distinct seconds
    # (nodes are made in bulk): formatting each second once is most of a list's saving.
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def profile_view(row: ProfileRow) -> ProfileView:
    return {
        "id": row.id,
        "name": row.name,
        "type": row.type,
        "user": row.user,
        "project": row.project,
        "domain": row.domain,
        "spec": row.spec,
        "metadata": row.meta_data or {},
        "created_at": isotime(row.created_at),
        "updated_at": isotime(row.updated_at),
    }


def policy_view(row: PolicyRow) -> PolicyView:
    return {
        "id": row.id,
        "name": row.name,
        "type": row.type,
        "user": row.user,
        "project": row.project,
        "domain": row.domain,
        "spec": row.spec,
        "data": row.data or {},
        "created_at": isotime(row.created_at),
        "updated_at": isotime(row.updated_at),
    }


def cluster_view(
    row: ClusterRow, node_ids: list[str], policy_ids: list[str], profile_name: str | None
) -> ClusterView:
    return {
        "id": row.id,
        "name": row.name,
        "profile_id": row.profile_id,
        "profile_name": profile_name,
        "user": row.user,
        "project": row.project,
        "domain": row.domain,
        "init_at": isotime(row.init_at),
        "created_at": isotime(row.created_at),
        "updated_at": isotime(row.updated_at),
        "min_size": row.min_size,
        "max_size": row.max_size,
        "desired_capacity": row.desired_capacity,
        "timeout": row.timeout,
        "status": row.status,
        "status_reason": row.status_reason,
        "metadata": row.meta_data or {},
        "data": row.data or {},
        "config": row.config or {},
        "dependents": row.dependents or {},
        "nodes": node_ids,
        "policies": policy_ids,
        # herd's addition: when the deletion started (None unless status is DELETING)
        "deleted_at": isotime(row.deleted_at),
    }


def check_result(healthy: bool | None) -> str | None:
    """``healthy`` / ``unhealthy`` (None: never checked by the health manager)."""
    if healthy is None:
        return None
    return "healthy" if healthy else "unhealthy"


def node_view(
    row: NodeRow,
    profile_name: str | None,
    version: APIVersion,
    details: bool = False,
    check: NodeCheckRow | None = None,
) -> NodeView:
    body: NodeView = {
        "id": row.id,
        "name": row.name,
        "cluster_id": row.cluster_id or "",
        "physical_id": row.physical_id,
        "profile_id": row.profile_id,
        "profile_name": profile_name,
        "user": row.user,
        "project": row.project,
        "domain": row.domain,
        "index": row.index,
        "role": row.role,
        "init_at": isotime(row.init_at),
        "created_at": isotime(row.created_at),
        "updated_at": isotime(row.updated_at),
        "status": row.status,
        "status_reason": row.status_reason,
        "metadata": row.meta_data or {},
        "data": row.data or {},
        "dependents": row.dependents or {},
        "health": row.health,
        "health_reason": row.health_reason,
        "health_marked_by": row.health_marked_by,
        "health_marked_at": isotime(row.health_marked_at),
        "health_generation": row.health_generation,
        "deleted_at": isotime(row.deleted_at),
        # herd's addition: the health manager's last check of this node
        "last_checked_at": isotime(check.checked_at) if check else None,
        "last_check_mode": (check.mode or None) if check else None,
        "last_check_result": check_result(check.healthy) if check else None,
        "last_check_reason": check.reason if check else None,
    }
    if version >= V1_13:
        body["tainted"] = row.tainted
    if details:
        body["details"] = dict(row.data or {})
    return body


def node_view_from_values(
    values: Sequence[Any], version: APIVersion, details: bool = False
) -> NodeView:
    """:func:`node_view` of a row of ``herd.store.node_reads.node_select`` (plain values)."""
    (
        node_id, name, cluster_id, physical_id, profile_id, user, project, domain, index, role,
        init_at, created_at, updated_at, status, status_reason, metadata, data, dependents,
        health, health_reason, marked_by, marked_at, generation, deleted_at, tainted,
        profile_name, checked_at, check_mode, check_healthy, check_reason,
    ) = values[:30]  # fmt: skip
    body: NodeView = {
        "id": node_id,
        "name": name,
        "cluster_id": cluster_id or "",
        "physical_id": physical_id,
        "profile_id": profile_id,
        "profile_name": profile_name,
        "user": user,
        "project": project,
        "domain": domain,
        "index": index,
        "role": role,
        "init_at": isotime(init_at),
        "created_at": isotime(created_at),
        "updated_at": isotime(updated_at),
        "status": status,
        "status_reason": status_reason,
        "metadata": metadata or {},
        "data": data or {},
        "dependents": dependents or {},
        "health": health,
        "health_reason": health_reason,
        "health_marked_by": marked_by,
        "health_marked_at": isotime(marked_at),
        "health_generation": generation,
        "deleted_at": isotime(deleted_at),
        # a node without a check record has NULLs from the outer join: the same as no record
        "last_checked_at": isotime(checked_at),
        "last_check_mode": check_mode or None,
        "last_check_result": check_result(check_healthy),
        "last_check_reason": check_reason,
    }
    if version >= V1_13:
        body["tainted"] = tainted
    if details:
        body["details"] = dict(data or {})
    return body


def binding_view(
    row: BindingRow, cluster_name: str, policy_name: str, policy_type: str
) -> BindingView:
    return {
        "id": row.id,
        "cluster_id": row.cluster_id,
        "cluster_name": cluster_name,
        "policy_id": row.policy_id,
        "policy_name": policy_name,
        "policy_type": policy_type,
        "enabled": row.enabled,
        "priority": row.priority,
        "data": row.data or {},
        "last_op": isotime(row.last_op),
    }


def action_view(
    row: ActionRow, depends_on: list[str], depended_by: list[str], version: APIVersion
) -> ActionView:
    body: ActionView = {
        "id": row.id,
        "name": row.name,
        "action": row.action,
        "target": row.target,
        "cause": row.cause,
        "owner": row.owner,
        "interval": row.interval,
        "start_time": row.start_time,
        "end_time": row.end_time,
        "timeout": row.timeout,
        "status": row.status,
        "status_reason": row.status_reason,
        "inputs": row.inputs or {},
        "outputs": row.outputs or {},
        "depends_on": depends_on,
        "depended_by": depended_by,
        "created_at": isotime(row.created_at),
        "updated_at": isotime(row.updated_at),
        "data": row.data or {},
        "user": row.user,
        "project": row.project,
        "cluster_id": row.cluster_id or "",
        # herd's addition: the API request that caused it (docs/api.md)
        "request_id": row.request_id,
    }
    if version < V1_14:
        del body["cluster_id"]  # Senlin's field of 1.14
    return body


def event_view(row: EventRow) -> EventView:
    return {
        "id": row.id,
        "timestamp": isotime(row.timestamp),
        "oid": row.oid,
        "oname": row.oname,
        "otype": row.otype,
        "cluster_id": row.cluster_id or "",
        "level": row.level,
        "user": row.user,
        "project": row.project,
        "action": row.action,
        "status": row.status,
        "status_reason": row.status_reason,
        "meta_data": row.meta_data or {},
        # herd's addition: the API request behind it (docs/api.md)
        "request_id": row.request_id,
    }


def render_clusters(
    session: Session, rows: Sequence[ClusterRow], *, show_nodes: bool = True
) -> list[ClusterView]:
    """Senlin's cluster views; ``show_nodes=False`` (herd's addition, docs/api.md) replaces
    the member id list with ``node_count``, so a poller of a 100,000-member cluster does not
    carry 3.7 MB of ids each time."""
    ids = [row.id for row in rows]
    policies = references.cluster_policy_ids(session, ids)
    names = references.profile_names(session, {row.profile_id for row in rows})
    if not show_nodes:
        counts = references.cluster_member_counts(session, ids)
        views = []
        for row in rows:
            view = cluster_view(row, [], policies[row.id], names.get(row.profile_id))
            del view["nodes"]
            view["node_count"] = counts[row.id]
            views.append(view)
        return views
    members = references.cluster_members(session, ids)
    return [
        cluster_view(row, members[row.id], policies[row.id], names.get(row.profile_id))
        for row in rows
    ]


def render_cluster(session: Session, row: ClusterRow, *, show_nodes: bool = True) -> ClusterView:
    return render_clusters(session, [row], show_nodes=show_nodes)[0]


def render_nodes(
    session: Session, rows: Sequence[NodeRow], version: APIVersion, details: bool = False
) -> list[NodeView]:
    names = references.profile_names(session, {row.profile_id for row in rows})
    checks = node_checks.load(session, [row.id for row in rows])
    return [
        node_view(row, names.get(row.profile_id), version, details, checks.get(row.id))
        for row in rows
    ]


def render_actions(
    session: Session, rows: Sequence[ActionRow], version: APIVersion, *, summary: bool = False
) -> list[ActionView]:
    """Senlin's action views; ``summary`` (herd's ``summary=true``) cuts long lists
    (:mod:`herd.api.action_summary`) and reads at most a few dependencies of each action."""
    ids = [row.id for row in rows]
    if not summary:
        on, by = references.action_dependencies(session, ids)
        return [action_view(row, on[row.id], by[row.id], version) for row in rows]
    cut_on, cut_by = references.action_dependencies_cut(session, ids, action_summary.KEEP)
    views = []
    for row in rows:
        on_ids, on_count = cut_on.get(row.id, ([], 0))
        by_ids, by_count = cut_by.get(row.id, ([], 0))
        view = action_view(row, on_ids, by_ids, version)
        counts = {"depends_on": on_count, "depended_by": by_count}
        views.append(action_summary.summarise(view, counts))
    return views


def render_bindings(session: Session, rows: Sequence[BindingRow]) -> list[BindingView]:
    clusters = references.cluster_names(session, {row.cluster_id for row in rows})
    policies = references.policy_names_and_types(session, {row.policy_id for row in rows})
    return [
        binding_view(
            row,
            clusters.get(row.cluster_id, ""),
            *policies.get(row.policy_id, ("", "")),
        )
        for row in rows
    ]


def receiver_view(row: ReceiverRow, channel: dict[str, str]) -> ReceiverView:
    """A receiver as Senlin shows it, its channel with the URLs that trigger it."""
    return {
        "id": row.id,
        "name": row.name,
        "type": row.type,
        "cluster_id": row.cluster_id,
        "action": row.action,
        "actor": row.actor or {},
        "params": row.params or {},
        "channel": channel,
        "user": row.user,
        "project": row.project,
        "domain": row.domain,
        "created_at": isotime(row.created_at),
        "updated_at": isotime(row.updated_at),
    }
