"""herd's previews of a shrink: ``preview_scale_in``, ``preview_resize``, ``preview_del_nodes``.

Each takes exactly the parameters of its action (plus ``seed``), is validated by
the action's own handler, and answers the victims the action would remove now,
with the rule that chose each, from the same BEFORE checks and victim decision
the engine runs (``herd.policies.preview``). The answer names the seed it used:
the action run with that ``seed`` removes the same members while nothing else
changes. Nothing is stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.services.cluster_actions import HANDLERS
from herd.errors import Conflict, PolicyRejected
from herd.policies.checks import BoundPolicy
from herd.policies.preview import preview_shrink
from herd.store import bindings
from herd.store.database import Session
from herd.store.models import ClusterRow
from herd.store.snapshots import load_cluster_snapshot

SEED_LIMIT = 2**31
PreviewCall = Callable[[Session, Services, RequestContext, ClusterRow, object], dict[str, object]]


def bound_policies(session: Session, services: Services, cluster_id: str) -> list[BoundPolicy]:
    """The cluster's enabled policies, instantiated, in the order the engine runs them."""
    return [
        BoundPolicy(
            binding.id,
            policy.name,
            services.policies.create(policy.spec)[1],
            data=dict(binding.data or {}),
        )
        for binding, policy in bindings.enabled_policies(session, cluster_id)
    ]


def _preview(key: str) -> PreviewCall:
    def handle(
        session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: object
    ) -> dict[str, object]:
        action, inputs = HANDLERS[key](session, services, ctx, cluster, raw)
        seed = inputs.get("seed")
        if seed is None:
            seed = secrets.randbelow(SEED_LIMIT)
            inputs = {**inputs, "seed": seed}
        snapshot = load_cluster_snapshot(session, cluster.id)
        assert snapshot is not None  # the handler found the cluster in this transaction
        try:
            victims = preview_shrink(
                action,
                snapshot,
                bound_policies(session, services, cluster.id),
                inputs,
                services.now(),
                seed,
                services.settings.max_nodes_per_cluster,
            )
        except PolicyRejected as exc:
            raise Conflict(f"A {key.replace('_', '-')} would fail now: {exc}") from exc
        members = {node.id: node for node in snapshot.nodes}
        return {
            "action": action.value,
            "seed": seed,
            "count": len(victims),
            "victims": [
                {
                    "node_id": victim.node_id,
                    "name": members[victim.node_id].name,
                    "index": members[victim.node_id].index,
                    "status": members[victim.node_id].status,
                    "health": members[victim.node_id].health,
                    "rule": victim.rule,
                }
                for victim in victims
            ],
        }

    return handle


PREVIEWS: dict[str, PreviewCall] = {
    f"preview_{key}": _preview(key) for key in ("scale_in", "resize", "del_nodes")
}
