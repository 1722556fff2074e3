"""``GET /v1/profile-types/<t>/ops`` lives in types.py; these run operations (1.4)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from herd.api.auth import Context
from herd.api.bodies import raw_body
from herd.api.deps import ServicesDep
from herd.api.schemas.operations import ClusterOperationRequest, NodeOperationRequest
from herd.api.services import operations as service
from herd.api.services.common import location

router = APIRouter(prefix="/v1", tags=["operations"])


@router.post("/nodes/{node_id}/ops", status_code=202)
def node_operation(
    node_id: str,
    services: ServicesDep,
    ctx: Context,
    body: Annotated[object, raw_body(NodeOperationRequest)],
) -> JSONResponse:
    """``{"<operation>": {<params>}}``; 202 ``{"action": id}`` + Location."""
    with services.database.write() as session:
        action = service.node_operation(session, services, ctx, node_id, body)
    return JSONResponse({"action": action.id}, status_code=202, headers=location(action.id))


@router.post(
    "/clusters/{cluster_id}/ops",
    status_code=202,
)
def cluster_operation(
    cluster_id: str,
    services: ServicesDep,
    ctx: Context,
    body: Annotated[object, raw_body(ClusterOperationRequest)],
) -> JSONResponse:
    """``{"<operation>": {"params": {...}, "filters": {...}}}``; 202 + Location."""
    with services.database.write() as session:
        action = service.cluster_operation(session, services, ctx, cluster_id, body)
    return JSONResponse({"action": action.id}, status_code=202, headers=location(action.id))
