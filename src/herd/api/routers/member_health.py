"""``PATCH /v1/clusters/<cluster>/nodes/<node>``: an application marks a member (un)healthy."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body

from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.schemas.base import openapi_body, parse_body
from herd.api.schemas.member_health import MarkUnhealthy
from herd.api.services.member_health import mark_member
from herd.api.views import render_nodes

router = APIRouter(prefix="/v1/clusters", tags=["member health"])


@router.patch("/{cluster_id}/nodes/{node_id}", openapi_extra=openapi_body(MarkUnhealthy))
def mark_unhealthy(
    cluster_id: str, node_id: str, services: ServicesDep, ctx: Context, body: Any = Body(None)
) -> dict[str, Any]:
    """Heat's mark-unhealthy call, answered with the member instead of ``null``."""
    request = parse_body(MarkUnhealthy, body)
    with services.database.write() as session:
        result = mark_member(session, services, ctx, cluster_id, node_id, request)
        session.flush()
        view = render_nodes(session, [result.node], ctx.version)[0]
    if request.mark_unhealthy and result.changed:
        services.metrics.health_detected("application")
    return {"node": view, "changed": result.changed, "message": result.message}
