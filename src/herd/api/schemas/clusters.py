"""Bodies of ``/v1/clusters`` create, update and delete."""

from __future__ import annotations

from typing import Annotated

from herd.api.schemas.base import (
    Identity,
    JsonMap,
    Name,
    OptionalIdentity,
    OptionalName,
    RequestModel,
    SenlinBool,
    senlin_int,
)
from herd.domain.values import MAX_DURATION

MAX_NODES = "max_nodes_per_cluster"
Size = Annotated[int | None, senlin_int(minimum=0)]
MaxSize = Annotated[int | None, senlin_int(minimum=-1, maximum_from=MAX_NODES)]
Timeout = Annotated[int | None, senlin_int(non_negative=True, maximum=MAX_DURATION)]


class ClusterCreate(RequestModel):
    """``POST /v1/clusters`` ``{"cluster": {...}}``."""

    name: Name
    profile_id: Identity
    desired_capacity: Size = None
    min_size: Size = None
    max_size: MaxSize = None
    timeout: Timeout = None
    metadata: JsonMap = None
    config: JsonMap = None


class ClusterUpdate(RequestModel):
    """``PATCH /v1/clusters/<id>`` ``{"cluster": {...}}``; ``profile_only`` from 1.6."""

    name: OptionalName = None
    metadata: JsonMap = None
    timeout: Timeout = None
    profile_id: OptionalIdentity = None
    profile_only: SenlinBool = None
    config: JsonMap = None


class DeleteRequest(RequestModel):
    """Optional body of a cluster or node ``DELETE`` (1.8)."""

    force: SenlinBool = None


class ClusterMetadata(RequestModel):
    """``{"metadata": {...}}`` of openstacksdk's ``set_cluster_metadata`` (merge or replace)."""

    metadata: JsonMap = None


class ClusterMetadataItem(RequestModel):
    """``{"meta": {key: value}}`` of ``PUT /v1/clusters/<id>/metadata/<key>``."""

    meta: JsonMap = None
