"""The health manager's decisions, as pure functions of what it knows and the time.

Which members to check in a round, what several detection modes' answers add
up to (``recovery_conditional``), whether a failure is forgiven because the
node was updated a moment ago (``node_update_timeout``), and when a node that
keeps failing may be recovered again (exponential back-off). The engine feeds
them rows and ``now``; nothing here reads a clock, a database or a driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from herd.policies.health_settings import HealthSettings
from herd.types import DetectionType, NodeStatus, RecoveryConditional

#: Members in these states are checked; the others are being created, changed or removed.
CHECKABLE = frozenset({NodeStatus.ACTIVE, NodeStatus.ERROR, NodeStatus.WARNING})


@dataclass(frozen=True, slots=True)
class MemberState:
    """One member as the manager sees it when it plans a round."""

    id: str
    status: NodeStatus
    physical_id: str | None
    #: a live action holds the node's lock (e.g. a delete waiting for a hook), or its deletion
    #: is pending (a NODE_DELETE that failed or was cancelled: its tombstone)
    busy: bool = False


@dataclass(frozen=True, slots=True)
class ModeAnswer:
    """What one detection mode said about one node."""

    mode: DetectionType
    healthy: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The combined answer for a node: failed or not, and the answers that decided it."""

    failed: bool
    reason: str
    mode: DetectionType | None  # the (first) deciding mode; None when nothing was asked
    forgiven: bool = False  # failed answers ignored inside node_update_timeout


@dataclass(frozen=True, slots=True)
class Backoff:
    """The back-off schedule: ``base * 2**(n-1)`` seconds after the n-th recovery in a row."""

    base: float = 10.0
    cap: float = 600.0
    #: a failure this long after the last recovery starts a new series (the node held up)
    reset_after: float = 600.0


@dataclass(frozen=True, slots=True)
class RecoveryPlan:
    """Whether a failed node may be recovered now, or when it may."""

    due: bool
    not_before: float  # epoch seconds; equals ``now`` when due
    streak: int  # recoveries in a row, counting this one when due


def checkable(members: Iterable[MemberState]) -> list[str]:
    """Ids of the members a round may check: settled states, no action on them."""
    return [m.id for m in members if m.status in CHECKABLE and not m.busy]


def round_due(last_round: float | None, now: float, interval: float) -> bool:
    """A polling round is due ``interval`` seconds after the previous one started."""
    return last_round is None or now - last_round >= interval


def within_grace(updated_at: float | None, now: float, node_update_timeout: float) -> bool:
    """Senlin's grace: a node updated less than ``node_update_timeout`` ago is forgiven."""
    return updated_at is not None and now - updated_at < node_update_timeout


def combine(
    answers: Sequence[ModeAnswer],
    settings: HealthSettings,
    *,
    updated_at: float | None,
    now: float,
) -> Verdict:
    """Add up the modes' answers for one node.

    A polling answer that failed inside ``node_update_timeout`` of the node's last
    update counts as healthy (the node may still be warming up), as in Senlin. A
    lifecycle event is never forgiven: a process that exited does not warm up.
    With ANY_FAILED one failed mode fails the node; with ALL_FAILED every
    configured mode must have failed (a mode that did not answer counts as
    healthy: no event means the driver saw nothing).
    """
    graced = within_grace(updated_at, now, settings.node_update_timeout)
    effective: list[ModeAnswer] = []
    forgiven = False
    for answer in answers:
        if not answer.healthy and graced and answer.mode is not DetectionType.LIFECYCLE_EVENTS:
            forgiven = True
            effective.append(ModeAnswer(answer.mode, True, f"forgiven: {answer.reason}"))
        else:
            effective.append(answer)
    failed = [a for a in effective if not a.healthy]
    if settings.recovery_conditional is RecoveryConditional.ANY_FAILED:
        is_failed = bool(failed)
    else:
        answered = {a.mode for a in failed}
        is_failed = bool(failed) and all(mode.type in answered for mode in settings.modes)
    if is_failed:
        reason = "; ".join(f"{a.mode.value}: {a.reason}" for a in failed)
        return Verdict(True, reason, failed[0].mode, forgiven)
    if failed:
        reason = "; ".join(f"{a.mode.value}: {a.reason}" for a in failed)
        return Verdict(False, f"ALL_FAILED not met ({reason})", failed[0].mode, forgiven)
    mode = effective[0].mode if effective else None
    reason = "; ".join(a.reason for a in effective if a.reason) or "healthy"
    return Verdict(False, reason, mode, forgiven)


def backoff_delay(streak: int, backoff: Backoff) -> float:
    """Seconds to wait after the ``streak``-th recovery in a row before the next one."""
    if streak <= 0:
        return 0.0
    # Cap the exponent too: 2**streak overflows a float long before anyone notices.
    return float(min(backoff.cap, backoff.base * 2 ** min(streak - 1, 60)))


def plan_recovery(
    streak: int,
    last_recovery: float | None,
    failed_since: float,
    now: float,
    backoff: Backoff,
) -> RecoveryPlan:
    """Decide whether a failed node may be recovered now.

    Args:
        streak: recoveries in a row so far (stored per node).
        last_recovery: when the last of them started (epoch seconds), if any.
        failed_since: when the current failure was first seen. A node that held up
            ``reset_after`` seconds after its last recovery starts a new series;
            the time spent waiting for a back-off does not count as holding up.
        now: the current time.
        backoff: the schedule.
    """
    if last_recovery is None or failed_since - last_recovery >= backoff.reset_after:
        streak = 0
    since = last_recovery if last_recovery is not None else now
    not_before = since + backoff_delay(streak, backoff)
    if streak == 0 or now >= not_before:
        return RecoveryPlan(True, now, streak + 1)
    return RecoveryPlan(False, not_before, streak)
