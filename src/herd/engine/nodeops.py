"""Creating, deleting, releasing and recovering many nodes as child actions of one action.

A parent first *plans*: in one transaction it stores the node rows and one
child action per node (NODE_CREATE, NODE_DELETE, NODE_LEAVE or NODE_RECOVER) linked to it.
It then *runs* the children: driver calls go to a shared thread pool, and their
results are written back in batches, so 10,000 simulated nodes cost a few
hundred transactions instead of tens of thousands. Because the plan is stored
first, a parent that is resumed after an engine crash runs only the children
that have not ended, and never creates a node twice.
"""

from __future__ import annotations

import queue
import uuid
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.engine.context import EngineContext
from herd.engine.execution import ActionCancelled, ActionExecution
from herd.engine.health.recover_node import RecoveryOptions, mark_recovering, recover_resource
from herd.engine.hooks import HookWaiter
from herd.engine.node_results import ChildResults, FinishedCall, NodeResultWriter
from herd.errors import HerdError
from herd.store import actions as action_store
from herd.store.models import ActionRow, ClusterRow, NodeLockRow, NodeRow, ProfileRow
from herd.types import ActionCause, ActionName, ActionStatus, NodeStatus

FLUSH_EVERY = 200  # results per transaction at most
FLUSH_AFTER = 0.25  # seconds a finished result may wait before it is written


@dataclass(frozen=True)
class _Target:
    node: NodeRow
    profile: tuple[str, dict[str, Any]] | str  # (profile type, validated properties) or an error


def node_name(cluster: ClusterRow, index: int) -> str:
    """Senlin's default member name, or the cluster's ``node.name.format``."""
    pattern = (cluster.config or {}).get("node.name.format")
    if isinstance(pattern, str) and pattern:
        return pattern.replace("$nI", str(index)).replace("$nR", uuid.uuid4().hex[:8])
    return f"node-{cluster.name}-{index:03d}" if cluster.name else f"node-{uuid.uuid4().hex[:8]}"


def node_request(node: NodeRow, properties: Mapping[str, Any]) -> NodeRequest:
    """What a driver needs to create (or re-create) this node's resource."""
    return NodeRequest(
        node_id=node.id,
        name=node.name,
        index=node.index,
        cluster_id=node.cluster_id,
        properties=properties,
        placement=dict((node.data or {}).get("placement") or {}),
        metadata=dict(node.meta_data or {}),
    )


class NodeOperations:
    """Plans and runs node child actions for a parent action."""

    def __init__(self, ctx: EngineContext, pool: ThreadPoolExecutor) -> None:
        self.ctx = ctx
        self.pool = pool
        self.results = NodeResultWriter(ctx)

    # -- planning ----------------------------------------------------------------------

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
                    status=NodeStatus.CREATING.value,
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
                hooked = (
                    wait_for_hook and node.status == NodeStatus.ACTIVE.value and node.physical_id
                )
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
                        NodeStatus.DELETING.value,
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

    def plan_recover(
        self, ex: ActionExecution, inputs_by_node: Mapping[str, Mapping[str, Any]]
    ) -> list[str]:
        """Store NODE_RECOVER children, one per node with its inputs; the nodes go RECOVERING.

        Each child holds its node's lock from the start, so nothing else acts on a
        node while it is being recovered.
        """
        now = self.ctx.now()
        child_ids: list[str] = []
        with self.ctx.database.write() as session:
            rows = session.scalars(select(NodeRow).where(NodeRow.id.in_(list(inputs_by_node))))
            for node in rows.all():
                child = action_store.new_action(
                    action=ActionName.NODE_RECOVER,
                    target=node.id,
                    cluster_id=node.cluster_id,
                    project=node.project,
                    user=ex.user,
                    cause=ActionCause.DERIVED,
                    inputs=dict(inputs_by_node[node.id]),
                    status=ActionStatus.RUNNING,
                    parent_id=ex.id,
                    owner=self.ctx.engine_id,
                    now=now,
                )
                session.add(child)
                action_store.add_dependency(session, child.id, ex.id)
                mark_recovering(session, node, now)
                lock = session.get(NodeLockRow, node.id)
                if lock is None:
                    session.add(NodeLockRow(node_id=node.id, action_id=child.id, updated_at=now))
                else:
                    lock.action_id = child.id
                    lock.updated_at = now
                child_ids.append(child.id)
        return child_ids

    # -- running -----------------------------------------------------------------------

    def run(self, ex: ActionExecution, child_ids: Sequence[str] | None = None) -> ChildResults:
        """Run every unfinished child of ``ex`` (or just ``child_ids``) and collect results."""
        results = ChildResults()
        waiter = HookWaiter(self.ctx)
        # Finished driver calls report through a queue: waiting on every pending
        # future at each step would cost O(n) per finished node.
        finished: queue.SimpleQueue[FinishedCall] = queue.SimpleQueue()
        pending: dict[str, Future[FinishedCall]] = {}  # child id -> driver call
        done_buffer: list[FinishedCall] = []
        last_flush = last_cancel_check = self.ctx.now()
        with self.ctx.database.read() as session:
            query = select(ActionRow).where(ActionRow.parent_id == ex.id)
            rows = [r for r in session.scalars(query).all() if not child_ids or r.id in child_ids]
        verbs = {r.id: ActionName(r.action) for r in rows}
        child_inputs = {r.id: dict(r.inputs or {}) for r in rows}
        # READY children were completed through the API before this loop started: they
        # still go through the hook poll, which honours an ABANDON result.
        hook_states = (ActionStatus.WAITING_LIFECYCLE_COMPLETION, ActionStatus.READY)
        waiting = {r.id: r.target for r in rows if r.status in hook_states}
        targets = self._load_targets(
            [r.target for r in rows if not ActionStatus(r.status).is_final]
        )

        def start(child_id: str, node_id: str) -> None:
            future = self._submit(
                child_id, verbs[child_id], node_id, targets.get(node_id), child_inputs[child_id]
            )
            future.add_done_callback(lambda f: finished.put(f.result()))
            pending[child_id] = future

        for row in rows:
            status = ActionStatus(row.status)
            if status is ActionStatus.SUCCEEDED:
                results.succeeded.append(row.target)
            elif status.is_final:
                results.failed[row.target] = row.status_reason or status.value
            elif row.id not in waiting:
                start(row.id, row.target)
        try:
            while pending or waiting:
                if waiting:
                    ready, abandoned = waiter.poll(ex, waiting)
                    for child_id in ready:
                        start(child_id, waiting.pop(child_id))
                    for child_id, reason in abandoned.items():
                        results.abandoned.append(waiting.pop(child_id))
                        self.results.abandon(ex, child_id, reason)
                if pending:
                    for item in _drain(finished, timeout=0.2):
                        pending.pop(item.child_id, None)
                        done_buffer.append(item)
                    stale = self.ctx.now() - last_flush >= FLUSH_AFTER
                    if len(done_buffer) >= FLUSH_EVERY or not pending or (done_buffer and stale):
                        self.results.flush(ex, done_buffer, results)
                        done_buffer = []
                        last_flush = self.ctx.now()
                else:
                    self.ctx.sleep(0.2)
                if self.ctx.now() - last_cancel_check >= 0.5:
                    ex.check_cancel()
                    last_cancel_check = self.ctx.now()
        except ActionCancelled:
            for future in pending.values():
                future.cancel()
            for future in pending.values():
                if not future.cancelled():
                    done_buffer.append(future.result())
            self.results.flush(ex, done_buffer, results)
            self.results.cancel_unfinished(ex)
            raise
        self.results.flush(ex, done_buffer, results)
        return results

    def _load_targets(self, node_ids: Sequence[str]) -> dict[str, _Target]:
        """Node rows and their profiles' validated properties, read in two queries."""
        if not node_ids:
            return {}
        with self.ctx.database.read() as session:
            nodes = session.scalars(select(NodeRow).where(NodeRow.id.in_(list(node_ids)))).all()
            profile_ids = {n.profile_id for n in nodes}
            profiles = {
                p.id: p
                for p in session.scalars(
                    select(ProfileRow).where(ProfileRow.id.in_(profile_ids))
                ).all()
            }
        validated: dict[str, tuple[str, dict[str, Any]] | str] = {}
        for profile in profiles.values():
            try:
                driver = self.ctx.drivers.get(profile.type)
                validated[profile.id] = (
                    profile.type,
                    driver.validate_properties(profile.spec.get("properties", {})),
                )
            except HerdError as exc:
                validated[profile.id] = str(exc)
        return {n.id: _Target(n, validated.get(n.profile_id, "profile is gone")) for n in nodes}

    def _submit(
        self,
        child_id: str,
        verb: ActionName,
        node_id: str,
        target: _Target | None,
        inputs: Mapping[str, Any],
    ) -> Future[FinishedCall]:
        if verb is ActionName.NODE_LEAVE:
            return self.pool.submit(lambda: FinishedCall(child_id, node_id, None))
        if target is None:
            target = self._load_targets([node_id]).get(node_id)
        if target is None:
            return self.pool.submit(
                lambda: FinishedCall(
                    child_id,
                    node_id,
                    None if verb is not ActionName.NODE_CREATE else "node disappeared",
                )
            )
        if verb is ActionName.NODE_CREATE:
            return self.pool.submit(self._create_one, child_id, target)
        if verb is ActionName.NODE_RECOVER:
            return self.pool.submit(self._recover_one, child_id, target, inputs)
        return self.pool.submit(self._delete_one, child_id, target)

    def _create_one(self, child_id: str, target: _Target) -> FinishedCall:
        node = target.node
        if isinstance(target.profile, str):
            return FinishedCall(child_id, node.id, f"Failed in creating node: {target.profile}")
        profile_type, properties = target.profile
        if node.physical_id:  # adopted after an engine restart: the resource already exists
            return FinishedCall(
                child_id, node.id, None, CreatedResource(node.physical_id, dict(node.data))
            )
        try:
            request = node_request(node, properties)
            created = self.ctx.drivers.get(profile_type).create(request)
            return FinishedCall(child_id, node.id, None, created, self.ctx.now())
        except HerdError as exc:
            return FinishedCall(child_id, node.id, f"Failed in creating node: {exc}")
        except Exception as exc:  # a driver bug must not hang the parent
            return FinishedCall(child_id, node.id, f"Failed in creating node: {exc!r}")

    def _recover_one(
        self, child_id: str, target: _Target, inputs: Mapping[str, Any]
    ) -> FinishedCall:
        node = target.node
        options = RecoveryOptions().merged(inputs)
        if isinstance(target.profile, str):
            error = f"Recovery failed: {target.profile}"
            return FinishedCall(child_id, node.id, error, options=options)
        profile_type, properties = target.profile
        ref = ResourceRef(node.id, node.physical_id, dict(node.data or {}), properties)
        outcome = recover_resource(
            self.ctx.drivers.get(profile_type), ref, node_request(node, properties), options
        )
        return FinishedCall(
            child_id,
            node.id,
            outcome.error,
            outcome.resource,
            self.ctx.now(),
            recovery=outcome,
            options=options,
        )

    def _delete_one(self, child_id: str, target: _Target) -> FinishedCall:
        node = target.node
        if not node.physical_id:
            return FinishedCall(child_id, node.id, None)
        if isinstance(target.profile, str):
            return FinishedCall(child_id, node.id, f"Failed in deleting node: {target.profile}")
        profile_type, properties = target.profile
        try:
            ref = ResourceRef(node.id, node.physical_id, dict(node.data or {}), properties)
            self.ctx.drivers.get(profile_type).delete(ref)
            return FinishedCall(child_id, node.id, None)
        except HerdError as exc:
            return FinishedCall(child_id, node.id, f"Failed in deleting node: {exc}")
        except Exception as exc:
            return FinishedCall(child_id, node.id, f"Failed in deleting node: {exc!r}")

    # -- writing results ---------------------------------------------------------------


def _drain(source: queue.SimpleQueue[FinishedCall], timeout: float) -> list[FinishedCall]:
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
