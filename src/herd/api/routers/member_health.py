"""``PATCH /v1/clusters/<cluster>/nodes/<node>``: an application marks a member (un)healthy."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request, Response

from herd.api.auth import user_context
from herd.api.bodies import raw_body
from herd.api.deps import Services
from herd.api.json_body import dumps
from herd.api.openapi import answers
from herd.api.schemas.base import parse_body
from herd.api.schemas.member_health import MarkUnhealthy
from herd.api.services.member_health import Mark, MarkResult, committer
from herd.api.view_models import MarkAnswer
from herd.api.views import node_view_from_values

router = APIRouter(prefix="/v1/clusters", tags=["member health"])


@router.patch("/{cluster_id}/nodes/{node_id}", responses=answers(None, MarkAnswer))
async def mark_unhealthy(
    cluster_id: str,
    node_id: str,
    request: Request,
    body: Annotated[object, raw_body(MarkUnhealthy)],
) -> Response:
    """Heat's mark-unhealthy call, answered with the member instead of ``null``.

    The write joins the next group commit (``herd.api.services.group_commit``); the
    answer is built and encoded after the transaction, outside it.
    """
    services: Services = request.app.state.herd
    ctx = await user_context(request)
    parsed = parse_body(MarkUnhealthy, body)
    result = await committer(services).submit(Mark(ctx, cluster_id, node_id, parsed))
    if not isinstance(result, MarkResult):  # mark_members answers each mark with one
        raise TypeError(f"a mark was answered with {result!r}")
    if parsed.mark_unhealthy and result.changed:
        services.metrics.health_detected("application")
    view = node_view_from_values(result.values, ctx.version)
    answer: MarkAnswer = {"node": view, "changed": result.changed, "message": result.message}
    return Response(dumps(answer), media_type="application/json")
