"""``POST /v1/clusters/<id>/actions``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from herd.api.auth import Context
from herd.api.bodies import raw_body
from herd.api.deps import ServicesDep
from herd.api.schemas.cluster_actions import ClusterActionRequest
from herd.api.services.common import location
from herd.api.services.dispatch import cluster_action

router = APIRouter(prefix="/v1/clusters", tags=["clusters"])


@router.post(
    "/{cluster_id}/actions",
    status_code=202,
    responses={200: {"description": "A synchronous action (preview, lifecycle completion)."}},
)
def post_cluster_action(
    cluster_id: str,
    services: ServicesDep,
    ctx: Context,
    body: Annotated[object, raw_body(ClusterActionRequest)],
) -> JSONResponse:
    with services.database.write() as session:
        outcome = cluster_action(session, services, ctx, cluster_id, body)
    if isinstance(outcome, dict):
        if "action" not in outcome or "victims" in outcome or "deadline" in outcome:
            return JSONResponse(outcome, status_code=200)
        return JSONResponse(outcome, status_code=202, headers=location(str(outcome["action"])))
    return JSONResponse({"action": outcome.id}, status_code=202, headers=location(outcome.id))
