"""``POST /v1/clusters/<id>/actions``: one key per request, stored or answered at once."""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.services.cluster_actions import BODY_CHECKS, HANDLERS
from herd.api.services.common import single_action, submit
from herd.api.services.lifecycle import LIFECYCLE_CALLS
from herd.api.services.preview import PREVIEWS, PreviewCall
from herd.store.database import Session
from herd.store.lookup import find
from herd.store.models import ActionRow, ClusterRow

#: keys answered in the request itself (200), without an action
SYNCHRONOUS: dict[str, PreviewCall] = {**LIFECYCLE_CALLS, **PREVIEWS}


def cluster_action(
    session: Session, services: Services, ctx: RequestContext, identity: str, body: object
) -> ActionRow | dict[str, object]:
    """Store the requested action, or answer a synchronous one (its body is returned)."""
    name, params = single_action(body, {**HANDLERS, **SYNCHRONOUS})
    check = BODY_CHECKS.get(name)
    if check is not None:
        check(services, ctx, params)
    cluster = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    if name in SYNCHRONOUS:
        result: dict[str, object] = SYNCHRONOUS[name](session, services, ctx, cluster, params)
        return result
    action, inputs = HANDLERS[name](session, services, ctx, cluster, params)
    return submit(
        session,
        services,
        ctx,
        action,
        target=cluster.id,
        cluster_id=cluster.id,
        project=cluster.project,
        inputs=inputs,
        timeout=cluster.timeout,
    )
