"""Action update (``PATCH /v1/actions/<id>``, 1.12): cancel, or force-cancel, as Senlin.

Senlin's ``signal_cancel``: only an unfinished action (INIT, WAITING, READY,
RUNNING, WAITING_LIFECYCLE_COMPLETION) can be cancelled, anything else is 409
``ActionImmutable``; the action and its children are signalled, and those that
are not running (INIT, WAITING_LIFECYCLE_COMPLETION, and in herd also a READY or
WAITING action no engine has claimed) end CANCELLED at once. ``force=true`` is
Senlin's ``force_cancel``: the action and its unfinished children end CANCELLED
now and their locks are released.
"""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.actions import ActionUpdate
from herd.errors import ActionImmutable, InvalidRequest
from herd.store import actions as action_store
from herd.store.database import Session
from herd.store.events import record
from herd.store.locks import release_all
from herd.store.lookup import find
from herd.store.models import ActionRow
from herd.types import ActionControl, ActionStatus

CANCELLABLE = (
    ActionStatus.INIT,
    ActionStatus.WAITING,
    ActionStatus.READY,
    ActionStatus.RUNNING,
    ActionStatus.WAITING_LIFECYCLE_COMPLETION,
)
#: not running anywhere, so nobody else will end them
IDLE_UNOWNED = (
    ActionStatus.INIT,
    ActionStatus.READY,
    ActionStatus.WAITING,
    ActionStatus.WAITING_LIFECYCLE_COMPLETION,
)
CANCELLED_REASON = "Action execution cancelled"
FORCE_CANCELLED_REASON = "Action execution force cancelled"


def _immutable(row: ActionRow) -> ActionImmutable:
    # Senlin formatted the tuple itself ("one of (('INIT', ...))"); herd lists the names.
    expected = ", ".join(status.value for status in CANCELLABLE)
    return ActionImmutable(
        f"Action ({row.id[:8]}) is in status ({row.status}) while expected status must be "
        f"one of ({expected})."
    )


def _end(
    session: Session, services: Services, ctx: RequestContext, row: ActionRow, reason: str
) -> None:
    now = services.now()
    row.status = ActionStatus.CANCELLED
    row.status_reason = reason
    row.end_time = now
    row.updated_at = now
    row.owner = None
    record(
        session,
        otype="ACTION",
        oid=row.id,
        oname=row.name,
        project=row.project,
        user=ctx.user,
        action=row.action,
        status=ActionStatus.CANCELLED,
        reason=reason,
        now=now,
        cluster_id=row.cluster_id,
    )


def _cancel(
    session: Session, services: Services, ctx: RequestContext, row: ActionRow, force: bool
) -> None:
    row.updated_at = services.now()
    status = ActionStatus(row.status)
    if force:
        row.control = ActionControl.CANCEL
        _end(session, services, ctx, row, FORCE_CANCELLED_REASON)
        release_all(session, row.id)
    elif status in (ActionStatus.INIT, ActionStatus.WAITING_LIFECYCLE_COMPLETION) or (
        status in IDLE_UNOWNED and row.owner is None
    ):
        row.control = ActionControl.CANCEL
        _end(session, services, ctx, row, CANCELLED_REASON)
        # Its locks end with it: a child waiting for its lifecycle hook holds its node's
        # (the cancel matrix found that row left behind after its parent ended).
        release_all(session, row.id)
    elif row.control is None:
        # A running action is asked to stop; one a forced delete robbed keeps that mark,
        # so its runner still ends it with the forced delete's reason.
        row.control = ActionControl.CANCEL


def cancel_action(
    session: Session,
    services: Services,
    ctx: RequestContext,
    identity: str,
    request: ActionUpdate,
    force: bool,
) -> ActionRow:
    """Cancel an action and its children; 409 when it has already ended."""
    if request.status != ActionStatus.CANCELLED:
        raise InvalidRequest(
            f"Unknown status {request.status} for action {identity}", field="status"
        )
    row = find(session, ActionRow, identity, ctx.scope(), "action")
    if ActionStatus(row.status) not in CANCELLABLE:
        raise _immutable(row)
    _cancel(session, services, ctx, row, force)
    for child in action_store.children(session, row.id):
        if ActionStatus(child.status) in CANCELLABLE:
            _cancel(session, services, ctx, child, force)
    return row
