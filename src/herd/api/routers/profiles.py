"""``/v1/profiles``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Request, Response
from sqlalchemy import select

from herd.api import pagination
from herd.api.auth import Context, ReaderContext
from herd.api.deps import ServicesDep
from herd.api.microversion import require
from herd.api.schemas.base import openapi_body, parse_body
from herd.api.schemas.specs import ProfileCreate, ProfileUpdate, SpecValidate
from herd.api.services import deletions
from herd.api.services import profiles as service
from herd.api.views import profile_view
from herd.store.lookup import find
from herd.store.models import ProfileRow

router = APIRouter(prefix="/v1/profiles", tags=["profiles"])

LIST_SPEC = pagination.ListSpec(
    model=ProfileRow,
    sort_keys={
        "type": ProfileRow.type,
        "name": ProfileRow.name,
        "created_at": ProfileRow.created_at,
        "updated_at": ProfileRow.updated_at,
    },
    default_sort=("created_at",),
    filters={"name": ProfileRow.name, "type": ProfileRow.type},
)


@router.get("", openapi_extra=pagination.openapi_parameters(LIST_SPEC))
def list_profiles(request: Request, services: ServicesDep, ctx: ReaderContext) -> dict[str, Any]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    with services.database.read() as session:
        rows = pagination.apply(
            session,
            select(ProfileRow).where(*deletions.agent_filter(ctx, "profile")),
            LIST_SPEC,
            params,
            scope,
        )
        return {"profiles": [profile_view(row) for row in rows]}


@router.post("", status_code=201, openapi_extra=openapi_body(ProfileCreate, envelope="profile"))
def create_profile(services: ServicesDep, ctx: Context, body: Any = Body(None)) -> dict[str, Any]:
    request = parse_body(ProfileCreate, body, envelope="profile")
    with services.database.write() as session:
        row = service.create_profile(session, services, ctx, request)
        session.flush()
        return {"profile": profile_view(row)}


@router.post("/validate", openapi_extra=openapi_body(SpecValidate, envelope="profile"))
def validate_profile(services: ServicesDep, ctx: Context, body: Any = Body(None)) -> dict[str, Any]:
    require(ctx.version, "1.2")
    request = parse_body(SpecValidate, body, envelope="profile")
    return {"profile": profile_view(service.validate_profile(services, ctx, request))}


@router.get("/{profile_id}")
def get_profile(profile_id: str, services: ServicesDep, ctx: ReaderContext) -> dict[str, Any]:
    with services.database.read() as session:
        row = find(session, ProfileRow, profile_id, ctx.scope(), "profile")
        deletions.hide_from_agent(session, ctx, "profile", row)
        return {"profile": profile_view(row)}


@router.patch("/{profile_id}", openapi_extra=openapi_body(ProfileUpdate, envelope="profile"))
def update_profile(
    profile_id: str, services: ServicesDep, ctx: Context, body: Any = Body(None)
) -> dict[str, Any]:
    request = parse_body(ProfileUpdate, body, envelope="profile")
    with services.database.write() as session:
        row = service.update_profile(session, services, ctx, profile_id, request)
        session.flush()
        return {"profile": profile_view(row)}


@router.delete("/{profile_id}", status_code=204)
def delete_profile(profile_id: str, services: ServicesDep, ctx: Context) -> Response:
    with services.database.write() as session:
        service.delete_profile(session, services, ctx, profile_id)
    return Response(status_code=204)
