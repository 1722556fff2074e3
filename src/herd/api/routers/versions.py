"""``GET /``, ``GET /v1`` and ``GET /v1/build-info``, as Senlin answers them."""

from __future__ import annotations

from fastapi import APIRouter, Request

from herd.api.auth import Context
from herd.api.build_info import git_revision, herd_version, revision
from herd.api.deps import ServicesDep
from herd.api.microversion import MAX_VERSION, MIN_VERSION
from herd.store import services as service_store

router = APIRouter(tags=["versions"])


def version_info(request: Request) -> dict[str, object]:
    base = str(request.base_url).rstrip("/")
    return {
        "id": "1.0",
        "status": "CURRENT",
        "updated": "2016-01-18T00:00:00Z",
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.clustering-v1+json"}
        ],
        "links": [{"href": f"{base}/v1/", "rel": "self"}],
        "min_version": str(MIN_VERSION),
        "max_version": str(MAX_VERSION),
    }


@router.get("/", status_code=300)
def versions(request: Request) -> dict[str, object]:
    return {"versions": [version_info(request)]}


@router.get("/v1")
@router.get("/v1/")
def version(request: Request) -> dict[str, object]:
    return {"version": version_info(request)}


@router.get("/v1/build-info")
def get_build_info(services: ServicesDep, ctx: Context) -> dict[str, object]:
    """The installed herd's version and git revision; engines run the same installed code."""
    dead_before = services.dead_before()
    with services.database.read() as session:
        engines = [
            record
            for record in service_store.all_services(session)
            if record.binary == service_store.ENGINE_BINARY and record.heartbeat_at >= dead_before
        ]
    api = {"revision": revision(), "version": herd_version(), "git_revision": git_revision()}
    engine = {**api, "engines_up": len(engines)}
    return {"build_info": {"api": api, "engine": engine}}
