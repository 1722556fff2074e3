"""``/v1/policies``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Request, Response
from sqlalchemy import select

from herd.api import pagination
from herd.api.auth import Context, ReaderContext
from herd.api.deps import ServicesDep
from herd.api.microversion import require
from herd.api.schemas.base import openapi_body, parse_body
from herd.api.schemas.specs import PolicyCreate, PolicyUpdate, SpecValidate
from herd.api.services import deletions
from herd.api.services import policies as service
from herd.api.views import policy_view
from herd.store.lookup import find
from herd.store.models import PolicyRow

router = APIRouter(prefix="/v1/policies", tags=["policies"])

LIST_SPEC = pagination.ListSpec(
    model=PolicyRow,
    sort_keys={
        "type": PolicyRow.type,
        "name": PolicyRow.name,
        "created_at": PolicyRow.created_at,
        "updated_at": PolicyRow.updated_at,
    },
    default_sort=("created_at",),
    filters={"name": PolicyRow.name, "type": PolicyRow.type},
)


@router.get("", openapi_extra=pagination.openapi_parameters(LIST_SPEC))
def list_policies(request: Request, services: ServicesDep, ctx: ReaderContext) -> dict[str, Any]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    with services.database.read() as session:
        rows = pagination.apply(
            session,
            select(PolicyRow).where(*deletions.agent_filter(ctx, "policy")),
            LIST_SPEC,
            params,
            scope,
        )
        return {"policies": [policy_view(row) for row in rows]}


@router.post("", status_code=201, openapi_extra=openapi_body(PolicyCreate, envelope="policy"))
def create_policy(services: ServicesDep, ctx: Context, body: Any = Body(None)) -> dict[str, Any]:
    request = parse_body(PolicyCreate, body, envelope="policy")
    with services.database.write() as session:
        row = service.create_policy(session, services, ctx, request)
        session.flush()
        return {"policy": policy_view(row)}


@router.post("/validate", openapi_extra=openapi_body(SpecValidate, envelope="policy"))
def validate_policy(services: ServicesDep, ctx: Context, body: Any = Body(None)) -> dict[str, Any]:
    require(ctx.version, "1.2")
    request = parse_body(SpecValidate, body, envelope="policy")
    return {"policy": policy_view(service.validate_policy(services, ctx, request))}


@router.get("/{policy_id}")
def get_policy(policy_id: str, services: ServicesDep, ctx: ReaderContext) -> dict[str, Any]:
    with services.database.read() as session:
        row = find(session, PolicyRow, policy_id, ctx.scope(), "policy")
        deletions.hide_from_agent(session, ctx, "policy", row)
        return {"policy": policy_view(row)}


@router.patch("/{policy_id}", openapi_extra=openapi_body(PolicyUpdate, envelope="policy"))
def update_policy(
    policy_id: str, services: ServicesDep, ctx: Context, body: Any = Body(None)
) -> dict[str, Any]:
    request = parse_body(PolicyUpdate, body, envelope="policy")
    with services.database.write() as session:
        row = service.update_policy(session, services, ctx, policy_id, request)
        session.flush()
        return {"policy": policy_view(row)}


@router.delete("/{policy_id}", status_code=204)
def delete_policy(policy_id: str, services: ServicesDep, ctx: Context) -> Response:
    with services.database.write() as session:
        service.delete_policy(session, services, ctx, policy_id)
    return Response(status_code=204)
