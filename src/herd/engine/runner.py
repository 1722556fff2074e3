"""Running one claimed action: locks, BEFORE checks, the handler, AFTER checks, the end.

The runner owns everything around a handler so that handlers only say what an
action does. Every exception a handler lets escape fails the action with its
text; nothing is left RUNNING and every lock the action took is released.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

from herd.engine.context import EngineContext
from herd.engine.execution import ActionCancelled, ActionExecution, Outcome
from herd.engine.policy_check import policy_check
from herd.engine.recovery import PARENT_ENDED, end_children
from herd.engine.stopped import settle_cancelled
from herd.errors import HerdError
from herd.json_types import list_at, object_at
from herd.observability import context as log_context
from herd.store import actions as action_store
from herd.store import events, locks
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.store.models import ActionRow
from herd.types import (
    WAIT_FOR_LOCK,
    ActionCause,
    ActionControl,
    ActionName,
    ActionStatus,
    LockScope,
    Phase,
)

log = logging.getLogger(__name__)

Handler = Callable[[ActionExecution], Outcome]

#: actions that run no policy checks (policy bookkeeping itself)
UNCHECKED = {
    ActionName.CLUSTER_ATTACH_POLICY,
    ActionName.CLUSTER_DETACH_POLICY,
    ActionName.CLUSTER_UPDATE_POLICY,
    ActionName.PROFILE_DELETE,
    ActionName.POLICY_DELETE,
    ActionName.DELETION_PURGE,
}
#: actions that take no lock: a purge takes away the locks of the deletion it clears
LOCK_FREE = {ActionName.DELETION_PURGE}
#: actions whose ``force`` input takes their locks from live holders
FORCEABLE = {ActionName.CLUSTER_DELETE, ActionName.NODE_DELETE}


class LockBusy(Exception):
    pass


class ActionRunner:
    def __init__(self, ctx: EngineContext, handlers: dict[ActionName, Handler]) -> None:
        self.ctx = ctx
        self.handlers = handlers

    def run(self, action_id: str, row: ActionRow | None = None) -> None:
        """Run ``action_id``; ``row`` is its row as the claim returned it (else read here)."""
        if row is None:
            with self.ctx.database.read() as session:
                row = action_store.get(session, action_id)
        if row is None:
            return
        # Every log line written while the action runs names it, its cluster and the request
        # behind it; child actions and events it records inherit that request id.
        with log_context.bound(
            action_id=row.id, cluster_id=row.cluster_id, request_id=row.request_id
        ):
            self._run(ActionExecution(self.ctx, row), row.retries, row.created_at or self.ctx.now())

    def _run(self, ex: ActionExecution, retries: int, created_at: float) -> None:
        try:
            outcome = self._run_locked(ex, created_at)
        except LockBusy as busy:
            self._requeue_or_fail(ex, retries, str(busy), created_at)
            return
        except ActionCancelled as cancelled:
            outcome = Outcome(ActionStatus.CANCELLED, str(cancelled))
        except HerdError as exc:
            outcome = Outcome.failed(str(exc))
        except Exception as exc:  # a bug: fail the action with the text, keep the engine alive
            log.error("action %s crashed:\n%s", ex.id, traceback.format_exc())
            outcome = Outcome.failed(f"Unexpected error: {exc!r}")
        self._finish(ex, outcome)

    def _run_locked(self, ex: ActionExecution, created_at: float) -> Outcome:
        handler = self.handlers.get(ex.action)
        if handler is None:
            return Outcome.failed(f"Action {ex.action} is not supported by this engine.")
        with self.ctx.metrics.timed("lock"):
            self._take_locks(ex)
        self.ctx.metrics.action_locked(ex.action, self.ctx.now() - created_at)
        checked = ex.action not in UNCHECKED and (
            ex.action.is_cluster_action or ex.cause in (ActionCause.RPC,)
        )
        if checked:
            before = policy_check(ex, Phase.BEFORE)
            if not before.ok:
                prefix = "Policy check failure" if ex.action.is_cluster_action else "Policy check"
                return Outcome.failed(f"{prefix}: {before.reason}")
        outcome = handler(ex)
        if checked and outcome.status is ActionStatus.SUCCEEDED:
            ex.inputs["action_result"] = "OK"
            after = policy_check(ex, Phase.AFTER)
            if not after.ok:
                prefix = "Policy check failure" if ex.action.is_cluster_action else "Policy check"
                return Outcome.failed(f"{prefix}: {after.reason}", **outcome.outputs)
        return outcome

    def _take_locks(self, ex: ActionExecution) -> None:
        if ex.action in LOCK_FREE:
            return
        now = self.ctx.now()
        dead_before = self.ctx.dead_before()
        # A forced delete takes its locks from whoever holds them ("force means force",
        # Senlin's lock stealing); every other action waits for live holders.
        force = ex.action in FORCEABLE and bool(ex.inputs.get("force"))
        with self.ctx.database.write() as session:
            if ex.action.is_cluster_action:
                if not locks.acquire_cluster(
                    session, ex.target, ex.id, LockScope.CLUSTER, now, dead_before, force=force
                ):
                    self.ctx.metrics.lock_was_busy("cluster")
                    raise LockBusy("Failed in locking cluster")
                return
            node = node_store.get(session, ex.target)
            cluster_id = node.cluster_id if node is not None else None
            if (
                cluster_id
                and ex.cause is ActionCause.RPC
                and not locks.acquire_cluster(
                    session, cluster_id, ex.id, LockScope.NODE, now, dead_before
                )
            ):
                self.ctx.metrics.lock_was_busy("cluster")
                raise LockBusy("Failed in locking cluster")
            if node is not None and not locks.acquire_node(
                session, node.id, ex.id, now, dead_before, force=force
            ):
                self.ctx.metrics.lock_was_busy("node")
                raise LockBusy("Failed in locking node")

    def _requeue_or_fail(
        self, ex: ActionExecution, retries: int, reason: str, created_at: float
    ) -> None:
        now = self.ctx.now()
        # A receiver's action waits its turn (until its timeout) instead of failing.
        waits = bool(ex.data.get(WAIT_FOR_LOCK)) and (
            ex.timeout <= 0 or now - created_at < ex.timeout
        )
        with self.ctx.database.write() as session:
            locks.release_all(session, ex.id)
            if waits:
                action_store.set_status(
                    session,
                    ex.id,
                    ActionStatus.READY,
                    "Queued: waiting for the cluster lock.",
                    now,
                    owner=None,
                )
            elif retries < self.ctx.settings.lock_retry_times:
                action_store.set_status(
                    session,
                    ex.id,
                    ActionStatus.READY,
                    "The action was abandoned.",
                    now,
                    owner=None,
                    retries=retries + 1,
                )
            else:
                action_store.set_status(session, ex.id, ActionStatus.FAILED, reason, now)
                _end_children(session, ex.id, ActionStatus.FAILED, now)
        if not waits and retries >= self.ctx.settings.lock_retry_times:
            self.ctx.metrics.action_finished(ex.action, ActionStatus.FAILED, None)
        else:
            self.ctx.sleep(self.ctx.settings.lock_retry_interval)

    def _finish(self, ex: ActionExecution, outcome: Outcome) -> None:
        now = self.ctx.now()
        outputs = {**ex.outputs, **outcome.outputs}
        with self.ctx.metrics.timed("finish"), self.ctx.database.write() as session:
            row = action_store.get(session, ex.id)
            if row is None:
                return
            if row.control is ActionControl.FORCED_OUT:
                # A forced delete took its locks (locks._rob): whatever the rest of the run
                # did, its resource went, so it ends CANCELLED with that reason, whichever
                # cancel check (or none, when every call returned first) saw it.
                outcome = Outcome(ActionStatus.CANCELLED, str(row.status_reason))
            reason = outcome.reason
            if outcome.status is ActionStatus.SUCCEEDED and not reason:
                reason = "Action completed successfully."
            row.outputs = outputs
            row.data = ex.data
            row.steps = ex.steps
            action_store.set_status(session, ex.id, outcome.status, reason, now)
            _end_children(session, ex.id, outcome.status, now)
            if outcome.status is ActionStatus.CANCELLED:
                settle_cancelled(session, ex, now)
            locks.release_all(session, ex.id)
            events.record(
                session,
                otype=_event_type(ex),
                oid=ex.target,
                oname=ex.name,
                project=ex.project,
                user=ex.user,
                cluster_id=ex.cluster_id,
                action=ex.action,
                status=outcome.status,
                reason=reason,
                level="INFO" if outcome.status is ActionStatus.SUCCEEDED else "ERROR",
                now=now,
            )
        metrics = self.ctx.metrics
        metrics.action_finished(ex.action, outcome.status, now - ex.start_time)
        metrics.victims_chosen(str(rule) for rule in list_at(object_at(outputs, "shrink"), "rules"))
        log.info("%s %s: %s", ex.action, outcome.status, reason)


def _end_children(session: Session, parent_id: str, status: ActionStatus, now: float) -> None:
    """Children still open when their parent ends would hold their node locks for good."""
    ended = ActionStatus.CANCELLED if status is ActionStatus.CANCELLED else ActionStatus.FAILED
    children = action_store.unfinished_children(session, parent_id)
    if children:
        end_children(session, children, ended, PARENT_ENDED, now)


def _event_type(ex: ActionExecution) -> str:
    """What an action's end event is about: its cluster, node, or purged resource."""
    if ex.action is ActionName.DELETION_PURGE:
        return str(ex.inputs.get("resource_type", "cluster")).upper()
    return "CLUSTER" if ex.action.is_cluster_action else "NODE"
