"""``senlin.policy.affinity-1.0``: new members go into a Nova server group.

The spec is Senlin's: ``servergroup: {name, policies}`` (``policies`` one of
affinity, soft-affinity, anti-affinity (default), soft-anti-affinity),
``availability_zone`` and ``enable_drs_extension`` (default false). The policy
can only be attached to clusters of ``os.nova.server`` profiles: herd's other
drivers (``herd.process``, ``herd.sim``) have no server groups to put members
in, and the attach is refused with that reason.

This module decides and never calls the cloud. At attach the engine asks it
which group to use (:meth:`AffinityPolicy.group_choice`), finds or makes that
group through the driver and stores ``servergroup_id`` and ``inherited_group``
on the binding (:mod:`herd.engine.server_groups`). Before a scale-out, resize
or node create, :meth:`AffinityPolicy.before` reads them back from the binding
and writes Senlin's ``data['placement'] = {'count': n, 'placements': [{'servergroup':
id, 'zone'?: az}] * n}``; the engine hands each entry to its new node, whose
server boots with the scheduler hint ``group=<id>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from herd.domain.sizing import parse_resize
from herd.errors import InvalidSpec
from herd.json_types import int_value, object_at, str_or_none
from herd.policies.base import Decision, Policy, PolicyContext
from herd.policies.spec import Boolean, Field, Map, String
from herd.types import ActionName, Phase

GROUP_POLICIES = ("affinity", "soft-affinity", "anti-affinity", "soft-anti-affinity")

PROPERTIES_SCHEMA: dict[str, Field] = {
    "servergroup": Map(
        schema={
            "name": String(),
            "policies": String(default="anti-affinity", allowed=GROUP_POLICIES),
        }
    ),
    "availability_zone": String(),
    "enable_drs_extension": Boolean(default=False),
}

#: what a binding made before this version (or whose data was lost) cannot place
NO_GROUP = (
    "The policy's server group is unknown (the binding has no servergroup_id): "
    "detach the policy and attach it again."
)


@dataclass(frozen=True)
class GroupChoice:
    """Which server group an attach uses: ``name`` (None: make one with a generated
    name) and the Nova policy it must have."""

    name: str | None
    policy: str


class AffinityPolicy(Policy):
    """Server-group placement of new members (Nova only)."""

    type_name = "senlin.policy.affinity"
    versions = ("1.0",)
    schema: ClassVar[dict[str, Field]] = PROPERTIES_SCHEMA
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2016.10"}]
    }
    priority = 300
    singleton = True
    targets = frozenset(
        (Phase.BEFORE, action)
        for action in (
            ActionName.CLUSTER_SCALE_OUT,
            ActionName.CLUSTER_RESIZE,
            ActionName.NODE_CREATE,
        )
    )
    profile_types = ("os.nova.server-1.0", "os.nova.server-1.1", "os.nova.server-1.2")
    profile_type_reason = (
        "senlin.policy.affinity places members in Nova server groups, and only "
        "os.nova.server profiles have them"
    )

    @classmethod
    def check_properties(
        cls, validated: dict[str, object], properties: Mapping[str, object]
    ) -> dict[str, object]:
        if validated["enable_drs_extension"]:
            # Senlin's DRS mode looked for a vSphere hypervisor named like "*drs*" and put
            # its host in the zone: a VMware-only trick herd has no cloud to test on.
            raise InvalidSpec(
                "herd does not support the vSphere DRS extension (Nova's vmwareapi "
                "driver); leave enable_drs_extension false",
                field="properties.enable_drs_extension",
            )
        return validated

    # -- attach (the engine does the I/O) --------------------------------------------------

    def group_choice(self, profile_properties: Mapping[str, object]) -> GroupChoice:
        """The group to find or make: the spec's ``servergroup.name``, else the profile's
        ``scheduler_hints.group`` (Senlin's guess), else a new one."""
        group = object_at(self.properties, "servergroup")
        name = str_or_none(group, "name")  # the schema makes it a string or None
        if not name:
            hints = profile_properties.get("scheduler_hints") or {}
            hinted = hints.get("group") if isinstance(hints, Mapping) else None
            name = hinted if isinstance(hinted, str) and hinted else None
        return GroupChoice(name, str(group.get("policies") or "anti-affinity"))

    def mismatch(self, existing_policy: str) -> str | None:
        """Senlin's refusal when the group found by name has another policy."""
        wanted = object_at(self.properties, "servergroup").get("policies")
        if wanted and wanted != existing_policy:
            return (
                f"Policies specified ({wanted}) doesn't match that of the existing "
                f"servergroup ({existing_policy})."
            )
        return None

    # -- checks ------------------------------------------------------------------------------

    def before(self, ctx: PolicyContext) -> Decision:
        data = dict(ctx.data)
        count = _new_members(ctx, data)
        if isinstance(count, str):
            return Decision.error(data, count)
        if count <= 0:
            return Decision.skip(data)
        group_id = ctx.binding_data.get("servergroup_id")
        if not group_id:
            return Decision.error(data, NO_GROUP)
        entry: dict[str, object] = {"servergroup": str(group_id)}
        if self.properties.get("availability_zone"):
            entry["zone"] = self.properties["availability_zone"]
        data["placement"] = {"count": count, "placements": [dict(entry) for _ in range(count)]}
        return Decision.ok(data)


def _new_members(ctx: PolicyContext, data: dict[str, object]) -> int | str:
    """How many members the action creates (0 for a shrinking resize), or Senlin's error.

    Earlier policies' ``data['creation']`` is respected, as Senlin's pre_op did.
    """
    if ctx.action is ActionName.NODE_CREATE:
        return 1
    creation = object_at(data, "creation")
    if ctx.action is ActionName.CLUSTER_SCALE_OUT:
        return int_value(creation.get("count", 1) if creation else ctx.inputs.get("count", 1))
    if not creation and not data.get("deletion"):
        plan = parse_resize(
            len(ctx.cluster.nodes), ctx.cluster, ctx.inputs, ctx.max_nodes_per_cluster
        )
        if plan.error:
            return plan.error
        data.update(plan.to_data())
    return int_value(object_at(data, "creation").get("count", 0))
