"""Bodies of ``/v1/nodes`` create and update."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import BeforeValidator, ValidationInfo

from herd.api.schemas.base import (
    Identity,
    JsonMap,
    Name,
    OptionalIdentity,
    OptionalName,
    RequestModel,
    SenlinBool,
    fail,
    senlin_str,
)
from herd.domain.values import bool_error, parse_bool

Role = Annotated[str | None, senlin_str(max_length=64)]


def _node_metadata(value: object, info: ValidationInfo) -> dict[str, object] | None:
    """A JSON map whose keys herd reads itself (``protected``, ``deletion_cost``) are checked.

    The victim ranking reads these two keys; a value it cannot read would silently mean
    "not protected" or "cost 0", so it is refused here instead.
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise fail(f"The value ({value}) is not a valid JSON map for '{info.field_name}'.")
    if "protected" in value and parse_bool(value["protected"]) is None:
        raise fail(f"metadata.protected: {bool_error(value['protected'])}")
    if "deletion_cost" in value:
        cost = value["deletion_cost"]
        if isinstance(cost, bool) or not isinstance(cost, int | float | str):
            raise fail(f"metadata.deletion_cost: '{cost}' is not a number.")
        try:
            if not math.isfinite(float(cost)):
                raise ValueError(cost)
        except ValueError:
            raise fail(f"metadata.deletion_cost: '{cost}' is not a number.") from None
    return {str(key): item for key, item in value.items()}


NodeMetadata = Annotated[dict[str, object] | None, BeforeValidator(_node_metadata)]


class NodeCreate(RequestModel):
    """``POST /v1/nodes`` ``{"node": {...}}``."""

    name: Name
    profile_id: Identity
    cluster_id: OptionalIdentity = None
    role: Role = None
    metadata: NodeMetadata = None


class NodeUpdate(RequestModel):
    """``PATCH /v1/nodes/<id>`` ``{"node": {...}}``; ``tainted`` from 1.13."""

    name: OptionalName = None
    profile_id: OptionalIdentity = None
    role: Role = None
    metadata: NodeMetadata = None
    tainted: SenlinBool = None


class NodeAdoptPreview(RequestModel):
    """``POST /v1/nodes/adopt-preview`` (1.7): Senlin's NodeAdoptPreviewRequest."""

    identity: Identity
    type: Identity
    overrides: JsonMap = None
    snapshot: SenlinBool = None


class NodeAdopt(NodeAdoptPreview):
    """``POST /v1/nodes/adopt`` (1.7): Senlin's NodeAdoptRequest."""

    name: OptionalName = None
    role: Role = None
    metadata: NodeMetadata = None
