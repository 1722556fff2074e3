"""``senlin.policy.batch-1.0``: rolling updates in batches (min_in_service, max_batch_size).

Before a CLUSTER_UPDATE the policy writes Senlin's update schedule into the
action's data::

    data["update"] = {"pause_time": 60, "batch_size": 5, "min_in_service": 15,
                      "plan": [[node ids of batch 1], [batch 2], ...]}

and the engine replaces the members batch by batch, pausing ``pause_time``
seconds between batches. Before a CLUSTER_RECOVER it writes the same settings
without a plan (the recover handler decides which members it recovers, then
splits them with :func:`split_batches`); Senlin applied the policy to updates
only.

The batch size is Senlin's: the members above ``min_in_service`` (half the
members, rounded up, when there are not more than ``min_in_service``), capped
by ``max_batch_size``. Members that are broken (ERROR, WARNING, tainted, marked
CHECK_FAILED) or were never created go first, as Senlin's ``filter_error_nodes``
and Heat's rolling update do: replacing them takes nothing out of service, so
the healthy members that follow are replaced while every broken one already
serves again. A plan already in the action's data is kept, so a resumed action
continues the schedule it started instead of planning a new one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from herd.domain.snapshots import NodeSnapshot
from herd.errors import InvalidSpec
from herd.json_types import int_value
from herd.policies.base import Decision, Policy, PolicyContext
from herd.policies.spec import Field, Integer
from herd.types import ActionName, HealthStatus, NodeStatus, Phase

PROPERTIES_SCHEMA: dict[str, Field] = {
    "min_in_service": Integer(default=1, min_value=0),
    "max_batch_size": Integer(default=-1),
    "pause_time": Integer(default=60, min_value=0),
}

#: the action data key Senlin's batch policy writes (``action.data['update']``)
DATA_KEY = "update"


def batch_size(total: int, min_in_service: int, max_batch_size: int) -> int:
    """How many members one batch replaces (Senlin's ``_get_batch_size``).

    Args:
        total: members of the cluster.
        min_in_service: members that must keep serving.
        max_batch_size: the cap, ``-1`` for none.

    Returns:
        ``total - min_in_service`` when there are more members than must serve,
        else half the members rounded up (Senlin's rule: a cluster no bigger than
        ``min_in_service`` is still updated, in two halves); then capped. At least 1.
    """
    size = total - min_in_service if total > min_in_service else math.ceil(total / 2)
    if max_batch_size != -1 and size > max_batch_size:
        size = max_batch_size
    return max(1, size)


def is_broken(node: NodeSnapshot) -> bool:
    """A member that serves nothing now, so replacing it costs no capacity."""
    return (
        node.status in (NodeStatus.ERROR, NodeStatus.WARNING)
        or node.tainted
        or node.health == HealthStatus.CHECK_FAILED
    )


def update_order(nodes: Sequence[NodeSnapshot]) -> list[str]:
    """Member ids in the order a rolling update replaces them.

    Broken members first, then members never created, then the good ones; each
    group in index order (stable, so a replayed plan is the same).
    """
    ordered = sorted(nodes, key=lambda n: n.index)
    broken = [n.id for n in ordered if is_broken(n)]
    not_created = [n.id for n in ordered if not is_broken(n) and n.created_at is None]
    good = [n.id for n in ordered if not is_broken(n) and n.created_at is not None]
    return broken + not_created + good


def split_batches(node_ids: Sequence[str], size: int) -> list[list[str]]:
    """``node_ids`` cut into consecutive batches of ``size`` (the last may be shorter)."""
    step = max(1, size)
    return [list(node_ids[start : start + step]) for start in range(0, len(node_ids), step)]


def plan_update(
    nodes: Sequence[NodeSnapshot], min_in_service: int, max_batch_size: int
) -> list[list[str]]:
    """The batches of a rolling update of ``nodes``: broken members first."""
    if not nodes:
        return []
    size = batch_size(len(nodes), min_in_service, max_batch_size)
    return split_batches(update_order(nodes), size)


class BatchPolicy(Policy):
    """Plans rolling updates (and batched recoveries) of a cluster's members."""

    type_name = "senlin.policy.batch"
    versions = ("1.0",)
    schema: ClassVar[dict[str, Field]] = PROPERTIES_SCHEMA
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "EXPERIMENTAL", "since": "2017.02"}]
    }
    priority = 200
    singleton = True
    targets = frozenset(
        {(Phase.BEFORE, ActionName.CLUSTER_UPDATE), (Phase.BEFORE, ActionName.CLUSTER_RECOVER)}
    )

    @classmethod
    def check_properties(
        cls, validated: dict[str, object], properties: Mapping[str, object]
    ) -> dict[str, object]:
        size = int_value(validated["max_batch_size"])
        if size != -1 and size < 1:
            # Senlin accepted 0 and then failed every update (a range with step 0).
            raise InvalidSpec(
                f"The value '{properties.get('max_batch_size')}' of 'max_batch_size' must be "
                "-1 (no limit) or greater than or equal to 1.",
                field="properties.max_batch_size",
            )
        return validated

    def before(self, ctx: PolicyContext) -> Decision:
        data = dict(ctx.data)
        existing = data.get(DATA_KEY)
        if isinstance(existing, Mapping) and "batch_size" in existing:
            # A resumed action: its schedule (and the batch it reached) stands.
            return Decision.ok(data, "Batching request validated.")
        min_in_service = int_value(self.properties["min_in_service"])
        max_batch_size = int_value(self.properties["max_batch_size"])
        schedule: dict[str, object] = {
            "pause_time": int_value(self.properties["pause_time"]),
            "min_in_service": min_in_service,
            "max_batch_size": max_batch_size,
            "batch_size": batch_size(len(ctx.cluster.nodes), min_in_service, max_batch_size),
        }
        if ctx.action is ActionName.CLUSTER_UPDATE:
            schedule["plan"] = plan_update(ctx.cluster.nodes, min_in_service, max_batch_size)
        data[DATA_KEY] = schedule
        return Decision.ok(data, "Batching request validated.")
