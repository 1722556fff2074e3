"""Writing a round's verdicts, and starting recoveries through the ordinary action machinery.

In one write transaction: every verdict goes to ``node_checks``; failed members
are marked (status ERROR, health CHECK_FAILED, an event naming the mode and its
answer); members a check had failed and that pass again are restored; the
back-off decides which failed members may be recovered now. Those get one
CLUSTER_RECOVER action (READY, for any engine's dispatcher), created only while
this engine still holds the cluster's lease and nothing holds the cluster lock
or is queued on the cluster; otherwise nothing is started and the next round
tries again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from herd.engine.clusters import SETTLED, evaluate_in
from herd.engine.context import EngineContext
from herd.engine.health.recover_node import RecoveryOptions
from herd.engine.health.snapshot import RoundMember, RoundSnapshot
from herd.policies.health_rules import Backoff, Verdict, plan_recovery
from herd.policies.health_settings import HealthSettings
from herd.store import actions as action_store
from herd.store import clusters, events, locks, node_checks
from herd.store import health_leases as lease_store
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.types import ActionName, DetectionType, HealthStatus, NodeStatus

MANAGER_USER = "herd-health-manager"
#: the action name of the health manager's events and of its cluster status reasons
HEALTH_CHECK = "HEALTH_CHECK"
CHECK_FAILED_PREFIX = "Check failed: "


#: the ``source`` label of herd_health_detections_total for each detection mode
DETECTION_SOURCES = {
    DetectionType.NODE_STATUS_POLLING: "driver",
    DetectionType.NODE_STATUS_POLL_URL: "poll_url",
    DetectionType.LIFECYCLE_EVENTS: "lifecycle_event",
}


@dataclass
class Settled:
    """Which failed nodes still wait (their events stay pending), and until when."""

    waiting: set[str] = field(default_factory=set)
    earliest: float = 0.0  # 0: nothing to wait for


def _event(
    session: Session,
    member: RoundMember | None,
    snapshot: RoundSnapshot,
    status: str,
    reason: str,
    now: float,
    *,
    action: str = HEALTH_CHECK,
    level: str = "INFO",
) -> None:
    events.record(
        session,
        otype="NODE" if member is not None else "CLUSTER",
        oid=member.target.node_id if member is not None else snapshot.cluster_id,
        oname=member.target.name if member is not None else snapshot.name,
        project=snapshot.project,
        user=MANAGER_USER,
        cluster_id=snapshot.cluster_id,
        action=action,
        status=status,
        reason=reason,
        level=level,
        now=now,
    )


class RecoveryStarter:
    def __init__(self, ctx: EngineContext, on_recovery: Callable[[], None]) -> None:
        self.ctx = ctx
        self.on_recovery = on_recovery

    def backoff(self) -> Backoff:
        settings = self.ctx.settings
        return Backoff(
            settings.health_backoff_base,
            settings.health_backoff_max,
            settings.health_backoff_reset,
        )

    def note_suspension(self, snapshot: RoundSnapshot, *, suspended: bool) -> None:
        """One event when checks stop for a shrink, one when they start again."""
        if suspended:
            status = "SUSPENDED"
            reason = (
                f"Health checks suspended while action {snapshot.suspended_by} shrinks the cluster."
            )
        else:
            status, reason = "RESUMED", "Health checks resumed."
        with self.ctx.database.write() as session:
            _event(session, None, snapshot, status, reason, self.ctx.now())

    def settle(
        self,
        settings: HealthSettings,
        snapshot: RoundSnapshot,
        verdicts: dict[str, Verdict],
        now: float,
    ) -> Settled:
        settled = Settled()
        if not verdicts:
            return settled
        first_mode = settings.modes[0].type
        records = [
            node_checks.CheckRecord(
                node_id,
                snapshot.cluster_id,
                (verdict.mode or first_mode).value,
                not verdict.failed,
                verdict.reason,
            )
            for node_id, verdict in verdicts.items()
        ]
        backoff = self.backoff()
        earliest = math.inf
        with self.ctx.database.write() as session:
            rows = node_checks.record(session, records, now)
            due: dict[str, tuple[Verdict, int]] = {}
            marked = False
            for node_id, verdict in verdicts.items():
                member = snapshot.members[node_id]
                if not verdict.failed:
                    if member.status_reason.startswith(CHECK_FAILED_PREFIX):
                        marked |= self._mark_passed(session, snapshot, member, verdict, now)
                    continue
                marked |= self._mark_failed(session, snapshot, member, verdict, now)
                check = rows[node_id]  # as stored now, failed_since included
                plan = plan_recovery(
                    check.streak, check.last_recovery_at, check.failed_since or now, now, backoff
                )
                if plan.due:
                    due[node_id] = (verdict, plan.streak)
                    continue
                settled.waiting.add(node_id)
                earliest = min(earliest, plan.not_before)
                _, fresh = node_checks.defer_recovery(
                    session, node_id, snapshot.cluster_id, plan.not_before
                )
                if fresh:
                    wait = plan.not_before - now
                    _event(
                        session,
                        member,
                        snapshot,
                        "DEFERRED",
                        f"Recovery deferred {wait:.0f}s (back-off after {plan.streak} "
                        f"recoveries in a row); failure: {self._detected(verdict)}",
                        now,
                        action="HEALTH_BACKOFF",
                        level="WARNING",
                    )
            if marked:
                self._refresh_cluster(session, snapshot.cluster_id, now)
            if due and not self._start(session, settings, snapshot, due, now):
                settled.waiting |= set(due)
                earliest = min(earliest, now)
        settled.earliest = 0.0 if earliest is math.inf else earliest
        return settled

    @staticmethod
    def _detected(verdict: Verdict) -> str:
        mode = verdict.mode.value if verdict.mode is not None else "check"
        return verdict.reason if verdict.reason.startswith(mode) else f"{mode}: {verdict.reason}"

    @staticmethod
    def _refresh_cluster(session: Session, cluster_id: str, now: float) -> None:
        """The cluster's status after marks changed its members (issue 24: a cluster whose
        member crash-loops is not ACTIVE while the member waits out its back-off).

        Only a settled status is re-evaluated: an action working on the cluster
        (RESIZING, RECOVERING, ...) evaluates it when it ends.
        """
        cluster = clusters.get(session, cluster_id)
        if cluster is not None and cluster.status in SETTLED:
            evaluate_in(session, cluster, HEALTH_CHECK, user=MANAGER_USER, now=now)

    def _mark_failed(
        self,
        session: Session,
        snapshot: RoundSnapshot,
        member: RoundMember,
        verdict: Verdict,
        now: float,
    ) -> bool:
        """Mark the member failed; False when nothing changed."""
        node = node_store.get(session, member.target.node_id)
        if node is None or node.cluster_id != snapshot.cluster_id:
            return False
        detected = self._detected(verdict)
        status_reason = CHECK_FAILED_PREFIX + detected
        if node.status == NodeStatus.ERROR and node.status_reason == status_reason:
            return False
        # updated_at is left alone: it is the node_update_timeout clock, and a check is
        # not an update of the node.
        node.status, node.status_reason = NodeStatus.ERROR, status_reason
        if node.health_marked_by in (None, "check") or node.health != HealthStatus.CHECK_FAILED:
            node.health, node.health_reason = HealthStatus.CHECK_FAILED, detected
            node.health_marked_by, node.health_marked_at = "check", now
            node.health_generation = (node.health_generation or 0) + 1
        _event(session, member, snapshot, "CHECK_FAILED", detected, now, level="WARNING")
        source = DETECTION_SOURCES.get(verdict.mode, "other") if verdict.mode else "other"
        self.ctx.metrics.health_detected(source)
        return True

    def _mark_passed(
        self,
        session: Session,
        snapshot: RoundSnapshot,
        member: RoundMember,
        verdict: Verdict,
        now: float,
    ) -> bool:
        """Restore a member a check had failed; False when nothing changed."""
        node = node_store.get(session, member.target.node_id)
        if node is None or not (node.status_reason or "").startswith(CHECK_FAILED_PREFIX):
            return False
        node.status, node.status_reason = NodeStatus.ACTIVE, "Check passed"
        if node.health_marked_by in (None, "check"):
            node.health, node.health_reason = HealthStatus.CHECK_COMPLETE, "Check passed"
            node.health_marked_by, node.health_marked_at = "check", now
            node.health_generation = (node.health_generation or 0) + 1
        _event(session, member, snapshot, "CHECK_COMPLETE", f"Check passed: {verdict.reason}", now)
        return True

    def _start(
        self,
        session: Session,
        settings: HealthSettings,
        snapshot: RoundSnapshot,
        due: dict[str, tuple[Verdict, int]],
        now: float,
    ) -> bool:
        """Create the CLUSTER_RECOVER; False (nothing written) when it may not run now."""
        ctx = self.ctx
        cluster_id = snapshot.cluster_id
        if not lease_store.holds(session, cluster_id, ctx.engine_id):
            return False
        if locks.cluster_lock_holders(session, cluster_id, ctx.dead_before()):
            return False
        if action_store.active_actions_on(session, cluster_id):
            return False
        cluster = clusters.get(session, cluster_id)
        if cluster is None:
            return False
        options = RecoveryOptions.from_settings(settings)
        detected = {node_id: self._detected(verdict) for node_id, (verdict, _) in due.items()}
        inputs: dict[str, object] = {
            "nodes": sorted(due),
            "detected": detected,
            **options.to_inputs(),
        }
        action = action_store.new_action(
            action=ActionName.CLUSTER_RECOVER,
            target=cluster.id,
            cluster_id=cluster.id,
            project=cluster.project,
            user=MANAGER_USER,
            inputs=inputs,
            timeout=cluster.timeout,
            now=now,
        )
        action_store.add(session, action)
        for node_id, (_verdict, streak) in sorted(due.items()):
            node_checks.start_recovery(session, node_id, cluster_id, streak, now)
            _event(
                session,
                snapshot.members[node_id],
                snapshot,
                "RECOVERING",
                f"Recovery started ({options.operation.value}, action {action.id[:8]}, "
                f"{streak} in a row): {detected[node_id]}",
                now,
                action="HEALTH_RECOVERY",
                level="WARNING",
            )
        session.info.setdefault("after_commit", []).append(self.on_recovery)
        return True
