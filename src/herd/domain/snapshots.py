"""Frozen views of clusters and nodes that pure decision code works on.

The store builds these from rows; policies and the victim ranking read them.
They hold plain values only (epoch seconds for times) so that a decision can be
recorded and replayed without a database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from herd.types import ClusterStatus, HealthStatus, NodeStatus


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    """One member of a cluster as decision code sees it."""

    id: str
    name: str
    index: int
    status: NodeStatus
    health: HealthStatus = HealthStatus.UNKNOWN
    created_at: float | None = None  # None: the node never became ACTIVE
    profile_created_at: float | None = None
    zone: str | None = None
    region: str | None = None
    protected: bool = False
    deletion_cost: float = 0.0
    tainted: bool = False
    physical_id: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """A cluster and its current members.

    ``nodes`` is any sequence of snapshots: a tuple, or the column-wise member
    table the store reads for decisions (it builds snapshots only on access).
    """

    id: str
    name: str
    min_size: int
    max_size: int  # -1: unbounded
    desired_capacity: int
    status: ClusterStatus = ClusterStatus.ACTIVE
    nodes: Sequence[NodeSnapshot] = ()
    config: dict[str, object] = field(default_factory=dict)

    def node(self, node_id: str) -> NodeSnapshot | None:
        for candidate in self.nodes:
            if candidate.id == node_id:
                return candidate
        return None
