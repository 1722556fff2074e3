"""Writing the results of node child actions back to the store, in batches.

One transaction per batch marks the children ended, the nodes ACTIVE, ERROR,
released or deleted, drops the children's node locks and records the events.
"""

from __future__ import annotations

import queue
from collections.abc import Mapping
from dataclasses import dataclass, field

from herd.drivers.base import CreatedResource
from herd.engine.context import EngineContext
from herd.engine.execution import ActionExecution, NodeEventFields
from herd.engine.health.recover_node import RecoveryOptions, RecoveryOutcome, apply_recovery
from herd.engine.unclaimed import REASON as UNCLAIMED_REASON
from herd.engine.unclaimed import MadeFor, Unclaimed, destroy_later, unclaimed_event
from herd.store import actions as action_store
from herd.store import events, locks
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.store.models import ActionRow, NodeRow
from herd.store.nodes import ResultFacts
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
    #: how to destroy ``resource`` should the node's row be gone (a forced delete meanwhile)
    made_for: MadeFor | None = None
    #: NODE_DELETE: the physical id the call destroyed (None: the row it read had none)
    deleted: str | None = None

    def unclaimed(self) -> Unclaimed | None:
        """The resource this call made, to destroy, when its node's row is gone."""
        if self.resource is None or self.made_for is None:
            return None
        return Unclaimed(self.node_id, self.resource, self.made_for)


class NodeResultWriter:
    """Writes finished child actions and their nodes back, one transaction per batch."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def flush(
        self,
        ex: ActionExecution,
        done: list[FinishedCall],
        results: ChildResults,
        known_verbs: Mapping[str, ActionName] | None = None,
    ) -> None:
        """Write ``done`` back in one transaction.

        ``known_verbs`` (child id -> verb) are the verbs of children read earlier by the
        caller: a child's verb never changes, and reading it again for every batch showed
        in profiles of 10,000-node scales.
        """
        if not done:
            return
        now = self.ctx.now()
        unclaimed: list[Unclaimed] = []
        with self.ctx.database.write() as session:
            child_ids = [d.child_id for d in done]
            unknown = [c for c in child_ids if known_verbs is None or c not in known_verbs]
            verbs = action_store.verbs_of(session, unknown)
            if known_verbs is not None:
                verbs |= {c: known_verbs[c] for c in child_ids if c in known_verbs}
            recovered = [d for d in done if verbs.get(d.child_id) is ActionName.NODE_RECOVER]
            if recovered:
                self._flush_recovered(session, ex, recovered, results, now, unclaimed)
            simple = [d for d in done if verbs.get(d.child_id) is not ActionName.NODE_RECOVER]
            if simple:
                self._flush_simple(session, ex, simple, verbs, results, now, unclaimed)
            locks.release_nodes_held_by(session, child_ids)
            if unclaimed:
                events.record_many(session, [unclaimed_event(ex, u) for u in unclaimed], now)
        # After the commit, off this thread: a slow delete never holds the writer.
        destroy_later(self.ctx, unclaimed)

    def _flush_recovered(
        self,
        session: Session,
        ex: ActionExecution,
        done: list[FinishedCall],
        results: ChildResults,
        now: float,
        unclaimed: list[Unclaimed],
    ) -> None:
        """Recoveries change a node in many ways; they keep the ORM, row by row."""
        child_rows = {r.id: r for r in action_store.get_many(session, [d.child_id for d in done])}
        node_rows = {r.id: r for r in node_store.get_many(session, [d.node_id for d in done])}
        for item in done:
            node = node_rows.get(item.node_id)
            found = item.unclaimed() if node is None else None
            if found is not None:
                unclaimed.append(found)
            self._recovered(session, ex, node, item, results, child_rows.get(item.child_id), now)

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
        """Created, deleted, released and failed nodes: a few statements per batch.

        The rows written are those the ORM wrote one by one before (the functional
        test ``test_bulk_rows`` compares them).
        """
        nodes = node_store.result_facts(session, [d.node_id for d in done])
        ended: list[dict[str, object]] = []
        created: list[dict[str, object]] = []
        failed: list[dict[str, object]] = []
        left: list[str] = []
        deleted: list[str] = []
        event_rows: list[NodeEventFields] = []
        for item in done:
            node = nodes.get(item.node_id)
            verb = verbs.get(item.child_id, ActionName.NODE_DELETE)
            status, reason = ActionStatus.SUCCEEDED, "Node already gone."
            if item.error is not None:
                results.failed[item.node_id] = item.error
                status, reason = ActionStatus.FAILED, item.error
                if node is not None:
                    failed.append(
                        {"id": node.id, "status": NodeStatus.ERROR}
                        | {"status_reason": item.error, "updated_at": now}
                    )
                    event_rows.append(ex.node_event_row(node, "ERROR", item.error, "ERROR"))
            elif node is None:
                results.succeeded.append(item.node_id)
                found = item.unclaimed() if verb is ActionName.NODE_CREATE else None
                if found is not None:  # made for a row deleted meanwhile (a forced delete)
                    unclaimed.append(found)
                    reason = UNCLAIMED_REASON
            elif verb is ActionName.NODE_CREATE and item.resource is not None:
                results.succeeded.append(item.node_id)
                reason = "Node created successfully."
                created.append(
                    {
                        "id": node.id,
                        "physical_id": item.resource.physical_id,
                        "data": {**(node.data or {}), **item.resource.data},
                        "status": NodeStatus.ACTIVE,
                        "status_reason": "Creation succeeded",
                        "created_at": node.created_at or item.finished_at or now,
                        "updated_at": now,
                    }
                )
                event_rows.append(ex.node_event_row(node, "ACTIVE", "Creation succeeded"))
            elif verb is ActionName.NODE_LEAVE:
                results.succeeded.append(item.node_id)
                reason = "Node left cluster."
                left.append(node.id)
                event = ex.node_event_row(node, node.status, "Node left cluster")
                event_rows.append(event | {"cluster_id": None})
            else:
                results.succeeded.append(item.node_id)
                reason = "Node deleted successfully."
                made_meanwhile = (
                    _made_meanwhile(node, item) if verb is ActionName.NODE_DELETE else None
                )
                if made_meanwhile is not None:
                    unclaimed.append(made_meanwhile)
                    reason = UNCLAIMED_REASON
                deleted.append(node.id)
                event_rows.append(ex.node_event_row(node, "DELETED", "Node deleted successfully."))
            ended.append(
                {"id": item.child_id, "status": status, "status_reason": reason}
                | {"end_time": now, "updated_at": now, "owner": None}
            )
        # Bulk UPDATE by primary key: one executemany per kind of change.
        for values in (created, failed):
            node_store.update_many(session, values)
        node_store.leave_cluster_many(session, left, "Node left cluster", now)
        node_store.delete_many(session, deleted)
        events.record_many(session, event_rows, now)
        ended = [row for row in ended if row["id"] in verbs]  # unknown: the child row is gone
        action_store.end_many(session, ended)

    def _recovered(
        self,
        session: Session,
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
            fields["action"] = ActionName.NODE_RECOVER
            options = item.options or RecoveryOptions()
            reason = apply_recovery(session, node, outcome, options, fields, now)
            self.ctx.metrics.health_recovered(options.operation.value, outcome.ok)
        if outcome.ok:
            results.succeeded.append(item.node_id)
            _end(child, ActionStatus.SUCCEEDED, reason, now)
        else:
            results.failed[item.node_id] = reason
            _end(child, ActionStatus.FAILED, reason, now)

    def abandon(self, ex: ActionExecution, child_id: str, reason: str) -> None:
        now = self.ctx.now()
        with self.ctx.database.write() as session:
            action_store.set_status(session, child_id, ActionStatus.FAILED, reason, now)
            locks.release_nodes_held_by(session, [child_id])

    def cancel_unfinished(self, ex: ActionExecution) -> None:
        now = self.ctx.now()
        with self.ctx.database.write() as session:
            for child in action_store.unfinished_children(session, ex.id):
                action_store.set_status(
                    session, child.id, ActionStatus.CANCELLED, "Action execution cancelled", now
                )
                locks.release_nodes_held_by(session, [child.id])
                node = node_store.get(session, child.target)
                # Not left RECOVERING for good: the health manager checks an ERROR node.
                if node is not None and node.status == NodeStatus.RECOVERING:
                    node.status = NodeStatus.ERROR
                    node.status_reason = "Recovery cancelled"


def _made_meanwhile(node: ResultFacts, item: FinishedCall) -> Unclaimed | None:
    """A resource recorded on the row after the delete call read it (a robbed create's)."""
    if item.made_for is None or not node.physical_id or node.physical_id == item.deleted:
        return None
    resource = CreatedResource(node.physical_id, dict(node.data or {}))
    return Unclaimed(node.id, resource, item.made_for)


def _end(child: ActionRow | None, status: ActionStatus, reason: str, now: float) -> None:
    if child is not None:
        child.status, child.status_reason = status, reason
        child.end_time = child.updated_at = now
        child.owner = None


def put_all(target: queue.SimpleQueue[FinishedCall], items: list[FinishedCall]) -> None:
    """Hand a pool task's finished calls to the run that writes them."""
    for item in items:
        target.put(item)


def drain(source: queue.SimpleQueue[FinishedCall], timeout: float) -> list[FinishedCall]:
    """Everything already in ``source``, waiting up to ``timeout`` for the first item."""
    try:
        items = [source.get(timeout=timeout)]
    except queue.Empty:
        return []
    while True:
        try:
            items.append(source.get_nowait())
        except queue.Empty:
            return items
