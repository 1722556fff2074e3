"""``GET /v1/clusters/<id>/size-history`` (herd's addition): the cluster's stored size over time.

Each point is a committed change of the member count or of the desired capacity
(store/size_history.py), oldest first; the dashboard's size chart draws it.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from herd.api import pagination
from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.views import isotime
from herd.errors import InvalidRequest
from herd.store import size_history
from herd.store.lookup import find
from herd.store.models import ClusterRow

router = APIRouter(prefix="/v1/clusters", tags=["clusters"])

ALLOWED = frozenset({"limit"})


def _limit(request: Request) -> int:
    for key in request.query_params:
        if key not in ALLOWED:
            raise InvalidRequest(f"Invalid parameter {key}", field=key)
    raw = request.query_params.get("limit")
    if raw is None:
        return size_history.MAX_POINTS
    try:
        limit = int(raw)
    except ValueError:
        raise InvalidRequest(
            f"The value for limit must be an integer: '{raw}'.", field="limit"
        ) from None
    if not 1 <= limit <= size_history.MAX_POINTS:
        raise pagination.invalid_value("limit", raw)
    return limit


@router.get("/{cluster_id}/size-history")
def get_size_history(
    cluster_id: str, request: Request, services: ServicesDep, ctx: Context
) -> dict[str, object]:
    """The newest ``limit`` (default and at most 10,000) size points, oldest first."""
    limit = _limit(request)
    with services.database.read() as session:
        row = find(session, ClusterRow, cluster_id, ctx.scope(), "cluster")
        points = size_history.history(session, row.id, limit=limit)
        return {
            "size_history": [
                {"at": isotime(at), "members": members, "desired_capacity": desired}
                for at, members, desired in points
            ]
        }
