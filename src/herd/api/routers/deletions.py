"""``/v1/deletions``: the tombstones of resources being deleted (admin only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.schemas.documented import any_case
from herd.api.services import deletions as service
from herd.api.services.common import location
from herd.domain.values import BOOL_TRUE

router = APIRouter(prefix="/v1/deletions", tags=["deletions"])


@router.get("")
def list_deletions(request: Request, services: ServicesDep, ctx: Context) -> dict[str, object]:
    with services.database.read() as session:
        params = dict(request.query_params)
        return {"deletions": service.list_deletions(session, services, ctx, params)}


#: ``force`` is read by the service (its absence is a 400 with herd's text), so the document
#: declares it: one of the words that read as true
FORCE_PARAMETER = {
    "name": "force",
    "in": "query",
    "required": True,
    "schema": {"type": "string", "pattern": any_case(BOOL_TRUE)},
    "description": "Must be true: a purge removes the tombstone of a deletion that did not end.",
}


@router.delete(
    "/{resource_type}/{resource_id}",
    status_code=202,
    openapi_extra={"parameters": [FORCE_PARAMETER]},
)
def purge_deletion(
    resource_type: Annotated[str, Path(json_schema_extra={"enum": list(service.ROW_TYPES)})],
    resource_id: str,
    request: Request,
    services: ServicesDep,
    ctx: Context,
) -> JSONResponse:
    """Purge a stuck deletion: 202 and a DELETION_PURGE action that does the cleaning."""
    force = request.query_params.get("force")
    with services.database.write() as session:
        view, action = service.purge(session, services, ctx, resource_type, resource_id, force)
    return JSONResponse({"deletion": view}, status_code=202, headers=location(action.id))
