"""Firing a receiver: its webhook URL, and Alertmanager notifications posted to it.

The URLs need no token: the secret in them is the credential. An unknown receiver,
a wrong secret and a missing one are the same 404, and the given secret is compared
with the stored digest in constant time. The action runs as the receiver's owner
(its user and project, with a member's scope), with the receiver's ``params``
merged with the request's, through the same handler as
``POST /v1/clusters/<id>/actions``; so it is validated and stored READY as that
endpoint would, except that a locked or busy cluster does not refuse it (409): the
action is queued (202, a QUEUED event) and the engine waits for the lock instead of
failing after ``lock_retry_times`` (``data.wait_for_lock``), until the action's timeout.

A scaling policy's ``cooldown`` is enforced by the engine, as for every scale action:
a trigger inside the window answers 202 and its action ends FAILED with
``Policy check failure: Failed policy '<name>': Policy <id> cooldown is still in
progress.``
"""

from __future__ import annotations

from dataclasses import dataclass

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import MAX_VERSION
from herd.api.schemas.webhooks import AlertmanagerNotification
from herd.api.services.cluster_actions import HANDLERS
from herd.api.services.common import check_fail_fast, submit
from herd.api.services.receivers import receiver_action
from herd.domain.alerts import Alert, AlertStatus, Notification, decide, firing_keys
from herd.errors import ActionConflict, InvalidRequest, NotFound, ResourceLocked
from herd.store import clusters, events
from herd.store import receivers as store
from herd.store.database import Session
from herd.store.models import ActionRow, ClusterRow, ReceiverRow
from herd.types import WAIT_FOR_LOCK, Role


@dataclass(frozen=True)
class AlertOutcome:
    """What a notification did: the action it started, or why it started none."""

    action: ActionRow | None
    reason: str


def authenticate(session: Session, receiver_id: str, secret: str | None) -> ReceiverRow:
    """The receiver whose URL this is; 404 alike for an unknown id and a wrong secret."""
    row = store.get_by_id(session, receiver_id)
    if not store.secret_matches(row.secret_hash if row is not None else None, secret):
        raise NotFound("receiver", receiver_id)
    assert row is not None  # secret_matches is False without a row
    return row


def owner_context(row: ReceiverRow) -> RequestContext:
    """Who the action runs as: the receiver's owner, scoped to its project.

    The newest microversion applies, so every parameter the actions endpoint knows
    (e.g. ``destroy_after_deletion``) works whatever the caller sends.
    """
    return RequestContext(row.user, row.project, (Role.MEMBER.value,), MAX_VERSION)


def _cluster(session: Session, row: ReceiverRow) -> ClusterRow:
    cluster = clusters.get(session, row.cluster_id) if row.cluster_id else None
    if cluster is None:
        raise InvalidRequest(
            f"The referenced cluster '{row.cluster_id}' could not be found.", field="cluster_id"
        )
    return cluster


def trigger(
    session: Session,
    services: Services,
    row: ReceiverRow,
    params: dict[str, object],
    *,
    origin: str = "Webhook",
) -> ActionRow:
    """Store the receiver's action on its cluster, with ``params`` over the receiver's own."""
    cluster = _cluster(session, row)
    _, spec = receiver_action(str(row.action))
    ctx = owner_context(row)
    merged = {**(row.params or {}), **params}
    action, inputs = HANDLERS[spec.key](session, services, ctx, cluster, merged)
    # A trigger is a request to act, not a call that may be refused: a busy cluster
    # queues it (Alertmanager treats a 409 as final and would not resend for minutes).
    try:
        check_fail_fast(session, action, cluster.id, services.dead_before())
        busy = ""
    except (ResourceLocked, ActionConflict) as conflict:
        busy = str(conflict)
    stored = submit(
        session,
        services,
        ctx,
        action,
        target=cluster.id,
        cluster_id=cluster.id,
        project=cluster.project,
        inputs=inputs,
        timeout=cluster.timeout,
        check=False,
    )
    stored.name = f"webhook_{row.id[:8]}"
    stored.data = {WAIT_FOR_LOCK: True}  # the engine waits for the lock instead of failing
    verb = "queued" if busy else "started"
    behind = " behind the action(s) holding it" if busy else ""
    _receiver_event(
        session,
        services,
        row,
        action="RECEIVER_TRIGGER",
        status="QUEUED" if busy else "SUCCEEDED",
        reason=(
            f"{origin} {verb} {action.value} on cluster {cluster.name}{behind}: action {stored.id}."
        ),
        meta={"action_id": stored.id, "params": params, **({"busy": busy} if busy else {})},
    )
    return stored


def _receiver_event(
    session: Session,
    services: Services,
    row: ReceiverRow,
    *,
    action: str,
    status: str,
    reason: str,
    meta: dict[str, object],
) -> None:
    """Record an event about the receiver ``row`` (on its cluster, as its owner)."""
    events.record(
        session,
        otype="RECEIVER",
        oid=row.id,
        oname=row.name,
        project=row.project,
        user=row.user,
        cluster_id=row.cluster_id,
        action=action,
        status=status,
        reason=reason,
        now=services.now(),
        meta=meta,
    )


def webhook_params(
    version: str | None, query: dict[str, str], body_params: dict[str, object] | None
) -> dict[str, object]:
    """The request's parameters: V=1 takes the query string too (as Senlin), V=2 the body.

    Raises:
        InvalidRequest: ``V`` is missing (Senlin's text).
    """
    if version is None:
        raise InvalidRequest("V query parameter is required in webhook trigger URL", field="V")
    params: dict[str, object] = {}
    if version == "1":
        params.update({k: v for k, v in query.items() if k not in ("V", "secret")})
    params.update(body_params or {})
    return params


def _notification(payload: AlertmanagerNotification) -> Notification:
    if payload.status is None:
        raise InvalidRequest("'status' is a required property", field="status")
    alerts = []
    for index, alert in enumerate(payload.alerts):
        if alert.status is None:
            raise InvalidRequest("'status' is a required property", field=f"alerts.{index}.status")
        alerts.append(
            Alert(AlertStatus(alert.status), alert.labels, alert.starts_at, alert.fingerprint)
        )
    return Notification(AlertStatus(payload.status), payload.group_key, tuple(alerts))


def alertmanager(
    session: Session, services: Services, row: ReceiverRow, payload: AlertmanagerNotification
) -> AlertOutcome:
    """Act on one Alertmanager notification: trigger once per new firing, never on resolved."""
    notification = _notification(payload)
    keys = firing_keys(notification)
    new = store.record_new_alerts(session, row.id, keys, services.now())
    decision = decide(notification, seen=set(keys) - set(new))
    if not decision.trigger:
        # Repeated and resolved notifications change nothing, but say they arrived.
        _receiver_event(
            session,
            services,
            row,
            action="RECEIVER_NOTIFICATION",
            status=notification.status.value.upper(),
            reason=f"Alertmanager notification (group {notification.group_key}): "
            + decision.reason,
            meta={"alerts": len(notification.alerts)},
        )
        return AlertOutcome(None, decision.reason)
    origin = f"Alertmanager notification ({decision.reason[:-1]}, group {notification.group_key})"
    action = trigger(session, services, row, {}, origin=origin)
    store.link_alerts(session, row.id, decision.new_keys, action.id)
    return AlertOutcome(action, decision.reason)
