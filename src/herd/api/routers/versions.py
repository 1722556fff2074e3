"""``GET /``, ``GET /v1`` and ``GET /v1/build-info``, as Senlin answers them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from herd.api.auth import Context
from herd.api.microversion import MAX_VERSION, MIN_VERSION

router = APIRouter(tags=["versions"])


def version_info(request: Request) -> dict[str, Any]:
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
def versions(request: Request) -> dict[str, Any]:
    return {"versions": [version_info(request)]}


@router.get("/v1")
@router.get("/v1/")
def version(request: Request) -> dict[str, Any]:
    return {"version": version_info(request)}


@router.get("/v1/build-info")
def build_info(ctx: Context) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        revision = package_version("herd")
    except PackageNotFoundError:
        revision = "unknown"
    return {"build_info": {"api": {"revision": revision}, "engine": {"revision": revision}}}
