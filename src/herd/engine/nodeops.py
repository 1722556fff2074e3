"""Creating, deleting, releasing and recovering many nodes as child actions of one action.

A parent first *plans*: in one transaction it stores the node rows and one
child action per node (NODE_CREATE, NODE_DELETE, NODE_LEAVE or NODE_RECOVER) linked to it,
with one bulk statement per table. It then *runs* the children: driver calls go
to a shared thread pool (quick ones, see ``Driver.calls_are_quick``, many to a
task and to the driver at once), and their results are written back in batches
of bulk statements, so 10,000 simulated nodes cost a few dozen transactions and
a few hundred statements. Because the plan is stored first, a parent that is
resumed after an engine crash runs only the children that have not ended, and
never creates a node twice.
"""

from __future__ import annotations

import collections
import contextvars
import queue
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from herd.engine.context import EngineContext
from herd.engine.execution import ActionCancelled, ActionExecution
from herd.engine.health.recover_node import mark_recovering
from herd.engine.hooks import HookWaiter
from herd.engine.memory import release_freed_memory
from herd.engine.node_calls import (
    NodeTarget,
    QuickCalls,
    call_driver,
    call_many,
    load_targets,
)
from herd.engine.node_results import (
    ChildResults,
    FinishedCall,
    NodeResultWriter,
    drain,
    put_all,
)
from herd.errors import HerdError
from herd.store import actions as action_store
from herd.store import clusters, locks
from herd.store import nodes as node_store
from herd.store.models import ClusterRow
from herd.types import ActionCause, ActionName, ActionStatus, NodeStatus

FLUSH_EVERY = 200  # results per transaction at most
FLUSH_AFTER = 0.25  # seconds between two writes of results at least (unless all ended)
#: seconds a finished result waits for its siblings (calls started together end together),
#: so that they are written in one transaction rather than one each
FLUSH_GATHER = 0.05
QUICK_BATCH = 100  # quick driver calls (see Driver.calls_are_quick) per pool task
PLAN_EVERY = 2000  # planned nodes (and children) built and inserted at once
TARGETS_EVERY = 5000  # children whose nodes are read at once when a run starts
IN_FLIGHT = 2000  # driver calls started and not yet written, at most
TRIM_AFTER = 2000  # children of a run after which freed memory goes back to the system


def node_name(cluster: ClusterRow, index: int) -> str:
    """Senlin's default member name, or the cluster's ``node.name.format``."""
    return node_namer(cluster)(index)


def node_namer(cluster: ClusterRow) -> Callable[[int], str]:
    """:func:`node_name` for one cluster, its settings read once (plans name thousands)."""
    pattern = (cluster.config or {}).get("node.name.format")
    if isinstance(pattern, str) and pattern:
        return lambda index: pattern.replace("$nI", str(index)).replace("$nR", uuid.uuid4().hex[:8])
    if cluster.name:
        prefix = f"node-{cluster.name}-"
        return lambda index: f"{prefix}{index:03d}"
    return lambda _index: f"node-{uuid.uuid4().hex[:8]}"


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
        placements: Sequence[Mapping[str, object]],
        *,
        names: Sequence[tuple[str, int]] | None = None,
    ) -> list[str]:
        """Store node rows and NODE_CREATE children; return the child action ids.

        ``names`` gives (name, index) pairs to reuse (replacement keeps a member's
        name and index); otherwise new indexes are taken from the cluster.
        """
        now = self.ctx.now()
        with self.ctx.database.write() as session:
            cluster = clusters.get(session, cluster_id)
            if cluster is None:
                raise HerdError(f"Cluster {cluster_id} disappeared")
            child_ids: list[str] = []
            namer = node_namer(cluster)
            next_index = cluster.next_index
            cluster_id, profile_id, project = cluster.id, cluster.profile_id, cluster.project
            domain = cluster.domain
            if names is None:
                cluster.next_index = next_index + len(placements)
            session.flush()  # the cluster's next_index, before the bulk statements
            # One transaction, a few bulk statements per 2,000 nodes: the ORM's unit of work
            # cost more than the driver calls for sim nodes, and building the rows of 100,000
            # nodes and their children at once held ~200 MB (issue 28).
            for first in range(0, len(placements), PLAN_EVERY):
                nodes: list[node_store.PlannedNode] = []
                children: list[dict[str, object]] = []
                for position in range(first, min(first + PLAN_EVERY, len(placements))):
                    if names is not None:
                        name, index = names[position]
                    else:
                        index = next_index
                        next_index += 1
                        name = namer(index)
                    node = node_store.planned_values(
                        name=name,
                        index=index,
                        cluster_id=cluster_id,
                        profile_id=profile_id,
                        placement=placements[position],
                        user=ex.user,
                        project=project,
                        domain=domain,
                        now=now,
                    )
                    nodes.append(node)
                    children.append(
                        action_store.action_values(
                            action=ActionName.NODE_CREATE,
                            target=node["id"],
                            cluster_id=cluster_id,
                            project=project,
                            user=ex.user,
                            cause=ActionCause.DERIVED,
                            status=ActionStatus.RUNNING,
                            parent_id=ex.id,
                            owner=self.ctx.engine_id,
                            now=now,
                        )
                    )
                node_store.insert_many(session, nodes)
                action_store.insert_actions(session, children, ex.id)
                child_ids += [str(child["id"]) for child in children]
        return child_ids

    def plan_removal(
        self,
        ex: ActionExecution,
        node_ids: Iterable[str],
        *,
        destroy: bool,
        hooks: Mapping[str, object] | None = None,
    ) -> list[str]:
        """Store NODE_DELETE (or NODE_LEAVE when not destroying) children for ``node_ids``.

        With lifecycle hooks, children of ACTIVE nodes start in
        WAITING_LIFECYCLE_COMPLETION and the hook message is sent after commit.
        """
        now = self.ctx.now()
        verb = ActionName.NODE_DELETE if destroy else ActionName.NODE_LEAVE
        wait_for_hook = bool(hooks) and bool(hooks.get("type") if hooks else None)
        children: list[dict[str, object]] = []
        deleting: list[str] = []
        with self.ctx.database.write() as session:
            for node_id, cluster_id, project, status, physical_id in node_store.removal_rows(
                session, node_ids
            ):
                hooked = wait_for_hook and status == NodeStatus.ACTIVE and physical_id
                children.append(
                    action_store.action_values(
                        action=verb,
                        target=node_id,
                        cluster_id=cluster_id,
                        project=project,
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
                )
                if destroy and not hooked:
                    deleting.append(node_id)
            action_store.insert_actions(session, children, ex.id)
            node_store.set_status_many(
                session, deleting, NodeStatus.DELETING, "Deletion in progress"
            )
            # Each child holds its node's lock from the start.
            locks.hand_nodes_to(session, [(str(c["target"]), str(c["id"])) for c in children], now)
        child_ids = [str(child["id"]) for child in children]
        if wait_for_hook and hooks:
            HookWaiter(self.ctx).send_all(ex, child_ids, hooks)
        return child_ids

    def plan_recover(
        self, ex: ActionExecution, inputs_by_node: Mapping[str, Mapping[str, object]]
    ) -> list[str]:
        """Store NODE_RECOVER children, one per node with its inputs; the nodes go RECOVERING.

        Each child holds its node's lock from the start, so nothing else acts on a
        node while it is being recovered.
        """
        now = self.ctx.now()
        child_ids: list[str] = []
        with self.ctx.database.write() as session:
            for node in node_store.get_many(session, inputs_by_node):
                child_id = ex.add_child(
                    session,
                    ActionName.NODE_RECOVER,
                    node_id=node.id,
                    cluster_id=node.cluster_id,
                    project=node.project,
                    inputs=dict(inputs_by_node[node.id]),
                    now=now,
                )
                mark_recovering(session, node, now)
                locks.hand_nodes_to(session, [(node.id, child_id)], now)
                child_ids.append(child_id)
        return child_ids

    # -- running -----------------------------------------------------------------------

    def run(self, ex: ActionExecution, child_ids: Sequence[str] | None = None) -> ChildResults:
        """Run every unfinished child of ``ex`` (or just ``child_ids``) and collect results."""
        results = ChildResults()
        waiter = HookWaiter(self.ctx)
        # Finished driver calls report through a queue: waiting on every pending
        # future at each step would cost O(n) per finished node.
        finished: queue.SimpleQueue[FinishedCall] = queue.SimpleQueue()
        pending: dict[str, Future[list[FinishedCall]]] = {}  # child id -> its driver call(s)
        done_buffer: list[FinishedCall] = []
        last_flush = last_cancel_check = self.ctx.now()
        buffered_at = 0.0  # when the oldest result in done_buffer arrived
        wanted = set(child_ids or ())
        with self.ctx.database.read() as session:
            rows = [
                r
                for r in action_store.child_summaries(session, ex.id)
                if not wanted or r.id in wanted
            ]
        verbs = {r.id: ActionName(r.action) for r in rows}
        # only children with inputs (NODE_RECOVER's): 100,000 empty dicts are ~6 MB
        child_inputs = {r.id: dict(r.inputs) for r in rows if r.inputs}
        # READY children were completed through the API before this loop started: they
        # still go through the hook poll, which honours an ABANDON result.
        hook_states = (ActionStatus.WAITING_LIFECYCLE_COMPLETION, ActionStatus.READY)
        waiting = {r.id: r.target for r in rows if r.status in hook_states}
        HookWaiter(self.ctx).send_lost(ex, [r.id for r in rows if r.status == hook_states[0]])
        # Targets of slow calls only: a quick call's pool task reads its own (``_call_all``),
        # so the facts of 100,000 sim nodes are never all held at once (issue 28).
        targets: dict[str, NodeTarget] = {}

        def start(calls: Sequence[tuple[str, str]]) -> None:
            future = self._submit(
                [
                    (
                        child_id,
                        verbs[child_id],
                        node,
                        targets.get(node),
                        child_inputs.get(child_id, {}),
                    )
                    for child_id, node in calls
                ]
            )
            future.add_done_callback(lambda f: put_all(finished, f.result()))
            for child_id, _ in calls:
                pending[child_id] = future

        # Calls not handed to the pool yet: at most IN_FLIGHT calls are started and not yet
        # written. A pool that runs far ahead of the result writer leaves every finished
        # call (its resource and data) waiting, up to 100,000 of them for a sim cluster,
        # and the writer then writes them in huge batches; the memory both took stays with
        # the process afterwards (issue 28).
        backlog: collections.deque[list[tuple[str, str]]] = collections.deque()

        def start_more() -> None:
            while backlog and len(pending) + len(done_buffer) < IN_FLIGHT:
                start(backlog.popleft())

        quick: list[tuple[str, str]] = []
        is_quick = QuickCalls(self.ctx)
        for first in range(0, len(rows), TARGETS_EVERY):
            chunk = rows[first : first + TARGETS_EVERY]
            read = load_targets(
                self.ctx, [r.target for r in chunk if not ActionStatus(r.status).is_final]
            )
            for row in chunk:
                status = ActionStatus(row.status)
                if status is ActionStatus.SUCCEEDED:
                    results.succeeded.append(row.target)
                elif status.is_final:
                    results.failed[row.target] = row.status_reason or status
                elif row.id not in waiting and is_quick(verbs[row.id], read.get(row.target)):
                    quick.append((row.id, row.target))
                else:
                    if row.target in read:
                        targets[row.target] = read[row.target]
                    if row.id not in waiting:
                        backlog.append([(row.id, row.target)])
        # Quick driver calls (a sim node without latency) go many to a pool task:
        # one thread hop per node cost more than the calls themselves.
        for first in range(0, len(quick), QUICK_BATCH):
            backlog.append(quick[first : first + QUICK_BATCH])
        quick = []
        rows = []  # 100,000 rows of a huge create: what the loop needs is in the dicts above
        try:
            while pending or waiting or backlog:
                start_more()
                if waiting:
                    ready, abandoned = waiter.poll(ex, waiting)
                    for child_id in ready:
                        start([(child_id, waiting.pop(child_id))])
                    for child_id, reason in abandoned.items():
                        results.abandoned.append(waiting.pop(child_id))
                        self.results.abandon(ex, child_id, reason)
                if pending:
                    due = max(buffered_at + FLUSH_GATHER, last_flush + FLUSH_AFTER)
                    wait = 0.2 if not done_buffer else due - self.ctx.now()
                    for item in drain(finished, timeout=min(0.2, max(wait, 0.0))):
                        pending.pop(item.child_id, None)
                        if not done_buffer:
                            buffered_at = self.ctx.now()
                        done_buffer.append(item)
                    now = self.ctx.now()
                    stale = (
                        bool(done_buffer)
                        and now - buffered_at >= FLUSH_GATHER
                        and now - last_flush >= FLUSH_AFTER
                    )
                    if len(done_buffer) >= FLUSH_EVERY or not pending or stale:
                        self.results.flush(ex, done_buffer, results, verbs)
                        done_buffer = []
                        last_flush = self.ctx.now()
                else:
                    self.ctx.sleep(0.2)
                if self.ctx.now() - last_cancel_check >= 0.5:
                    ex.check_cancel()
                    last_cancel_check = self.ctx.now()
        except ActionCancelled:
            futures = set(pending.values())
            for future in futures:
                future.cancel()
            for future in futures:
                if not future.cancelled():
                    done_buffer += [i for i in future.result() if i.child_id in pending]
            self.results.flush(ex, done_buffer, results, verbs)
            self.results.cancel_unfinished(ex)
            raise
        self.results.flush(ex, done_buffer, results, verbs)
        if len(verbs) >= TRIM_AFTER:
            release_freed_memory()
        return results

    def _submit(
        self, calls: Sequence[tuple[str, ActionName, str, NodeTarget | None, Mapping[str, object]]]
    ) -> Future[list[FinishedCall]]:
        """Run ``calls`` (child id, verb, node id, target, inputs) one after another on the pool."""
        # Driver calls run in a copy of this context, so their log lines name the action.
        return self.pool.submit(contextvars.copy_context().run, self._call_all, list(calls))

    def _call_all(
        self, calls: list[tuple[str, ActionName, str, NodeTarget | None, Mapping[str, object]]]
    ) -> list[FinishedCall]:
        missing = [c[2] for c in calls if c[3] is None and c[1] is not ActionName.NODE_LEAVE]
        if missing:
            found = load_targets(self.ctx, missing)
            calls = [(c, v, n, t or found.get(n), i) for c, v, n, t, i in calls]
        if len(calls) == 1:
            return [call_driver(self.ctx, *calls[0])]
        return call_many(self.ctx, calls)
