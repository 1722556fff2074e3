"""``/v1/events``: list and show."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request

from herd.api import pagination
from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.filters import CLUSTERS, resolve_filters
from herd.api.openapi import answers
from herd.api.view_models import EventView
from herd.api.views import event_view
from herd.store.listing import select_rows
from herd.store.lookup import find_event
from herd.store.models import EventRow

router = APIRouter(prefix="/v1/events", tags=["events"])

ACTION_NAME = re.compile(r"[A-Z][A-Z0-9_]*")

LIST_SPEC = pagination.ListSpec(
    model=EventRow,
    sort_keys={
        "timestamp": EventRow.timestamp,
        "level": EventRow.level,
        "otype": EventRow.otype,
        "oname": EventRow.oname,
        "action": EventRow.action,
        "status": EventRow.status,
        "oid": EventRow.oid,
        "cluster_id": EventRow.cluster_id,
    },
    default_sort=("timestamp",),
    filters={
        "oid": EventRow.oid,
        "oname": EventRow.oname,
        "otype": EventRow.otype,
        "cluster_id": EventRow.cluster_id,
        "action": EventRow.action,
        "level": EventRow.level,
        # herd's addition: what one API request caused (docs/api.md)
        "request_id": EventRow.request_id,
    },
    valid={
        # Senlin's level names; an action is an action's name (CLUSTER_SCALE_OUT, ...)
        "level": pagination.one_of(("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")),
        "action": pagination.Matches(ACTION_NAME),
    },
)


@router.get(
    "",
    responses=answers("events", EventView, many=True),
    openapi_extra=pagination.openapi_parameters(LIST_SPEC),
)
def list_events(request: Request, services: ServicesDep, ctx: Context) -> dict[str, object]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    with services.database.read() as session:
        resolve_filters(session, params, scope, {"cluster_id": CLUSTERS})
        rows = pagination.apply(session, select_rows(EventRow), LIST_SPEC, params, scope)
        return {"events": [event_view(row) for row in rows]}


@router.get("/{event_id}", responses=answers("event", EventView))
def get_event(event_id: str, services: ServicesDep, ctx: Context) -> dict[str, object]:
    with services.database.read() as session:
        return {"event": event_view(find_event(session, event_id, ctx.scope()))}
