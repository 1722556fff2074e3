"""``/v1/events``: list and show."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import select

from herd.api import pagination
from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.views import event_view
from herd.errors import NotFound
from herd.store.lookup import Scope
from herd.store.models import EventRow

router = APIRouter(prefix="/v1/events", tags=["events"])

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
    },
)


@router.get("", openapi_extra=pagination.openapi_parameters(LIST_SPEC))
def list_events(request: Request, services: ServicesDep, ctx: Context) -> dict[str, Any]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    with services.database.read() as session:
        rows = pagination.apply(session, select(EventRow), LIST_SPEC, params, scope)
        return {"events": [event_view(row) for row in rows]}


def _find_event(session: Any, identity: str, scope: Scope) -> EventRow:
    # Events have no name: find by full id or by a unique id prefix.
    query = select(EventRow).where(EventRow.id.startswith(identity, autoescape=True))
    rows = session.scalars(scope.apply(query, EventRow).limit(2)).all()
    if len(rows) == 1:
        return rows[0]  # type: ignore[no-any-return]
    exact = [row for row in rows if row.id == identity]
    if exact:
        return exact[0]  # type: ignore[no-any-return]
    if len(rows) > 1:
        from herd.errors import MultipleChoices

        raise MultipleChoices(
            f"Multiple results found matching the query criteria '{identity}'. "
            "Please be more specific."
        )
    raise NotFound("event", identity)


@router.get("/{event_id}")
def get_event(event_id: str, services: ServicesDep, ctx: Context) -> dict[str, Any]:
    with services.database.read() as session:
        return {"event": event_view(_find_event(session, event_id, ctx.scope()))}
