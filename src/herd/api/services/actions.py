"""Action cancel (``PATCH /v1/actions/<id>``, 1.12)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.actions import ActionUpdate
from herd.errors import InvalidRequest
from herd.store.events import record
from herd.store.locks import release_all
from herd.store.lookup import find
from herd.store.models import ActionRow
from herd.types import ActionStatus

CANCEL = "CANCEL"
CANCELLABLE_UNOWNED = (
    ActionStatus.INIT,
    ActionStatus.READY,
    ActionStatus.WAITING,
    ActionStatus.WAITING_LIFECYCLE_COMPLETION,
)
CANCELLED_REASON = "Action execution cancelled"


def cancel_action(
    session: Session,
    services: Services,
    ctx: RequestContext,
    identity: str,
    request: ActionUpdate,
    force: bool,
) -> ActionRow:
    row = find(session, ActionRow, identity, ctx.scope(), "action")
    status = request.status
    if status != ActionStatus.CANCELLED.value:
        raise InvalidRequest(f"Unknown status {status} for action {identity}", field="status")
    current = ActionStatus(row.status)
    if current.is_final:
        # Senlin ignores a cancel of an action that has ended.
        return row
    now = services.now()
    row.control = CANCEL
    row.updated_at = now
    if force or (current in CANCELLABLE_UNOWNED and row.owner is None):
        row.status = ActionStatus.CANCELLED.value
        row.status_reason = CANCELLED_REASON
        row.end_time = now
        if force:
            release_all(session, row.id)
        record(
            session,
            otype="ACTION",
            oid=row.id,
            oname=row.name,
            project=row.project,
            user=ctx.user,
            action=row.action,
            status=ActionStatus.CANCELLED.value,
            reason=CANCELLED_REASON,
            now=now,
            cluster_id=row.cluster_id,
        )
    return row
