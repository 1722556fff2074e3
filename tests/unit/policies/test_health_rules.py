"""The health manager's pure decisions: what to check, what the answers add up to, back-off."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from herd.policies.health_rules import (
    Backoff,
    MemberState,
    ModeAnswer,
    backoff_delay,
    checkable,
    combine,
    plan_recovery,
    round_due,
)
from herd.policies.health_settings import DetectionMode, HealthSettings
from herd.types import DetectionType, NodeStatus, RecoveryConditional

LIFECYCLE = DetectionType.LIFECYCLE_EVENTS
POLLING = DetectionType.NODE_STATUS_POLLING
URL = DetectionType.NODE_STATUS_POLL_URL
ALL_MODES = (LIFECYCLE, POLLING, URL)


def settings(
    modes: tuple[DetectionType, ...] = ALL_MODES,
    conditional: RecoveryConditional = RecoveryConditional.ANY_FAILED,
    grace: float = 0.0,
) -> HealthSettings:
    return HealthSettings(
        modes=tuple(DetectionMode(m, poll_url="http://x") for m in modes),
        recovery_conditional=conditional,
        node_update_timeout=grace,
    )


def test_only_settled_members_nobody_works_on_are_checked() -> None:
    members = [
        MemberState("a", NodeStatus.ACTIVE, "p1"),
        MemberState("b", NodeStatus.ERROR, None),
        MemberState("c", NodeStatus.WARNING, "p3"),
        MemberState("d", NodeStatus.CREATING, None),
        MemberState("e", NodeStatus.DELETING, "p5"),
        MemberState("f", NodeStatus.RECOVERING, "p6"),
        MemberState("g", NodeStatus.ACTIVE, "p7", busy=True),  # e.g. a delete waiting on a hook
        MemberState("h", NodeStatus.UPDATING, "p8"),
    ]
    assert checkable(members) == ["a", "b", "c"]


def test_round_due_after_interval() -> None:
    assert round_due(None, 100.0, 5.0)
    assert not round_due(100.0, 104.9, 5.0)
    assert round_due(100.0, 105.0, 5.0)


answer_lists = st.lists(
    st.builds(ModeAnswer, st.sampled_from(ALL_MODES), st.booleans(), st.just("why")),
    max_size=3,
    unique_by=lambda a: a.mode,
)


@given(answer_lists)
def test_any_failed_fails_on_one_failed_mode(answers: list[ModeAnswer]) -> None:
    verdict = combine(answers, settings(), updated_at=None, now=1000.0)
    assert verdict.failed == any(not a.healthy for a in answers)
    if verdict.failed:
        assert verdict.mode is not None
        assert all(f"{a.mode.value}: why" in verdict.reason for a in answers if not a.healthy)


@given(answer_lists)
def test_all_failed_needs_every_configured_mode_failed(answers: list[ModeAnswer]) -> None:
    verdict = combine(
        answers, settings(conditional=RecoveryConditional.ALL_FAILED), updated_at=None, now=1.0
    )
    failed_modes = {a.mode for a in answers if not a.healthy}
    assert verdict.failed == (failed_modes == set(ALL_MODES))
    if failed_modes and not verdict.failed:
        assert verdict.reason.startswith("ALL_FAILED not met")


def test_all_failed_missing_answer_counts_as_healthy() -> None:
    two = settings((LIFECYCLE, POLLING), RecoveryConditional.ALL_FAILED)
    only_event = [ModeAnswer(LIFECYCLE, False, "process 9 exited")]
    assert not combine(only_event, two, updated_at=None, now=1.0).failed
    both = [*only_event, ModeAnswer(POLLING, False, "process 9 exited")]
    assert combine(both, two, updated_at=None, now=1.0).failed


def test_node_update_timeout_forgives_polling_but_not_events() -> None:
    graced = settings((LIFECYCLE, URL), grace=60.0)
    polled = [ModeAnswer(URL, False, "HTTP 500")]
    fresh = combine(polled, graced, updated_at=990.0, now=1000.0)
    assert not fresh.failed and fresh.forgiven
    stale = combine(polled, graced, updated_at=900.0, now=1000.0)
    assert stale.failed and not stale.forgiven
    died = combine([ModeAnswer(LIFECYCLE, False, "killed")], graced, updated_at=999.0, now=1000.0)
    assert died.failed


def test_backoff_schedule_doubles_up_to_the_cap() -> None:
    schedule = Backoff(base=2.0, cap=30.0)
    assert [backoff_delay(n, schedule) for n in range(7)] == [0, 2, 4, 8, 16, 30, 30]


@given(st.integers(min_value=0, max_value=10_000), st.floats(0.1, 100), st.floats(1, 10_000))
def test_backoff_is_monotonic_and_capped(streak: int, base: float, cap: float) -> None:
    schedule = Backoff(base=base, cap=cap)
    now, later = backoff_delay(streak, schedule), backoff_delay(streak + 1, schedule)
    assert 0 <= now <= later <= max(cap, 0)


def test_plan_recovery_first_failure_is_due_at_once() -> None:
    plan = plan_recovery(0, None, 100.0, 100.0, Backoff(base=10))
    assert plan.due and plan.streak == 1 and plan.not_before == 100.0


def test_plan_recovery_waits_after_repeated_failures() -> None:
    schedule = Backoff(base=10, cap=600, reset_after=300)
    # Third failure in a row, 5 s after the second recovery: wait base * 2 = 20 s.
    plan = plan_recovery(2, 1000.0, 1005.0, 1005.0, schedule)
    assert not plan.due and plan.not_before == 1020.0 and plan.streak == 2
    later = plan_recovery(2, 1000.0, 1005.0, 1020.0, schedule)
    assert later.due and later.streak == 3


def test_plan_recovery_new_series_after_holding_up() -> None:
    schedule = Backoff(base=10, cap=600, reset_after=300)
    plan = plan_recovery(6, 1000.0, 1400.0, 1400.0, schedule)  # failed 400 s after recovery
    assert plan.due and plan.streak == 1


@given(
    st.lists(st.floats(min_value=0, max_value=50), min_size=1, max_size=30),
    st.floats(min_value=0.5, max_value=20),
)
# The back-off reaches the cap, which equals reset_after: the wait must not count as holding up.
@example(gaps=[0.0] * 30, base=8.0)
def test_crash_loop_recoveries_are_spaced_by_the_backoff(gaps: list[float], base: float) -> None:
    """A node that fails right after every recovery is recovered ever more rarely."""
    schedule = Backoff(base=base, cap=1e9, reset_after=1e9)
    now, streak, last = 0.0, 0, None
    starts: list[float] = []
    for gap in gaps:
        now += gap  # the node fails again ``gap`` seconds later (or keeps failing)
        failed_since = now  # as the health starter stores it: waiting does not move it
        plan = plan_recovery(streak, last, failed_since, now, schedule)
        if not plan.due:
            now = plan.not_before
            plan = plan_recovery(streak, last, failed_since, now, schedule)
        assert plan.due
        streak, last = plan.streak, now
        starts.append(now)
    for n in range(1, len(starts)):
        assert starts[n] - starts[n - 1] >= backoff_delay(n, schedule) - 1e-6
