"""Alertmanager notifications: firing vs resolved, and one trigger per new firing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from herd.domain.alerts import (
    Alert,
    AlertStatus,
    Notification,
    alert_key,
    decide,
    firing_keys,
)

FIRING, RESOLVED = AlertStatus.FIRING, AlertStatus.RESOLVED


def alert(
    status: AlertStatus = FIRING,
    starts: str = "2026-11-23T10:00:00Z",
    fingerprint: str | None = "f1",
    **labels: str,
) -> Alert:
    return Alert(status, labels or {"alertname": "HighLoad"}, starts, fingerprint)


def note(*alerts: Alert, status: AlertStatus = FIRING, group: str = "g") -> Notification:
    return Notification(status, group, alerts or (alert(),))


def test_a_new_firing_alert_triggers_and_names_its_key() -> None:
    decision = decide(note(), seen=set())
    assert decision.trigger
    assert decision.new_keys == (alert_key("g", alert()),)
    assert decision.reason == "1 new firing alert(s) of 1."


def test_a_repeated_delivery_does_not_trigger() -> None:
    first = decide(note(), seen=set())
    again = decide(note(), seen=set(first.new_keys))
    assert not again.trigger and again.new_keys == ()
    assert again.reason == "Already handled: all 1 firing alert(s) were seen before."


def test_resolved_notifications_never_trigger() -> None:
    resolved = note(alert(RESOLVED), status=RESOLVED)
    assert decide(resolved, seen=set()) == decide(resolved, seen={"x"})
    assert not decide(resolved, seen=set()).trigger
    assert decide(resolved, seen=set()).reason == "Resolved notification: nothing to do."
    # A group whose alerts all resolved, even if the group status says firing.
    assert not decide(note(alert(RESOLVED)), seen=set()).trigger


def test_only_firing_alerts_count() -> None:
    mixed = note(alert(), alert(RESOLVED, fingerprint="f2"))
    assert firing_keys(mixed) == [alert_key("g", alert())]
    # One alert of the group resolves, the other was seen: no new situation.
    assert not decide(mixed, seen=set(firing_keys(mixed))).trigger


def test_a_new_alert_in_the_group_triggers_with_only_its_key() -> None:
    seen = set(firing_keys(note()))
    grown = note(alert(), alert(fingerprint="f2"))
    decision = decide(grown, seen=seen)
    assert decision.trigger
    assert decision.new_keys == (alert_key("g", alert(fingerprint="f2")),)
    assert decision.reason == "1 new firing alert(s) of 2."


def test_keys_separate_groups_startsat_and_alerts() -> None:
    base = alert_key("g", alert())
    assert alert_key("g", alert()) == base
    assert len(base) == 64 and int(base, 16) >= 0
    assert alert_key("h", alert()) != base
    assert alert_key("g", alert(starts="2026-11-23T11:00:00Z")) != base
    assert alert_key("g", alert(fingerprint="f2")) != base


def test_labels_stand_in_for_a_missing_fingerprint_in_any_order() -> None:
    one = Alert(FIRING, {"a": "1", "b": "2"}, "t", None)
    same = Alert(FIRING, {"b": "2", "a": "1"}, "t", None)
    other = Alert(FIRING, {"a": "1", "b": "3"}, "t", None)
    assert alert_key("g", one) == alert_key("g", same) != alert_key("g", other)


def test_duplicate_alerts_in_one_notification_count_once() -> None:
    assert len(firing_keys(note(alert(), alert()))) == 1


@given(
    st.lists(
        st.tuples(st.sampled_from(["f1", "f2", "f3"]), st.sampled_from(["t1", "t2"])),
        min_size=1,
        max_size=6,
    )
)
def test_replaying_any_delivery_sequence_triggers_once_per_distinct_firing(
    deliveries: list[tuple[str, str]],
) -> None:
    seen: set[str] = set()
    triggers = 0
    for fingerprint, starts in deliveries:
        decision = decide(note(alert(fingerprint=fingerprint, starts=starts)), seen=seen)
        if decision.trigger:
            triggers += 1
            seen.update(decision.new_keys)
    assert triggers == len(set(deliveries))
