"""Bodies of ``/v1/receivers`` create and update."""

from __future__ import annotations

from typing import Annotated

from herd.api.schemas.base import (
    JsonMap,
    Name,
    OptionalIdentity,
    OptionalName,
    RequestModel,
    SenlinBool,
    one_of,
)
from herd.types import ActionName

RECEIVER_TYPES = ("webhook", "message")
#: Senlin's ``CLUSTER_ACTION_NAMES`` (the values its ``action`` field accepts), plus
#: herd's CLUSTER_REPLACE_UNHEALTHY; which of them a receiver may run is the service's call
CLUSTER_ACTION_NAMES = (
    "CLUSTER_CREATE",
    "CLUSTER_DELETE",
    "CLUSTER_UPDATE",
    "CLUSTER_ADD_NODES",
    "CLUSTER_DEL_NODES",
    "CLUSTER_RESIZE",
    "CLUSTER_CHECK",
    "CLUSTER_RECOVER",
    "CLUSTER_REPLACE_NODES",
    "CLUSTER_SCALE_OUT",
    "CLUSTER_SCALE_IN",
    "CLUSTER_ATTACH_POLICY",
    "CLUSTER_DETACH_POLICY",
    "CLUSTER_UPDATE_POLICY",
    "CLUSTER_OPERATION",
    ActionName.CLUSTER_REPLACE_UNHEALTHY,
)

ReceiverType = Annotated[str | None, one_of(RECEIVER_TYPES)]
ClusterActionName = Annotated[str | None, one_of(CLUSTER_ACTION_NAMES)]


class ReceiverCreate(RequestModel):
    """``POST /v1/receivers`` ``{"receiver": {...}}``.

    ``actor`` is accepted and ignored, as Senlin overwrote it with a trust; herd runs
    the action as the receiver's owner.
    """

    name: Name
    type: ReceiverType
    cluster_id: OptionalIdentity = None
    action: ClusterActionName = None
    actor: JsonMap = None
    params: JsonMap = None


class ReceiverUpdate(RequestModel):
    """``PATCH /v1/receivers/<id>`` ``{"receiver": {...}}`` (1.7).

    ``rotate_secret`` (herd) gives the webhook a new secret: the answer shows the new
    URLs once, and the old ones stop working.
    """

    name: OptionalName = None
    action: ClusterActionName = None
    params: JsonMap = None
    rotate_secret: SenlinBool = None
