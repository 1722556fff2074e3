"""``POST /v1/nodes/adopt-preview`` and ``POST /v1/nodes/adopt`` (1.7)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from herd.api.auth import Context
from herd.api.bodies import json_body
from herd.api.deps import ServicesDep
from herd.api.openapi import answers
from herd.api.schemas.nodes import NodeAdopt, NodeAdoptPreview
from herd.api.services import adopt as service
from herd.api.view_models import NodeView
from herd.api.views import render_nodes

router = APIRouter(prefix="/v1/nodes", tags=["nodes"])


@router.post("/adopt-preview")
def adopt_preview(
    services: ServicesDep,
    ctx: Context,
    request: Annotated[NodeAdoptPreview, json_body(NodeAdoptPreview, since="1.7")],
) -> dict[str, object]:
    """Senlin answers ``{"node_profile": {"node_preview": spec}}`` (its api-ref omits the
    outer key; python-senlinclient reads it)."""
    return {"node_profile": service.adopt_preview(services, ctx, request)}


@router.post("/adopt", responses=answers("node", NodeView))
def adopt(
    services: ServicesDep,
    ctx: Context,
    request: Annotated[NodeAdopt, json_body(NodeAdopt, since="1.7")],
) -> dict[str, object]:
    with services.database.write() as session:
        node = service.adopt_node(session, services, ctx, request)
        session.flush()
        return {"node": render_nodes(session, [node], ctx.version)[0]}
