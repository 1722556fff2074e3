"""``senlin.policy.health-1.0`` / ``-1.1`` / ``-1.2``: health checks paused while a cluster shrinks.

The spec is validated (detection and recovery as in Senlin's two versions) and
read into :class:`HealthSettings`, which the engine's health manager follows.
The decision itself only pauses checks: before membership shrinks it writes
``data['health'] = {'suspended': True}`` and asks the engine to store
``suspended`` (and the action that suspended) on the binding, where the health
manager sees it; the AFTER check clears it. So members being removed are never
"recovered" half way. Polling, events and recovery live in ``herd.engine.health``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from herd.domain.sizing import parse_resize
from herd.domain.values import MAX_DURATION
from herd.json_types import object_at
from herd.policies.base import Decision, Policy, PolicyContext
from herd.policies.health_settings import HealthSettings, read_health_settings
from herd.policies.spec import Boolean, Field, Integer, List, Map, String
from herd.types import ActionName, CheckStatus, Phase

DETECTION_TYPES = (
    "NODE_STATUS_POLLING",
    "NODE_STATUS_POLL_URL",
    "LIFECYCLE_EVENTS",
    "HYPERVISOR_STATUS_POLLING",
)
MAX_RETRIES = 100  # poll URL attempts per check
RECOVERY_ACTIONS = ("REBOOT", "REBUILD", "RECREATE")

_OPTIONS = Map(
    schema={
        "interval": Integer(default=60, min_value=1, max_value=MAX_DURATION),
        "poll_url": String(default=""),
        "poll_url_ssl_verify": Boolean(default=True),
        "poll_url_conn_error_as_unhealthy": Boolean(default=True),
        "poll_url_healthy_response": String(default=""),
        "poll_url_retry_limit": Integer(default=3, min_value=0, max_value=MAX_RETRIES),
        "poll_url_retry_interval": Integer(default=3, min_value=0, max_value=MAX_DURATION),
    }
)
_MODE = Map(
    schema={
        "type": String(default="NODE_STATUS_POLLING", allowed=DETECTION_TYPES),
        "options": _OPTIONS,
    }
)

PROPERTIES_SCHEMA: dict[str, Field] = {
    "detection": Map(
        required=True,
        schema={
            # 1.0 style: one detection type with options.
            "type": String(allowed=DETECTION_TYPES),
            "options": _OPTIONS,
            # 1.1 style: several modes and a shared interval.
            "detection_modes": List(item=_MODE),
            "interval": Integer(default=60, min_value=1, max_value=MAX_DURATION),
            "node_update_timeout": Integer(default=300, min_value=0, max_value=MAX_DURATION),
            "recovery_conditional": String(
                default="ANY_FAILED", allowed=("ALL_FAILED", "ANY_FAILED")
            ),
        },
    ),
    "recovery": Map(
        schema={
            "actions": List(
                item=Map(
                    schema={
                        "name": String(required=True, allowed=RECOVERY_ACTIONS),
                        "params": Map(),
                    }
                )
            ),
            "fencing": List(item=String(allowed=("COMPUTE",))),
            "node_update_timeout": Integer(default=300, min_value=0, max_value=MAX_DURATION),
            "node_delete_timeout": Integer(default=20, min_value=0, max_value=MAX_DURATION),
            "node_force_recreate": Boolean(default=False),
        }
    ),
}

SHRINK_ACTIONS = (
    ActionName.CLUSTER_DEL_NODES,
    ActionName.CLUSTER_SCALE_IN,
    ActionName.CLUSTER_RESIZE,
    ActionName.CLUSTER_UPDATE,
    ActionName.CLUSTER_RECOVER,
    ActionName.CLUSTER_REPLACE_NODES,
    ActionName.CLUSTER_REPLACE_UNHEALTHY,
    ActionName.NODE_DELETE,
)


class HealthPolicy(Policy):
    """Suspends health checks around shrinking actions."""

    type_name = "senlin.policy.health"
    #: 1.2 only added HYPERVISOR_STATUS_POLLING (refused by herd at every version: its
    #: nodes run on no hypervisor it could ask); Senlin did not gate keys by version
    versions = ("1.0", "1.1", "1.2")
    schema: ClassVar[dict[str, Field]] = PROPERTIES_SCHEMA
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [
            {"status": "EXPERIMENTAL", "since": "2017.02"},
            {"status": "SUPPORTED", "since": "2018.06"},
        ],
        "1.1": [{"status": "SUPPORTED", "since": "2018.09"}],
        "1.2": [{"status": "SUPPORTED", "since": "2020.09"}],
    }
    priority = 600
    singleton = True
    targets = frozenset((phase, action) for phase in Phase for action in SHRINK_ACTIONS)

    def __init__(self, properties: Mapping[str, object]) -> None:
        super().__init__(properties)
        self.settings: HealthSettings = read_health_settings(self.properties, properties)

    def outbound_urls(self) -> list[tuple[str, str]]:
        return [
            (f"{mode.path}.poll_url", mode.poll_url.strip())
            for mode in self.settings.modes
            if mode.poll_url.strip()
        ]

    @classmethod
    def check_properties(
        cls, validated: dict[str, object], properties: Mapping[str, object]
    ) -> dict[str, object]:
        read_health_settings(validated, properties)  # raises InvalidSpec naming the key
        return validated

    def before(self, ctx: PolicyContext) -> Decision:
        data = dict(ctx.data)
        if ctx.action is ActionName.CLUSTER_RESIZE and not data.get("deletion"):
            plan = parse_resize(
                len(ctx.cluster.nodes), ctx.cluster, ctx.inputs, ctx.max_nodes_per_cluster
            )
            if plan.error:
                return Decision.error(data, plan.error)
            if not plan.is_shrink:
                return Decision.ok(data)
        data["health"] = dict(object_at(data, "health")) | {"suspended": True}
        # The manager trusts the flag only while this action runs, so a shrink that fails
        # (and never reaches its AFTER check) does not stop health checks for good.
        binding = {"suspended": True, "suspended_by": ctx.action_id, "suspended_at": ctx.now}
        return Decision(CheckStatus.OK, "Health checks suspended.", data, binding_data=binding)

    def after(self, ctx: PolicyContext) -> Decision:
        data = dict(ctx.data)
        data["health"] = dict(object_at(data, "health")) | {"suspended": False}
        binding = {"suspended": False, "suspended_by": None, "resumed_at": ctx.now}
        return Decision(CheckStatus.OK, "Health checks resumed.", data, binding_data=binding)
