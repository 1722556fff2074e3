"""The engine's per-node writes as they were before the bulk statements: the test's oracle.

Copied from the row-by-row ORM code the bulk paths replaced (plan_create,
plan_removal, the result writer, one driver call per node), so that
``test_bulk_rows`` can run the same actions both ways and compare the rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.engine.context import EngineContext
from herd.engine.execution import ActionExecution
from herd.engine.hooks import HookWaiter
from herd.engine.node_calls import Call, call_driver
from herd.engine.node_results import ChildResults, FinishedCall, NodeResultWriter
from herd.engine.nodeops import NodeOperations, node_name
from herd.engine.unclaimed import REASON as UNCLAIMED_REASON
from herd.engine.unclaimed import Unclaimed
from herd.errors import HerdError
from herd.store import actions as action_store
from herd.store import events
from herd.store.models import ActionRow, ClusterRow, NodeLockRow, NodeRow
from herd.types import ActionCause, ActionName, ActionStatus, NodeStatus


class PerNodeOperations(NodeOperations):
    """NodeOperations planning one ORM row at a time."""

    def plan_create(
        self,
        ex: ActionExecution,
        cluster_id: str,
        placements: Sequence[Mapping[str, Any]],
        *,
        names: Sequence[tuple[str, int]] | None = None,
    ) -> list[str]:
        """Store node rows and NODE_CREATE children; return the child action ids.

        ``names`` gives (name, index) pairs to reuse (replacement keeps a member's
        name and index); otherwise new indexes are taken from the cluster.
        """
        now = self.ctx.now()
        child_ids: list[str] = []
        with self.ctx.database.write() as session:
            cluster = session.get(ClusterRow, cluster_id)
            if cluster is None:
                raise HerdError(f"Cluster {cluster_id} disappeared")
            nodes: list[NodeRow] = []
            for position, placement in enumerate(placements):
                if names is not None:
                    name, index = names[position]
                else:
                    index = cluster.next_index
                    cluster.next_index += 1
                    name = node_name(cluster, index)
                node = NodeRow(
                    id=str(uuid.uuid4()),
                    name=name,
                    physical_id=None,
                    cluster_id=cluster.id,
                    profile_id=cluster.profile_id,
                    index=index,
                    role="",
                    init_at=now,
                    created_at=None,
                    updated_at=now,
                    status=NodeStatus.CREATING,
                    status_reason="Creation in progress",
                    health="UNKNOWN",
                    health_reason="",
                    tainted=False,
                    meta_data={},
                    data={"placement": dict(placement)} if placement else {},
                    dependents={},
                    user=ex.user,
                    project=cluster.project,
                    domain="",
                )
                nodes.append(node)
                child = action_store.new_action(
                    action=ActionName.NODE_CREATE,
                    target=node.id,
                    cluster_id=cluster.id,
                    project=cluster.project,
                    user=ex.user,
                    cause=ActionCause.DERIVED,
                    status=ActionStatus.RUNNING,
                    parent_id=ex.id,
                    owner=self.ctx.engine_id,
                    now=now,
                )
                child_ids.append(child.id)
                session.add(node)
                session.add(child)
                action_store.add_dependency(session, child.id, ex.id)
            session.flush()
        return child_ids

    def plan_removal(
        self,
        ex: ActionExecution,
        node_ids: Iterable[str],
        *,
        destroy: bool,
        hooks: Mapping[str, Any] | None = None,
    ) -> list[str]:
        """Store NODE_DELETE (or NODE_LEAVE when not destroying) children for ``node_ids``.

        With lifecycle hooks, children of ACTIVE nodes start in
        WAITING_LIFECYCLE_COMPLETION and the hook message is sent after commit.
        """
        now = self.ctx.now()
        verb = ActionName.NODE_DELETE if destroy else ActionName.NODE_LEAVE
        wait_for_hook = bool(hooks) and bool(hooks.get("type") if hooks else None)
        child_ids: list[str] = []
        with self.ctx.database.write() as session:
            rows = session.scalars(select(NodeRow).where(NodeRow.id.in_(list(node_ids)))).all()
            for node in rows:
                hooked = wait_for_hook and node.status == NodeStatus.ACTIVE and node.physical_id
                child = action_store.new_action(
                    action=verb,
                    target=node.id,
                    cluster_id=node.cluster_id,
                    project=node.project,
                    user=ex.user,
                    cause=ActionCause.DERIVED_LCH if hooked else ActionCause.DERIVED,
                    status=(
                        ActionStatus.WAITING_LIFECYCLE_COMPLETION
                        if hooked
                        else ActionStatus.RUNNING
                    ),
                    parent_id=ex.id,
                    owner=self.ctx.engine_id,
                    now=now,
                )
                session.add(child)
                action_store.add_dependency(session, child.id, ex.id)
                if destroy and not hooked:
                    node.status, node.status_reason = (
                        NodeStatus.DELETING,
                        "Deletion in progress",
                    )
                lock = session.get(NodeLockRow, node.id)
                if lock is None:
                    session.add(NodeLockRow(node_id=node.id, action_id=child.id, updated_at=now))
                else:
                    lock.action_id = child.id
                    lock.updated_at = now
                child_ids.append(child.id)
        if wait_for_hook and hooks:
            HookWaiter(self.ctx).send_all(ex, child_ids, hooks)
        return child_ids


def per_node_calls(ctx: EngineContext, calls: Sequence[Call]) -> list[FinishedCall]:
    """One driver call after another, as each pool task made them."""
    return [call_driver(ctx, *call) for call in calls]


class PerNodeResultWriter(NodeResultWriter):
    """The result writer updating, deleting and recording one ORM row at a time."""

    def _flush_simple(
        self,
        session: Session,
        ex: ActionExecution,
        done: list[FinishedCall],
        verbs: dict[str, ActionName],
        results: ChildResults,
        now: float,
        unclaimed: list[Unclaimed],
    ) -> None:
        child_rows = {
            r.id: r
            for r in session.scalars(
                select(ActionRow).where(ActionRow.id.in_([d.child_id for d in done]))
            ).all()
        }
        node_rows = {
            r.id: r
            for r in session.scalars(
                select(NodeRow).where(NodeRow.id.in_([d.node_id for d in done]))
            ).all()
        }
        for item in done:
            child = child_rows.get(item.child_id)
            node = node_rows.get(item.node_id)
            verb = ActionName(child.action) if child else ActionName.NODE_DELETE
            if item.error is None:
                results.succeeded.append(item.node_id)
                reason = self._apply_success(session, ex, verb, node, item, now)
                found = item.unclaimed() if node is None else None
                if found is not None and verb is ActionName.NODE_CREATE:
                    unclaimed.append(found)
                    reason = UNCLAIMED_REASON
                _end(child, ActionStatus.SUCCEEDED, reason, now)
            else:
                results.failed[item.node_id] = item.error
                if node is not None:
                    node.status = NodeStatus.ERROR
                    node.status_reason = item.error
                    node.updated_at = now
                    events.record(
                        session,
                        now=now,
                        **ex.node_event_row(node, "ERROR", item.error, "ERROR"),
                    )
                _end(child, ActionStatus.FAILED, item.error, now)

    def _apply_success(
        self,
        session: Any,
        ex: ActionExecution,
        verb: ActionName,
        node: NodeRow | None,
        item: FinishedCall,
        now: float,
    ) -> str:
        if node is None:
            return "Node already gone."
        if verb is ActionName.NODE_CREATE and item.resource is not None:
            node.physical_id = item.resource.physical_id
            node.data = {**(node.data or {}), **item.resource.data}
            node.status = NodeStatus.ACTIVE
            node.status_reason = "Creation succeeded"
            node.created_at = node.created_at or item.finished_at or now
            node.updated_at = now
            events.record(
                session, now=now, **ex.node_event_row(node, "ACTIVE", "Creation succeeded")
            )
            return "Node created successfully."
        if verb is ActionName.NODE_LEAVE:
            node.cluster_id = None
            node.index = -1
            node.updated_at = now
            node.status_reason = "Node left cluster"
            events.record(
                session, now=now, **ex.node_event_row(node, node.status, "Node left cluster")
            )
            return "Node left cluster."
        events.record(
            session, now=now, **ex.node_event_row(node, "DELETED", "Node deleted successfully.")
        )
        session.delete(node)
        return "Node deleted successfully."


def _end(child: ActionRow | None, status: ActionStatus, reason: str, now: float) -> None:
    if child is not None:
        child.status, child.status_reason = status, reason
        child.end_time = child.updated_at = now
        child.owner = None  # a finished action belongs to no engine (as Senlin)
