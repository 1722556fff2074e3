"""``POST /v1/nodes/adopt-preview`` and ``POST /v1/nodes/adopt`` (1.7)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body

from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.microversion import require
from herd.api.schemas.base import openapi_body, parse_body
from herd.api.schemas.nodes import NodeAdopt, NodeAdoptPreview
from herd.api.services import adopt as service
from herd.api.views import render_nodes

router = APIRouter(prefix="/v1/nodes", tags=["nodes"])


@router.post("/adopt-preview", openapi_extra=openapi_body(NodeAdoptPreview))
def adopt_preview(services: ServicesDep, ctx: Context, body: Any = Body(None)) -> dict[str, Any]:
    """Senlin answers ``{"node_profile": {"node_preview": spec}}`` (its api-ref omits the
    outer key; python-senlinclient reads it)."""
    require(ctx.version, "1.7")
    request = parse_body(NodeAdoptPreview, body)
    return {"node_profile": service.adopt_preview(services, ctx, request)}


@router.post("/adopt", openapi_extra=openapi_body(NodeAdopt))
def adopt(services: ServicesDep, ctx: Context, body: Any = Body(None)) -> dict[str, Any]:
    require(ctx.version, "1.7")
    request = parse_body(NodeAdopt, body)
    with services.database.write() as session:
        node = service.adopt_node(session, services, ctx, request)
        session.flush()
        return {"node": render_nodes(session, [node], ctx.version)[0]}
