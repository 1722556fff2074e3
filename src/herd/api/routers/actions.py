"""``/v1/actions``: list, show and cancel."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request, Response

from herd.api import pagination
from herd.api.auth import Context
from herd.api.bodies import json_body
from herd.api.deps import ServicesDep
from herd.api.filters import CLUSTERS, CLUSTERS_AND_NODES, resolve_filters
from herd.api.openapi import ACCEPTED_WITHOUT_BODY, answers
from herd.api.schemas.actions import ActionUpdate
from herd.api.services.actions import cancel_action
from herd.api.services.common import location
from herd.api.view_models import ActionView
from herd.api.views import render_actions
from herd.store.listing import select_rows
from herd.store.lookup import find
from herd.store.models import ActionRow
from herd.types import ActionStatus

router = APIRouter(prefix="/v1/actions", tags=["actions"])

LIST_SPEC = pagination.ListSpec(
    model=ActionRow,
    sort_keys={
        "name": ActionRow.name,
        "target": ActionRow.target,
        "action": ActionRow.action,
        "created_at": ActionRow.created_at,
        "status": ActionRow.status,
    },
    default_sort=("created_at",),
    filters={
        "name": ActionRow.name,
        "target": ActionRow.target,
        "action": ActionRow.action,
        "status": ActionRow.status,
        "cluster_id": ActionRow.cluster_id,
        # herd's addition: what one API request caused (docs/api.md)
        "request_id": ActionRow.request_id,
    },
    valid={"status": pagination.one_of(ActionStatus)},
    extra=frozenset({"summary"}),
)


def _summary(request: Request) -> bool:
    """herd's ``summary=true``: long id lists cut to their first few (docs/api.md)."""
    value = request.query_params.get("summary")
    return value is not None and pagination.parse_bool("summary", value)


@router.get(
    "",
    responses=answers("actions", ActionView, many=True),
    openapi_extra=pagination.openapi_parameters(LIST_SPEC),
)
def list_actions(request: Request, services: ServicesDep, ctx: Context) -> dict[str, object]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    with services.database.read() as session:
        resolve_filters(
            session, params, scope, {"cluster_id": CLUSTERS, "target": CLUSTERS_AND_NODES}
        )
        rows = pagination.apply(session, select_rows(ActionRow), LIST_SPEC, params, scope)
        views = render_actions(session, rows, ctx.version, summary=_summary(request))
        return {"actions": views}


SUMMARY_PARAMETER = {
    "name": "summary",
    "in": "query",
    "required": False,
    "schema": {"type": "boolean"},
    "description": "Long id lists cut to their first few (see docs/api.md).",
}


@router.get(
    "/{action_id}",
    responses=answers("action", ActionView),
    openapi_extra={"parameters": [SUMMARY_PARAMETER]},
)
def get_action(
    action_id: str, request: Request, services: ServicesDep, ctx: Context
) -> dict[str, object]:
    summary = _summary(request)
    with services.database.read() as session:
        row = find(session, ActionRow, action_id, ctx.scope(), "action")
        return {"action": render_actions(session, [row], ctx.version, summary=summary)[0]}


@router.patch(
    "/{action_id}",
    status_code=202,
    response_class=Response,
    responses=ACCEPTED_WITHOUT_BODY,
)
def update_action(
    action_id: str,
    request: Request,
    services: ServicesDep,
    ctx: Context,
    update: Annotated[ActionUpdate, json_body(ActionUpdate, envelope="action", since="1.12")],
) -> Response:
    raw_force = request.query_params.get("force")
    force = raw_force is not None and pagination.parse_bool("force", raw_force)
    with services.database.write() as session:
        row = cancel_action(session, services, ctx, action_id, update, force)
    return Response(status_code=202, headers=location(row.id))
