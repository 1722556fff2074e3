"""A cluster's members held as columns, readable as a sequence of snapshots.

The store reads members for a decision with one column-wise query; building
100,000 ``NodeSnapshot`` objects (let alone ORM rows) costs more than the
ranking itself. :class:`MemberTable` keeps what the query returned as plain
lists plus the :class:`NodeColumns` the ranking sorts, and builds a snapshot
only for the members code actually looks at one by one (a placement policy
counting zones, the preview showing victims).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from herd.domain.snapshots import NodeSnapshot
from herd.policies.ranking import NodeColumns
from herd.types import HealthStatus, NodeStatus


@dataclass(frozen=True)
class MemberLists:
    """Per-member values in member order, one list per NodeSnapshot field."""

    ids: list[str]
    names: list[str]
    index: list[int]
    status: list[str]
    health: list[str]
    created_at: list[float | None]
    profile_created_at: list[float | None]
    zone: list[str | None]
    region: list[str | None]
    protected: list[bool]
    deletion_cost: list[float]
    tainted: list[bool]
    physical_id: list[str | None]


class MemberTable(Sequence[NodeSnapshot]):
    """Members as columns; ``table[i]`` is the i-th member as a NodeSnapshot."""

    __slots__ = ("columns", "lists")

    def __init__(self, lists: MemberLists) -> None:
        self.lists = lists
        #: What the ranking sorts, built once per table (the BEFORE check and the
        #: shrink decision of one action read the same table).
        self.columns = NodeColumns.from_arrays(
            lists.ids,
            index=lists.index,
            status=lists.status,
            health=lists.health,
            tainted=lists.tainted,
            created_at=[float("nan") if t is None else t for t in lists.created_at],
            profile_created_at=[float("nan") if t is None else t for t in lists.profile_created_at],
            deletion_cost=lists.deletion_cost,
            protected=lists.protected,
            zone=lists.zone,
            region=lists.region,
        )

    def __len__(self) -> int:
        return len(self.lists.ids)

    def snapshot(self, position: int) -> NodeSnapshot:
        """The member at ``position`` as a frozen snapshot."""
        cols = self.lists
        return NodeSnapshot(
            id=cols.ids[position],
            name=cols.names[position],
            index=cols.index[position],
            status=NodeStatus(cols.status[position]),
            health=HealthStatus(cols.health[position]),
            created_at=cols.created_at[position],
            profile_created_at=cols.profile_created_at[position],
            zone=cols.zone[position],
            region=cols.region[position],
            protected=cols.protected[position],
            deletion_cost=cols.deletion_cost[position],
            tainted=cols.tainted[position],
            physical_id=cols.physical_id[position],
        )

    @overload
    def __getitem__(self, position: int) -> NodeSnapshot: ...

    @overload
    def __getitem__(self, position: slice) -> list[NodeSnapshot]: ...

    def __getitem__(self, position: int | slice) -> NodeSnapshot | list[NodeSnapshot]:
        if isinstance(position, slice):
            return [self.snapshot(i) for i in range(*position.indices(len(self)))]
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError(position)
        return self.snapshot(position)

    def __iter__(self) -> Iterator[NodeSnapshot]:
        return (self.snapshot(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def member_labels(nodes: Sequence[NodeSnapshot], key: str) -> Sequence[str | None]:
    """Every member's ``zone`` or ``region`` (a member table answers without snapshots)."""
    if isinstance(nodes, MemberTable):
        return nodes.lists.zone if key == "zone" else nodes.lists.region
    return [getattr(node, key) for node in nodes]
