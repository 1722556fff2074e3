"""``senlin.policy.zone_placement-1.0`` and ``senlin.policy.region_placement-1.0``.

Both spread members over named groups by weight. On growth they write
``data['creation'] = {'count': n, 'zones'|'regions': {name: k}}``; on shrink
``data['deletion'] = {'count': n, 'zones'|'regions': {name: k}}``, taking nodes
from the groups most over their quota ``floor(total_after * weight / sum)``.

Differences from Senlin, on purpose: there is no Nova/Keystone to ask which
zones or regions exist, so a group is usable when its weight is > 0; groups are
visited by headroom (most over or under quota first, then by name) rather than
by weight, so a shrink really starts with the most over-quota group; the zone
policy is not limited to ``os.nova.server`` profiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from herd.domain.sizing import parse_resize
from herd.errors import InvalidSpec
from herd.json_types import int_value, list_at, object_at, str_at
from herd.policies.base import Decision, Policy, PolicyContext
from herd.policies.members import member_labels
from herd.policies.spec import Field, Integer, List, Map, String
from herd.types import ActionName, Phase

NO_FEASIBLE_PLAN = "There is no feasible plan to handle all nodes."

_TARGETS = frozenset(
    (Phase.BEFORE, action)
    for action in (
        ActionName.CLUSTER_SCALE_OUT,
        ActionName.CLUSTER_SCALE_IN,
        ActionName.CLUSTER_RESIZE,
        ActionName.NODE_CREATE,
    )
)


def create_plan(
    current: Mapping[str, int],
    weights: Mapping[str, int],
    caps: Mapping[str, int],
    count: int,
    expand: bool,
) -> dict[str, int] | None:
    """Spread ``count`` new (or removed) nodes over groups by weight.

    Args:
        current: Members per usable group now.
        weights: Weight per usable group (all > 0).
        caps: Optional maximum members per group (-1 or absent: no cap).
        count: Nodes to place or remove (> 0).
        expand: True to place new nodes, False to remove.

    Returns:
        ``{group: k}`` with only positive entries, or None when no plan covers
        ``count`` (Senlin's "no feasible plan").
    """
    sum_weight = sum(weights.values())
    existing = sum(current.get(g, 0) for g in weights)
    total = existing + count if expand else existing - count
    if total < 0:
        return None
    headroom: dict[str, int] = {}
    for group, weight in weights.items():
        share = total * weight / sum_weight
        if expand:
            quota = math.ceil(share)
            if caps.get(group, -1) >= 0:
                quota = min(quota, caps[group])
            headroom[group] = quota - current.get(group, 0)
        else:
            headroom[group] = current.get(group, 0) - math.floor(share)
    plan: dict[str, int] = {}
    remain = count
    for group in sorted(headroom, key=lambda g: (-headroom[g], g)):
        if remain <= 0 or headroom[group] <= 0:
            break
        plan[group] = min(headroom[group], remain)
        remain -= plan[group]
    if remain > 0 or not plan:
        return None
    return plan


class _PlacementPolicy(Policy):
    """What zone and region placement share; subclasses name the group kind."""

    key: ClassVar[str]  # 'zones' or 'regions' in action data
    node_attr: ClassVar[str]  # 'zone' or 'region' on NodeSnapshot
    unusable: ClassVar[str]
    targets = _TARGETS
    singleton = True

    @classmethod
    def check_properties(
        cls, validated: dict[str, object], properties: Mapping[str, object]
    ) -> dict[str, object]:
        _check_unique(list_at(validated, cls.key), cls.key)
        return validated

    def groups(self) -> list[Mapping[str, object]]:
        return [g for g in list_at(self.properties, self.key) if isinstance(g, Mapping)]

    def _count(self, ctx: PolicyContext, data: dict[str, object]) -> int | str:
        """Signed count (+ grow, - shrink, 0 skip) or an error text."""
        if ctx.action is ActionName.NODE_CREATE:
            return 1
        if ctx.action is ActionName.CLUSTER_RESIZE:
            if not data.get("deletion") and not data.get("creation"):
                plan = parse_resize(
                    len(ctx.cluster.nodes), ctx.cluster, ctx.inputs, ctx.max_nodes_per_cluster
                )
                if plan.error:
                    return plan.error
                data.update(plan.to_data())
            if data.get("deletion"):
                return -int_value(object_at(data, "deletion")["count"])
            return int_value(object_at(data, "creation")["count"])
        if ctx.action is ActionName.CLUSTER_SCALE_IN:
            prior = object_at(data, "deletion")
            return -int_value(prior.get("count", 1) if prior else ctx.inputs.get("count", 1))
        prior = object_at(data, "creation")
        return int_value(prior.get("count", 1) if prior else ctx.inputs.get("count", 1))

    def before(self, ctx: PolicyContext) -> Decision:
        data = dict(ctx.data)
        signed = self._count(ctx, data)
        if isinstance(signed, str):
            return Decision.error(data, signed)
        if signed == 0:
            return Decision.skip(data)
        usable = {str_at(g, "name"): g for g in self.groups() if int_value(g["weight"]) > 0}
        if not usable:
            return Decision.error(data, self.unusable)
        current = dict.fromkeys(usable, 0)
        for group in member_labels(ctx.cluster.nodes, self.node_attr):
            if group in current:
                current[group] += 1
        weights = {name: int_value(g["weight"]) for name, g in usable.items()}
        caps = {name: int_value(g.get("cap", -1)) for name, g in usable.items()}
        expand = signed > 0
        plan = create_plan(current, weights, caps, abs(signed), expand)
        if plan is None:
            return Decision.error(data, NO_FEASIBLE_PLAN)
        section = "creation" if expand else "deletion"
        data[section] = dict(object_at(data, section)) | {"count": abs(signed), self.key: plan}
        return Decision.ok(data, "Placement plan created.")


def _check_unique(groups: Sequence[object], key: str) -> None:
    seen: set[object] = set()
    for i, group in enumerate(groups):
        if not isinstance(group, Mapping):
            continue  # the schema made every item a map
        if group["name"] in seen:
            raise InvalidSpec(
                f"Duplicate name '{group['name']}' in '{key}'.",
                field=f"properties.{key}[{i}].name",
            )
        seen.add(group["name"])


class ZonePlacementPolicy(_PlacementPolicy):
    """Spreads members across availability zones (``NodeSnapshot.zone``)."""

    type_name = "senlin.policy.zone_placement"
    versions = ("1.0",)
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [
            {"status": "EXPERIMENTAL", "since": "2016.04"},
            {"status": "SUPPORTED", "since": "2016.10"},
        ],
    }
    priority = 300
    key = "zones"
    node_attr = "zone"
    unusable = "No availability zone found available."
    schema: ClassVar[dict[str, Field]] = {
        "zones": List(
            item=Map(
                schema={
                    "name": String(required=True),
                    "weight": Integer(default=100, min_value=0),
                }
            )
        ),
    }


class RegionPlacementPolicy(_PlacementPolicy):
    """Spreads members across regions (``NodeSnapshot.region``), with per-region caps."""

    type_name = "senlin.policy.region_placement"
    versions = ("1.0",)
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [
            {"status": "EXPERIMENTAL", "since": "2016.04"},
            {"status": "SUPPORTED", "since": "2016.10"},
        ],
    }
    priority = 200
    key = "regions"
    node_attr = "region"
    unusable = "No region is found usable."
    schema: ClassVar[dict[str, Field]] = {
        "regions": List(
            item=Map(
                schema={
                    "name": String(required=True),
                    "weight": Integer(default=100, min_value=0),
                    "cap": Integer(default=-1, min_value=-1),
                }
            )
        ),
    }
