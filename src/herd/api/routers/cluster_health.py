"""``GET /v1/clusters/<id>/health`` (herd's addition): the health manager's view of a cluster."""

from __future__ import annotations

from fastapi import APIRouter, Request

from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.services.cluster_health import cluster_health
from herd.errors import InvalidRequest

router = APIRouter(prefix="/v1/clusters", tags=["cluster health"])


@router.get("/{cluster_id}/health")
def get_cluster_health(
    cluster_id: str, request: Request, services: ServicesDep, ctx: Context
) -> dict[str, object]:
    """Last check per member, failures, recoveries and back-off; the lease holder.

    ``?member=<node id>`` (the dashboard's node page): that member only.
    """
    for key in request.query_params:
        if key != "member":
            raise InvalidRequest(f"Invalid parameter {key}", field=key)
    member = request.query_params.get("member")
    with services.database.read() as session:
        return cluster_health(session, services, ctx, cluster_id, member)
