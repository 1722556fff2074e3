"""``senlin.policy.scaling-1.0``: how many nodes a scale-in or scale-out changes.

Faithful to Senlin's ScalingPolicy: the BEFORE check runs only when the action
equals the policy's ``event``; the AFTER check (for both scale events) asks the
engine to stamp the binding's ``last_op`` so that the cooldown starts again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from herd.domain.sizing import check_size_params
from herd.domain.values import MAX_DURATION
from herd.errors import InvalidSpec
from herd.json_types import int_value, number_or_none, object_at, str_at
from herd.policies.base import Decision, Policy, PolicyContext
from herd.policies.spec import Boolean, Field, Integer, Map, Number, String
from herd.types import ActionName, AdjustmentType, CheckStatus, Phase

SCALE_EVENTS = (ActionName.CLUSTER_SCALE_IN, ActionName.CLUSTER_SCALE_OUT)

PROPERTIES_SCHEMA: dict[str, Field] = {
    "event": String(required=True, allowed=tuple(e.value for e in SCALE_EVENTS)),
    "adjustment": Map(
        schema={
            "type": String(
                default=AdjustmentType.CHANGE_IN_CAPACITY.value,
                allowed=tuple(a.value for a in AdjustmentType),
            ),
            "number": Number(default=1),
            "min_step": Integer(default=1),
            "best_effort": Boolean(default=False),
            "cooldown": Integer(default=0, max_value=MAX_DURATION),
        }
    ),
}


def positive_int(value: object) -> int | None:
    """Senlin's ``get_positive_int``: the value as an int > 0, or None."""
    if isinstance(value, bool):
        return None
    try:
        number = int_value(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


@dataclass(frozen=True)
class Adjustment:
    """The validated ``adjustment`` map, typed."""

    type: AdjustmentType
    number: float
    min_step: int
    best_effort: bool
    cooldown: int


def _adjustment(properties: Mapping[str, object]) -> Adjustment:
    # The schema filled every key with a value of its type
    adjustment = object_at(properties, "adjustment")
    number = number_or_none(adjustment, "number")
    return Adjustment(
        type=AdjustmentType(str_at(adjustment, "type")),
        number=1 if number is None else number,
        min_step=int_value(adjustment["min_step"]),
        best_effort=bool(adjustment["best_effort"]),
        cooldown=int_value(adjustment["cooldown"]),
    )


class ScalingPolicy(Policy):
    """Turns a scale request into ``data['deletion']`` or ``data['creation']`` counts."""

    type_name = "senlin.policy.scaling"
    versions = ("1.0",)
    schema: ClassVar[dict[str, Field]] = PROPERTIES_SCHEMA
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2016.04"}],
    }
    priority = 100
    singleton = False
    targets = frozenset((phase, event) for phase in Phase for event in SCALE_EVENTS)

    def __init__(self, properties: Mapping[str, object], policy_id: str | None = None) -> None:
        super().__init__(properties)
        #: shown in the cooldown text; the engine sets it to the stored policy id
        self.policy_id = policy_id

    @classmethod
    def check_properties(
        cls, result: dict[str, object], properties: Mapping[str, object]
    ) -> dict[str, object]:
        adjustment = _adjustment(result)
        if adjustment.number <= 0:
            raise InvalidSpec(
                "the 'number' for 'adjustment' must be > 0", field="properties.adjustment.number"
            )
        if adjustment.min_step < 0:
            raise InvalidSpec(
                "the 'min_step' for 'adjustment' must be >= 0",
                field="properties.adjustment.min_step",
            )
        if adjustment.cooldown < 0:
            raise InvalidSpec(
                "the 'cooldown' for 'adjustment' must be >= 0",
                field="properties.adjustment.cooldown",
            )
        return result

    @property
    def event(self) -> ActionName:
        return ActionName(str_at(self.properties, "event"))

    def applies_to(self, action: ActionName, phase: Phase) -> bool:
        if phase is Phase.BEFORE:
            return action == self.event
        return action in SCALE_EVENTS

    def adjustment_count(self, current: int) -> float:
        """The count the adjustment asks for when the request gives none."""
        adjustment = _adjustment(self.properties)
        kind = adjustment.type
        number = adjustment.number
        if kind is AdjustmentType.EXACT_CAPACITY:
            if self.event is ActionName.CLUSTER_SCALE_IN:
                return float(current - number)
            return float(number - current)
        if kind is AdjustmentType.CHANGE_IN_CAPACITY:
            return float(number)
        count = int(number * current / 100.0)
        return float(max(count, adjustment.min_step))

    def before(self, ctx: PolicyContext) -> Decision:
        data = dict(ctx.data)
        adjustment = _adjustment(self.properties)
        if ctx.last_op is not None and not ctx.now - ctx.last_op > adjustment.cooldown:
            name = self.policy_id or self.type_name
            return Decision.error(data, f"Policy {name} cooldown is still in progress.")
        cluster = ctx.cluster
        current = len(cluster.nodes)
        raw = ctx.inputs.get("count")
        if raw is None:
            computed = self.adjustment_count(current)
            raw = int(computed) if computed.is_integer() else computed
        count = positive_int(raw)
        if count is None:
            return Decision.error(data, f"Invalid count ({raw}) for action '{ctx.action.value}'.")
        best_effort = adjustment.best_effort
        if ctx.action is ActionName.CLUSTER_SCALE_IN:
            if best_effort:
                count = min(count, current - cluster.min_size)
            target = current - count
        else:
            max_size = cluster.max_size if cluster.max_size >= 0 else ctx.max_nodes_per_cluster
            if best_effort:
                count = min(count, max_size - current)
            target = current + count
        error = check_size_params(
            cluster, target, None, None, not best_effort, ctx.max_nodes_per_cluster
        )
        if error:
            return Decision.error(data, error)
        key = "deletion" if ctx.action is ActionName.CLUSTER_SCALE_IN else "creation"
        data[key] = {"count": count}
        return Decision.ok(data, "Scaling request validated.")

    def after(self, ctx: PolicyContext) -> Decision:
        return Decision(CheckStatus.OK, "", dict(ctx.data), touch_last_op=True)
