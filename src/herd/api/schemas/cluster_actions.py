"""Bodies of ``POST /v1/clusters/<id>/actions``: one key per request, one model per key."""

from __future__ import annotations

import math
from typing import Annotated, ClassVar

from pydantic import BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

from herd.api.schemas.base import (
    Identity,
    JsonMap,
    RequestModel,
    SenlinBool,
    fail,
    identity_list,
    one_of,
    senlin_int,
    senlin_str,
)
from herd.api.schemas.clusters import MaxSize, Size
from herd.api.schemas.documented import ONE_KEY, also_required
from herd.types import AdjustmentType

RECOVER_OPERATIONS = ("REBOOT", "REBUILD", "RECREATE")
LIFECYCLE_RESULTS = ("CONTINUE", "ABANDON")

Count = Annotated[int | None, senlin_int(non_negative=True)]
#: herd: the seed of the action's random choices (a preview names the one it used)
Seed = Annotated[int | None, senlin_int(non_negative=True)]
NodeIdentities = Annotated[list[str], identity_list()]


class _ScaleParams(RequestModel):
    verb: ClassVar[str]
    #: 0 is refused with its own text (below), so the document starts at 1
    count: Count = Field(default=None, json_schema_extra={"minimum": 1})
    seed: Seed = None

    @field_validator("count")
    @classmethod
    def _not_zero(cls, count: int | None) -> int | None:
        if count == 0:
            raise fail(f"Count for {cls.verb} request cannot be 0.")
        return count


class ScaleOutParams(_ScaleParams):
    """``{"scale_out": {"count": n}}``; without a count the policies (or 1) decide."""

    verb = "scale-out"


class ScaleInParams(_ScaleParams):
    """``{"scale_in": {"count": n}}``; without a count the policies (or 1) decide."""

    verb = "scale-in"


def _number(value: object, info: ValidationInfo) -> float | None:
    if value is None:
        return None
    try:
        # JSON gives str, int, float or a container; float() of a container is a TypeError
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(value)
        number = float(value)
        if not math.isfinite(number):  # "NaN", "inf", 1e400: no capacity is that
            raise ValueError(value)
        return number
    except (TypeError, ValueError, OverflowError):
        raise fail(f"The value for number must be a number: '{value}'.") from None


class ResizeParams(RequestModel):
    """``{"resize": {...}}``: an adjustment and/or new bounds (Senlin's rules in domain/sizing)."""

    #: "Not enough parameters to do resize action." without any of these (domain/sizing.py)
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": [key], "properties": {key: {"not": {"type": "null"}}}}
                for key in ("adjustment_type", "number", "min_size", "max_size")
            ]
        }
    )

    adjustment_type: Annotated[str | None, one_of(t.value for t in AdjustmentType)] = None
    number: Annotated[float | None, BeforeValidator(_number)] = None
    min_size: Size = None
    max_size: MaxSize = None
    min_step: Count = None
    strict: SenlinBool = None
    seed: Seed = None


#: ``nodes`` defaults to an empty list, refused with Senlin's text: the document says required
NODES_REQUIRED = ConfigDict(json_schema_extra=also_required("nodes"))


class NodesParams(RequestModel):
    """``{"add_nodes": {"nodes": [...]}}``; without ``nodes`` the list is empty (Senlin's
    ``data.get('nodes', [])``), refused as too short, as Senlin refused it."""

    model_config = NODES_REQUIRED

    nodes: NodeIdentities = Field(default_factory=list, validate_default=True)


class DelNodesParams(RequestModel):
    """``{"del_nodes": {"nodes": [...], "destroy_after_deletion": bool}}`` (the flag from 1.4);
    no ``nodes`` is an empty list, as for ``add_nodes``."""

    model_config = NODES_REQUIRED

    nodes: NodeIdentities = Field(default_factory=list, validate_default=True)
    destroy_after_deletion: SenlinBool = None
    seed: Seed = None


def _node_pairs(value: object, info: ValidationInfo) -> dict[str, str]:
    # Senlin's texts: its API refused a missing, empty or non-map value with one message,
    # then its NodeReplaceMap field refused null and repeated replacements
    if not value or not isinstance(value, dict):
        raise fail("The data provided is not a map")
    for old, new in value.items():
        if new is None:
            raise fail(f"Field `{info.field_name}[{old}]' cannot be None")
    if len({str(new) for new in value.values()}) < len(value):
        raise fail("Map contains duplicated values")
    return {str(old): str(new) for old, new in value.items()}


class ReplaceNodesParams(RequestModel):
    """``{"replace_nodes": {"nodes": {old: new, ...}}}`` (1.3)."""

    # minProperties: the document says an empty map is refused, as _node_pairs does
    nodes: Annotated[
        dict[str, str],
        BeforeValidator(_node_pairs),
        Field(json_schema_extra={"minProperties": 1}),
    ]


class CheckParams(RequestModel):
    """``{"check": {...}}``: parameters are accepted and passed on, as Senlin does."""

    model_config = ConfigDict(extra="allow", frozen=True)


class RecoverParams(RequestModel):
    """``{"recover": {...}}``; ``check`` and ``check_capacity`` from 1.6."""

    operation: Annotated[
        str | None,
        one_of(
            RECOVER_OPERATIONS,
            upper=True,
            message="Operation value '{value}' has to be one of the following: "
            + ", ".join(RECOVER_OPERATIONS)
            + ".",
        ),
    ] = None
    operation_params: JsonMap = None
    check: SenlinBool = None
    check_capacity: SenlinBool = None


class PolicyAttachParams(RequestModel):
    """``{"policy_attach": {"policy_id": ..., "enabled": bool}}``."""

    policy_id: Identity
    enabled: SenlinBool = None


class PolicyDetachParams(RequestModel):
    """``{"policy_detach": {"policy_id": ...}}``."""

    policy_id: Identity


class PolicyUpdateParams(RequestModel):
    """``{"policy_update": {"policy_id": ..., "enabled": bool}}``."""

    policy_id: Identity
    enabled: SenlinBool = None


class ReplaceUnhealthyParams(RequestModel):
    """herd: ``{"replace_unhealthy": {"batch_size": n}}`` replaces CHECK_FAILED members."""

    batch_size: Annotated[int | None, senlin_int(minimum=1)] = None


Token = Annotated[str, senlin_str(required=True, non_empty=True)]


class CompleteLifecycleParams(RequestModel):
    """``{"complete_lifecycle": {"lifecycle_action_token": ..., ...}}`` (1.9)."""

    lifecycle_action_token: Token
    lifecycle_action_result: Annotated[
        str | None,
        one_of(
            LIFECYCLE_RESULTS,
            upper=True,
            message="'{value}' must be one of the allowed values: " + ", ".join(LIFECYCLE_RESULTS),
        ),
    ] = None


class LifecycleHeartbeatParams(RequestModel):
    """herd: ``{"lifecycle_heartbeat": {"lifecycle_action_token": ...}}`` extends a hook wait."""

    lifecycle_action_token: Token


class ClusterActionRequest(RequestModel):
    """The body of ``POST /v1/clusters/<id>/actions``: exactly one of these keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=ONE_KEY)

    scale_out: ScaleOutParams | None = None
    scale_in: ScaleInParams | None = None
    resize: ResizeParams | None = None
    add_nodes: NodesParams | None = None
    del_nodes: DelNodesParams | None = None
    replace_nodes: ReplaceNodesParams | None = None
    check: CheckParams | None = None
    recover: RecoverParams | None = None
    policy_attach: PolicyAttachParams | None = None
    policy_detach: PolicyDetachParams | None = None
    policy_update: PolicyUpdateParams | None = None
    replace_unhealthy: ReplaceUnhealthyParams | None = None
    complete_lifecycle: CompleteLifecycleParams | None = None
    lifecycle_heartbeat: LifecycleHeartbeatParams | None = None
    preview_scale_in: ScaleInParams | None = None
    preview_resize: ResizeParams | None = None
    preview_del_nodes: DelNodesParams | None = None


class NodeRecoverParams(RequestModel):
    """``{"recover": {...}}`` on a node; ``check`` from 1.6."""

    operation: Annotated[str | None, RecoverParams.model_fields["operation"].metadata[0]] = None
    operation_params: JsonMap = None
    check: SenlinBool = None


class NodeActionRequest(RequestModel):
    """The body of ``POST /v1/nodes/<id>/actions``: exactly one of these keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=ONE_KEY)

    check: CheckParams | None = None
    recover: NodeRecoverParams | None = None
