"""The victims of a shrink: the one decision the engine runs and the preview shows.

After the BEFORE policy checks have written ``data`` (a deletion policy's
candidates, a placement policy's per-zone or per-region counts, a scaling
policy's count), :func:`plan_shrink` decides which members a CLUSTER_SCALE_IN,
CLUSTER_RESIZE or CLUSTER_DEL_NODES removes. The engine's handlers call it with
the action's seed; the preview calls it with the seed it shows, so
``preview(seed=s)`` and an action run with ``seed=s`` remove the same members.

Without a deletion policy the default is Senlin's (broken members first, then
RANDOM), except that a zone or region plan written by a placement policy is
honoured; Senlin's engine ignored it and could unbalance the zones it had just
balanced (docs/policies.md records the difference).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from herd.domain.sizing import SizeBounds, check_size_params, parse_resize
from herd.domain.snapshots import ClusterSnapshot
from herd.json_types import int_value, list_at, object_at
from herd.policies.ranking import group_counts, rank_victims, rank_victims_by_group
from herd.policies.victims import RankResult, Victims
from herd.types import ActionName, Criteria

SHRINKS = (ActionName.CLUSTER_SCALE_IN, ActionName.CLUSTER_RESIZE, ActionName.CLUSTER_DEL_NODES)
EXPLICIT = "explicit candidate"


@dataclass(frozen=True)
class ShrinkPlan:
    """What a shrinking action removes, or why it cannot.

    ``data`` is the action's data after the decision (a resize adds its parsed
    ``deletion``/``creation`` counts); ``victims`` is empty for a resize that grows.
    """

    victims: Victims
    data: dict[str, object] = field(default_factory=dict)
    error: str | None = None

    @property
    def node_ids(self) -> list[str]:
        return self.victims.node_ids


def default_victims(
    cluster: ClusterSnapshot, count: int, deletion: Mapping[str, object] | None, seed: int
) -> RankResult:
    """The victims when no deletion policy chose any: broken first, then RANDOM (seeded).

    Args:
        cluster: The cluster snapshot.
        count: Nodes to remove; clamped to the number of members.
        deletion: ``data['deletion']`` as earlier policies left it, if any; its
            ``regions`` or ``zones`` counts are honoured.
        seed: Seed of the random order.
    """
    deletion = deletion or {}
    regions, zones = group_counts(deletion.get("regions")), group_counts(deletion.get("zones"))
    if regions:
        return rank_victims_by_group(cluster.nodes, regions, "region", Criteria.RANDOM, seed)
    if zones:
        return rank_victims_by_group(cluster.nodes, zones, "zone", Criteria.RANDOM, seed)
    return rank_victims(cluster.nodes, min(count, len(cluster.nodes)), Criteria.RANDOM, seed)


def _chosen(candidates: Sequence[str], rules: Sequence[str] | None) -> Victims:
    """Candidates a policy (or the request) named, with the rule that chose each."""
    if rules is not None and len(rules) == len(candidates):
        return Victims(map(str, candidates), map(str, rules))
    return Victims.by_one_rule(map(str, candidates), EXPLICIT)


def _positive(value: object, verb: str) -> int | str:
    if isinstance(value, bool):
        return f"Invalid count ({value}) for {verb}."
    try:
        count = int_value(value)
    except (TypeError, ValueError):
        return f"Invalid count ({value}) for {verb}."
    return count if count > 0 else f"Invalid count ({value}) for {verb}."


def _bounds(cluster: ClusterSnapshot) -> SizeBounds:
    return SizeBounds(cluster.min_size, cluster.max_size, cluster.desired_capacity)


def _victims(
    cluster: ClusterSnapshot,
    data: Mapping[str, object],
    count: int,
    seed: int,
    rules: Sequence[str] | None,
) -> RankResult | Victims:
    deletion = object_at(data, "deletion")
    candidates = [str(c) for c in list_at(deletion, "candidates")]
    if candidates:
        return _chosen(candidates, rules)
    return default_victims(cluster, count, deletion, seed)


def _finish(result: RankResult | Victims, data: dict[str, object]) -> ShrinkPlan:
    if isinstance(result, Victims):
        return ShrinkPlan(result, data)
    if result.error:
        return ShrinkPlan(result.victims, data, result.error)
    return ShrinkPlan(result.victims, data)


def plan_shrink(
    action: ActionName,
    cluster: ClusterSnapshot,
    inputs: Mapping[str, object],
    data: Mapping[str, object],
    seed: int,
    max_nodes_per_cluster: int,
    rules: Sequence[str] | None = None,
) -> ShrinkPlan:
    """Decide the victims of a shrinking action after its BEFORE checks.

    Args:
        action: CLUSTER_SCALE_IN, CLUSTER_RESIZE or CLUSTER_DEL_NODES.
        cluster: The cluster and its members now.
        inputs: The action's inputs (``count``; resize fields; ``candidates``).
        data: The action's data after the BEFORE checks.
        seed: The action's seed (RANDOM ranking).
        max_nodes_per_cluster: The service-wide cap.
        rules: The rule of each candidate a deletion policy chose (its ``notes``).

    Returns:
        The victims in removal order, with the rule that chose each, or an error
        text the action fails with.
    """
    result = dict(data)
    members = len(cluster.nodes)
    deletion = object_at(result, "deletion")
    if action is ActionName.CLUSTER_SCALE_IN:
        if deletion:
            count: int | str = len(list_at(deletion, "candidates")) or int_value(
                deletion.get("count", 1)
            )
        else:
            count = _positive(inputs.get("count", 1), "scaling in")
        if isinstance(count, str):
            return ShrinkPlan(Victims(), result, count)
        count = min(count, members)
        error = check_size_params(
            _bounds(cluster), members - count, None, None, True, max_nodes_per_cluster
        )
        if error:
            return ShrinkPlan(Victims(), result, error)
        return _finish(_victims(cluster, result, count, seed, rules), result)
    if action is ActionName.CLUSTER_RESIZE:
        if "deletion" not in result and "creation" not in result:
            parsed = parse_resize(members, cluster, inputs, max_nodes_per_cluster)
            if parsed.error:
                return ShrinkPlan(Victims(), result, parsed.error)
            result.update(parsed.to_data())
        deletion = object_at(result, "deletion")
        if not deletion:
            return ShrinkPlan(Victims(), result)
        candidates = list_at(deletion, "candidates")
        count = min(len(candidates) or int_value(deletion.get("count", 0)), members)
        return _finish(_victims(cluster, result, count, seed, rules), result)
    if action is ActionName.CLUSTER_DEL_NODES:
        requested = [str(node) for node in list_at(inputs, "candidates")]
        named = [str(node) for node in list_at(deletion, "candidates") or requested]
        present = {node.id for node in cluster.nodes}
        kept = [node for node in named if node in present]
        error = check_size_params(
            _bounds(cluster),
            cluster.desired_capacity - len(kept),
            None,
            None,
            True,
            max_nodes_per_cluster,
        )
        chosen = _chosen(named, rules)
        victims = Victims.of([v for v in chosen if v.node_id in present])
        return ShrinkPlan(victims, result, error)
    raise ValueError(f"{action.value} is not a shrinking action")
