"""``GET /v1/services``: the engines and API processes sharing this database (admin only)."""

from __future__ import annotations

from fastapi import APIRouter

from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.views import isotime
from herd.errors import Forbidden
from herd.store import services as service_store

router = APIRouter(prefix="/v1", tags=["services"])


@router.get("/services")
def list_services(services: ServicesDep, ctx: Context) -> dict[str, object]:
    """Senlin's service list; ``state`` is ``up`` while the heartbeat is fresh."""
    if not ctx.is_admin:
        raise Forbidden("You are not authorized to complete this operation.")
    dead_before = services.dead_before()
    with services.database.read() as session:
        records = service_store.all_services(session)
    return {
        "services": [
            {
                "id": record.id,
                "host": record.host,
                "binary": record.binary,
                "topic": record.binary,
                "status": "enabled",
                "disabled_reason": None,
                "state": "up" if record.heartbeat_at >= dead_before else "down",
                "updated_at": isotime(record.heartbeat_at),
            }
            for record in records
        ]
    }
