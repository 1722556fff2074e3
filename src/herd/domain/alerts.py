"""Prometheus Alertmanager notifications, read as signals for a receiver.

Alertmanager posts one notification per alert group: on the first firing, when the
group changes (alerts join or resolve), every ``repeat_interval`` while nothing
changes, and again whenever a delivery failed. A receiver must act once per new
situation, not once per delivery, so each firing alert is identified by a key made
of the group key, the alert's identity (its fingerprint, else its labels) and its
``startsAt``. A notification triggers the receiver's action when it carries at
least one firing alert whose key has not been seen before; a resolved notification,
or one whose firing alerts were all seen, does not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum


class AlertStatus(StrEnum):
    FIRING = "firing"
    RESOLVED = "resolved"


@dataclass(frozen=True)
class Alert:
    """One alert of a notification (the fields herd reads)."""

    status: AlertStatus
    labels: Mapping[str, str]
    starts_at: str
    fingerprint: str | None = None

    @property
    def identity(self) -> str:
        """The fingerprint Alertmanager computed, else the sorted labels."""
        if self.fingerprint:
            return self.fingerprint
        return json.dumps(dict(sorted(self.labels.items())), separators=(",", ":"))


@dataclass(frozen=True)
class Notification:
    """One Alertmanager webhook notification (payload version 4)."""

    status: AlertStatus
    group_key: str
    alerts: Sequence[Alert]

    def firing(self) -> list[Alert]:
        return [alert for alert in self.alerts if alert.status is AlertStatus.FIRING]


@dataclass(frozen=True)
class AlertDecision:
    """Whether a notification triggers the action, the keys to record, and why."""

    trigger: bool
    new_keys: tuple[str, ...]
    reason: str


def alert_key(group_key: str, alert: Alert) -> str:
    """The key that identifies one firing of one alert in one group (SHA-256, hex).

    Args:
        group_key: The notification's ``groupKey``.
        alert: The alert.

    Returns:
        64 hex characters; equal for repeated deliveries of the same firing.
    """
    text = "\0".join((group_key, alert.identity, alert.starts_at))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def firing_keys(notification: Notification) -> list[str]:
    """The keys of the notification's firing alerts, in order, without repeats."""
    keys = [alert_key(notification.group_key, alert) for alert in notification.firing()]
    return list(dict.fromkeys(keys))


def decide(notification: Notification, seen: Collection[str]) -> AlertDecision:
    """Decide whether a notification starts the receiver's action.

    Args:
        notification: The notification received.
        seen: The alert keys this receiver has already acted on.

    Returns:
        A decision to trigger (with the keys to record) when at least one firing alert
        is new; otherwise no trigger, with the reason.
    """
    firing = firing_keys(notification)
    if notification.status is AlertStatus.RESOLVED or not firing:
        return AlertDecision(False, (), "Resolved notification: nothing to do.")
    new = tuple(key for key in firing if key not in seen)
    if not new:
        return AlertDecision(
            False, (), f"Already handled: all {len(firing)} firing alert(s) were seen before."
        )
    return AlertDecision(True, new, f"{len(new)} new firing alert(s) of {len(firing)}.")
