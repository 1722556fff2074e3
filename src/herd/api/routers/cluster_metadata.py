"""``/v1/clusters/<id>/metadata``: openstacksdk's cluster metadata calls (herd's addition).

Senlin had no such path; openstacksdk's ``fetch_cluster_metadata``,
``set_cluster_metadata`` and ``delete_cluster_metadata`` call it (the common
metadata mixin of the SDK). Changes are synchronous: metadata is herd's record
only, no driver is involved, so no action is needed.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response

from herd.api.auth import Context, RequestContext
from herd.api.bodies import json_body
from herd.api.deps import ServicesDep
from herd.api.schemas.clusters import ClusterMetadata, ClusterMetadataItem
from herd.api.services.cluster_metadata import metadata_owner as _cluster
from herd.errors import InvalidRequest, NotFound

router = APIRouter(prefix="/v1/clusters/{cluster_id}/metadata", tags=["clusters"])


#: a null body is {"metadata": {}}: a merge of nothing, a replace by nothing (as {} is)
MetadataBody = Annotated[ClusterMetadata, json_body(ClusterMetadata, optional=True)]


def _write(
    services: ServicesDep,
    ctx: RequestContext,
    identity: str,
    request: ClusterMetadata,
    replace: bool,
) -> dict[str, object]:
    with services.database.write() as session:
        cluster = _cluster(session, ctx, identity, change=True)
        given = request.metadata or {}
        cluster.meta_data = dict(given) if replace else {**(cluster.meta_data or {}), **given}
        cluster.updated_at = services.now()
        return {"metadata": cluster.meta_data}


@router.get("")
def get_metadata(cluster_id: str, services: ServicesDep, ctx: Context) -> dict[str, object]:
    with services.database.read() as session:
        return {"metadata": _cluster(session, ctx, cluster_id, change=False).meta_data or {}}


@router.post("")
def merge_metadata(
    cluster_id: str, services: ServicesDep, ctx: Context, request: MetadataBody
) -> dict[str, object]:
    """Add or change the given keys; other keys stay."""
    return _write(services, ctx, cluster_id, request, replace=False)


@router.put("")
def replace_metadata(
    cluster_id: str, services: ServicesDep, ctx: Context, request: MetadataBody
) -> dict[str, object]:
    """Replace the whole metadata map (``{}`` clears it)."""
    return _write(services, ctx, cluster_id, request, replace=True)


@router.get("/{key}")
def get_item(cluster_id: str, key: str, services: ServicesDep, ctx: Context) -> dict[str, object]:
    with services.database.read() as session:
        metadata = _cluster(session, ctx, cluster_id, change=False).meta_data or {}
    if key not in metadata:
        raise NotFound("metadata key", key)
    return {"meta": {key: metadata[key]}}


@router.put("/{key}")
def set_item(
    cluster_id: str,
    key: str,
    services: ServicesDep,
    ctx: Context,
    request: Annotated[ClusterMetadataItem, json_body(ClusterMetadataItem)],
) -> dict[str, object]:
    meta = request.meta or {}
    if set(meta) != {key}:
        raise InvalidRequest(f'The body must be {{"meta": {{"{key}": <value>}}}}.', field="meta")
    with services.database.write() as session:
        cluster = _cluster(session, ctx, cluster_id, change=True)
        cluster.meta_data = {**(cluster.meta_data or {}), key: meta[key]}
        cluster.updated_at = services.now()
    return {"meta": meta}


@router.delete("/{key}", status_code=204)
def delete_item(cluster_id: str, key: str, services: ServicesDep, ctx: Context) -> Response:
    with services.database.write() as session:
        cluster = _cluster(session, ctx, cluster_id, change=True)
        metadata = dict(cluster.meta_data or {})
        if key not in metadata:
            raise NotFound("metadata key", key)
        del metadata[key]
        cluster.meta_data = metadata
        cluster.updated_at = services.now()
    return Response(status_code=204)
