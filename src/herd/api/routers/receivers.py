"""``/v1/receivers``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request, Response

from herd.api import pagination
from herd.api.auth import Context
from herd.api.bodies import json_body
from herd.api.deps import Services, ServicesDep
from herd.api.filters import CLUSTERS, resolve_filters
from herd.api.openapi import answers
from herd.api.schemas.receivers import ReceiverCreate, ReceiverUpdate
from herd.api.services import receivers as service
from herd.api.view_models import ReceiverView
from herd.api.views import receiver_view
from herd.store import receivers as store
from herd.store.models import ReceiverRow

router = APIRouter(prefix="/v1/receivers", tags=["receivers"])

LIST_SPEC = pagination.ListSpec(
    model=ReceiverRow,
    sort_keys={
        "name": ReceiverRow.name,
        "type": ReceiverRow.type,
        "action": ReceiverRow.action,
        "cluster_id": ReceiverRow.cluster_id,
        "created_at": ReceiverRow.created_at,
        "user": ReceiverRow.user,
    },
    default_sort=("created_at",),
    filters={
        "name": ReceiverRow.name,
        "type": ReceiverRow.type,
        "cluster_id": ReceiverRow.cluster_id,
        "action": ReceiverRow.action,
        "user": ReceiverRow.user,
    },
)


def _shown(row: ReceiverRow, services: Services) -> ReceiverView:
    return receiver_view(row, service.channel(row, services.webhook_key))


def base_url(request: Request, services: Services) -> str:
    """Where the receiver's URLs point: the configured base, else where this request came."""
    return services.settings.webhook_base_url or str(request.base_url)


@router.get("", responses=answers("receivers", ReceiverView, many=True))
def list_receivers(request: Request, services: ServicesDep, ctx: Context) -> dict[str, object]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    with services.database.read() as session:
        resolve_filters(session, params, scope, {"cluster_id": CLUSTERS})
        rows = pagination.apply(session, store.select_receivers(), LIST_SPEC, params, scope)
        return {"receivers": [_shown(row, services) for row in rows]}


@router.post("", status_code=201, responses=answers("receiver", ReceiverView, status=201))
def create_receiver(
    request: Request,
    services: ServicesDep,
    ctx: Context,
    parsed: Annotated[
        ReceiverCreate, json_body(ReceiverCreate, envelope="receiver", request_object=True)
    ],
) -> dict[str, object]:
    with services.database.write() as session:
        row = service.create_receiver(session, services, ctx, parsed, base_url(request, services))
        session.flush()
        return {"receiver": _shown(row, services)}


@router.get("/{receiver_id}", responses=answers("receiver", ReceiverView))
def get_receiver(receiver_id: str, services: ServicesDep, ctx: Context) -> dict[str, object]:
    with services.database.read() as session:
        return {"receiver": _shown(service.find_receiver(session, ctx, receiver_id), services)}


@router.patch("/{receiver_id}", responses=answers("receiver", ReceiverView))
def update_receiver(
    receiver_id: str,
    request: Request,
    services: ServicesDep,
    ctx: Context,
    parsed: Annotated[ReceiverUpdate, json_body(ReceiverUpdate, envelope="receiver", since="1.7")],
) -> dict[str, object]:
    with services.database.write() as session:
        row = service.update_receiver(
            session, services, ctx, receiver_id, parsed, base_url(request, services)
        )
        session.flush()
        return {"receiver": _shown(row, services)}


@router.delete("/{receiver_id}", status_code=204)
def delete_receiver(receiver_id: str, services: ServicesDep, ctx: Context) -> Response:
    with services.database.write() as session:
        service.delete_receiver(session, services, ctx, receiver_id)
    return Response(status_code=204)
