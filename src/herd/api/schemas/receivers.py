"""Bodies of ``/v1/receivers`` create and update."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict

from herd.api.schemas.base import (
    JsonMap,
    Name,
    OptionalIdentity,
    OptionalName,
    RequestModel,
    SenlinBool,
    one_of,
)
from herd.api.schemas.documented import also_required
from herd.types import ActionName

WEBHOOK = "webhook"
RECEIVER_TYPES = (WEBHOOK, "message")
#: Senlin's action names a herd receiver cannot run: they are not keys of the actions endpoint
NOT_FOR_RECEIVERS = ("CLUSTER_CREATE", "CLUSTER_DELETE", "CLUSTER_OPERATION", "CLUSTER_UPDATE")
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

#: herd refuses type ``message`` later, with its own text (docs/api.md)
ReceiverType = Annotated[str | None, one_of(RECEIVER_TYPES, documented=[WEBHOOK], required=True)]
#: the names a receiver may run (the rest are refused later, with Senlin's text)
ClusterActionName = Annotated[
    str | None,
    one_of(
        CLUSTER_ACTION_NAMES,
        documented=[n for n in CLUSTER_ACTION_NAMES if n not in NOT_FOR_RECEIVERS],
    ),
]


class ReceiverCreate(RequestModel):
    """``POST /v1/receivers`` ``{"receiver": {...}}``.

    ``actor`` is accepted and ignored, as Senlin overwrote it with a trust; herd runs
    the action as the receiver's owner. A webhook (the one type herd serves) needs its
    cluster and action: the service says so in Senlin's words, the document as required.
    """

    model_config = ConfigDict(json_schema_extra=also_required("cluster_id", "action"))

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
