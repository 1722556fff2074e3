"""Writing the results of node child actions back to the store, in batches.

One transaction per batch marks the children ended, the nodes ACTIVE, ERROR,
released or deleted, drops the children's node locks and records the events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select

from herd.drivers.base import CreatedResource
from herd.engine.context import EngineContext
from herd.engine.execution import ActionExecution
from herd.engine.health.recover_node import RecoveryOptions, RecoveryOutcome, apply_recovery
from herd.store import actions as action_store
from herd.store import events
from herd.store.models import ActionRow, NodeLockRow, NodeRow
from herd.types import ActionName, ActionStatus, NodeStatus


@dataclass
class ChildResults:
    succeeded: list[str] = field(default_factory=list)  # node ids
    failed: dict[str, str] = field(default_factory=dict)  # node id -> reason
    abandoned: list[str] = field(default_factory=list)  # node ids kept by a hook

    @property
    def ok(self) -> bool:
        return not self.failed

    def reason(self) -> str:
        return "; ".join(f"{node[:8]}: {why}" for node, why in sorted(self.failed.items()))


@dataclass(frozen=True)
class FinishedCall:
    child_id: str
    node_id: str
    error: str | None
    resource: CreatedResource | None = None
    finished_at: float | None = None  # when the driver call returned (a node's creation time)
    recovery: RecoveryOutcome | None = None  # NODE_RECOVER: what the recovery did
    options: RecoveryOptions | None = None  # NODE_RECOVER: how it was asked to recover


class NodeResultWriter:
    """Writes finished child actions and their nodes back, one transaction per batch."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def flush(self, ex: ActionExecution, done: list[FinishedCall], results: ChildResults) -> None:
        if not done:
            return
        now = self.ctx.now()
        with self.ctx.database.write() as session:
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
                if verb is ActionName.NODE_RECOVER:
                    self._recovered(session, ex, node, item, results, child, now)
                elif item.error is None:
                    results.succeeded.append(item.node_id)
                    reason = self._apply_success(session, ex, verb, node, item, now)
                    _end(child, ActionStatus.SUCCEEDED, reason, now)
                else:
                    results.failed[item.node_id] = item.error
                    if node is not None:
                        node.status = NodeStatus.ERROR.value
                        node.status_reason = item.error
                        node.updated_at = now
                        events.record(
                            session,
                            now=now,
                            **ex.node_event_row(node, "ERROR", item.error, "ERROR"),
                        )
                    _end(child, ActionStatus.FAILED, item.error, now)
            session.execute(
                delete(NodeLockRow).where(NodeLockRow.action_id.in_([d.child_id for d in done]))
            )

    def _recovered(
        self,
        session: Any,
        ex: ActionExecution,
        node: NodeRow | None,
        item: FinishedCall,
        results: ChildResults,
        child: ActionRow | None,
        now: float,
    ) -> None:
        outcome = item.recovery or RecoveryOutcome(item.error or "Recovery failed", "nothing done")
        if node is None:
            reason = "Node already gone."
        else:
            fields = ex.node_event_row(node, "", "")
            fields["action"] = ActionName.NODE_RECOVER.value
            options = item.options or RecoveryOptions()
            reason = apply_recovery(session, node, outcome, options, fields, now)
            self.ctx.metrics.health_recovered(options.operation.value, outcome.ok)
        if outcome.ok:
            results.succeeded.append(item.node_id)
            _end(child, ActionStatus.SUCCEEDED, reason, now)
        else:
            results.failed[item.node_id] = reason
            _end(child, ActionStatus.FAILED, reason, now)

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
            node.status = NodeStatus.ACTIVE.value
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

    def abandon(self, ex: ActionExecution, child_id: str, reason: str) -> None:
        now = self.ctx.now()
        with self.ctx.database.write() as session:
            action_store.set_status(session, child_id, ActionStatus.FAILED, reason, now)
            session.query(NodeLockRow).filter(NodeLockRow.action_id == child_id).delete()

    def cancel_unfinished(self, ex: ActionExecution) -> None:
        now = self.ctx.now()
        with self.ctx.database.write() as session:
            for child in action_store.children(session, ex.id):
                if not ActionStatus(child.status).is_final:
                    action_store.set_status(
                        session, child.id, ActionStatus.CANCELLED, "Action execution cancelled", now
                    )
                    session.query(NodeLockRow).filter(NodeLockRow.action_id == child.id).delete()
                    node = session.get(NodeRow, child.target)
                    # Not left RECOVERING for good: the health manager checks an ERROR node.
                    if node is not None and node.status == NodeStatus.RECOVERING.value:
                        node.status = NodeStatus.ERROR.value
                        node.status_reason = "Recovery cancelled"


def _end(child: ActionRow | None, status: ActionStatus, reason: str, now: float) -> None:
    if child is not None:
        child.status, child.status_reason = status.value, reason
        child.end_time = child.updated_at = now
