"""Preview of a scale-in: the victims the attached policies would choose now.

Runs the BEFORE decisions of a CLUSTER_SCALE_IN on a snapshot, in priority
order, without side effects (decisions are pure; nothing is stored). The
cooldown of a scaling policy is not applied: a preview asks "which nodes",
not "may I scale now".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from herd.domain.snapshots import ClusterSnapshot
from herd.errors import InvalidRequest, PolicyRejected
from herd.policies.base import Policy, PolicyContext
from herd.policies.deletion import DeletionPolicy
from herd.policies.ranking import RankResult, Victim, rank_victims, rank_victims_by_group
from herd.types import ActionName, CheckStatus, Criteria, Phase


def default_victims(
    cluster: ClusterSnapshot, count: int, deletion: Mapping[str, Any] | None, seed: int
) -> RankResult:
    """The victims when no deletion policy chose any: RANDOM, as Senlin's engine.

    The engine should call this too, so that preview and execution agree.
    Unlike Senlin, a zone or region plan written by a placement policy is
    honoured (Senlin's engine ignored it without a deletion policy).

    Args:
        cluster: The cluster snapshot.
        count: Nodes to remove; clamped to the number of members.
        deletion: ``data['deletion']`` as earlier policies left it, if any.
        seed: Seed for the random order.
    """
    deletion = deletion or {}
    if deletion.get("regions"):
        return rank_victims_by_group(
            cluster.nodes, deletion["regions"], "region", Criteria.RANDOM, seed
        )
    if deletion.get("zones"):
        return rank_victims_by_group(
            cluster.nodes, deletion["zones"], "zone", Criteria.RANDOM, seed
        )
    return rank_victims(cluster.nodes, min(count, len(cluster.nodes)), Criteria.RANDOM, seed)


def preview_scale_in(
    cluster: ClusterSnapshot,
    policies: Sequence[Policy],
    count: int | None,
    now: float,
    seed: int,
    max_nodes_per_cluster: int = 1000,
) -> list[Victim]:
    """Victims a CLUSTER_SCALE_IN would remove now, in order, with their rules.

    Args:
        cluster: The cluster snapshot.
        policies: The enabled attached policies, in ascending priority order.
        count: The requested count, or None to let policies (or the default 1) decide.
        now: The current time (epoch seconds).
        seed: The seed the real action would use.
        max_nodes_per_cluster: The service-wide cap.

    Raises:
        PolicyRejected: When a policy's BEFORE check fails (the action would fail).
        InvalidRequest: When protected members leave too few to remove.
    """
    inputs: dict[str, Any] = {} if count is None else {"count": count}
    data: dict[str, Any] = {}
    for policy in policies:
        if not policy.applies_to(ActionName.CLUSTER_SCALE_IN, Phase.BEFORE):
            continue
        ctx = PolicyContext(
            action=ActionName.CLUSTER_SCALE_IN,
            phase=Phase.BEFORE,
            cluster=cluster,
            inputs=inputs,
            data=data,
            now=now,
            seed=seed,
            max_nodes_per_cluster=max_nodes_per_cluster,
        )
        if isinstance(policy, DeletionPolicy):
            decision, victims = policy.decide(ctx)
            if decision.status is CheckStatus.ERROR:
                raise PolicyRejected(policy.type_name, decision.reason)
            return victims
        decision = policy.before(ctx)
        if decision.status is CheckStatus.ERROR:
            raise PolicyRejected(policy.type_name, decision.reason)
        data = decision.data
    deletion = data.get("deletion") or {}
    wanted = int(deletion.get("count", inputs.get("count", 1)))
    result = default_victims(cluster, wanted, deletion, seed)
    if result.error:
        raise InvalidRequest(result.error)
    return result.victims
