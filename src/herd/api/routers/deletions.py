"""``/v1/deletions``: the tombstones of resources being deleted (admin only)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.services import deletions as service
from herd.api.services.common import location

router = APIRouter(prefix="/v1/deletions", tags=["deletions"])


@router.get("")
def list_deletions(request: Request, services: ServicesDep, ctx: Context) -> dict[str, object]:
    with services.database.read() as session:
        params = dict(request.query_params)
        return {"deletions": service.list_deletions(session, services, ctx, params)}


@router.delete("/{resource_type}/{resource_id}", status_code=202)
def purge_deletion(
    resource_type: str, resource_id: str, request: Request, services: ServicesDep, ctx: Context
) -> JSONResponse:
    """Purge a stuck deletion: 202 and a DELETION_PURGE action that does the cleaning."""
    force = request.query_params.get("force")
    with services.database.write() as session:
        view, action = service.purge(session, services, ctx, resource_type, resource_id, force)
    return JSONResponse({"deletion": view}, status_code=202, headers=location(action.id))
