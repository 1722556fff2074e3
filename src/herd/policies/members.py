"""A cluster's members held as columns, readable as a sequence of snapshots.

The store reads members for a decision with one column-wise query; building
100,000 ``NodeSnapshot`` objects (let alone ORM rows) costs more than the
ranking itself. :class:`MemberTable` keeps what the query returned as plain
lists plus the :class:`NodeColumns` the ranking sorts, and builds a snapshot
only for the members code actually looks at one by one (a placement policy
counting zones, the preview showing victims).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import overload

import numpy as np

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
    """Members as columns; ``table[i]`` is the i-th member as a NodeSnapshot.

    A table is never changed once built (a cache may hand one table to several
    decisions at once); :meth:`patched` builds a new one.
    """

    __slots__ = ("_positions", "columns", "lists")

    def __init__(self, lists: MemberLists, columns: NodeColumns | None = None) -> None:
        self.lists = lists
        #: What the ranking sorts, built once per table (the BEFORE check and the
        #: shrink decision of one action read the same table).
        self.columns = columns if columns is not None else _columns(lists)
        self._positions: dict[str, int] | None = None

    def position_of(self) -> dict[str, int]:
        """Member id -> position (built on first use)."""
        if self._positions is None:
            self._positions = dict(zip(self.lists.ids, range(len(self.lists.ids)), strict=True))
        return self._positions

    def patched(self, changed: Collection[str], fresh: MemberTable) -> MemberTable:
        """This table with the members in ``changed`` replaced by ``fresh``.

        ``fresh`` holds the current rows of the changed members still in the
        cluster (by index); changed members it lacks have left. The result is what
        reading every member again would give, in index order.
        """
        return _patch(self, changed, fresh)

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


def _columns(lists: MemberLists) -> NodeColumns:
    return NodeColumns.from_arrays(
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


_LIST_FIELDS = tuple(MemberLists.__dataclass_fields__)
_ARRAY_FIELDS = (
    "index",
    "bucket",
    "created_at",
    "profile_created_at",
    "deletion_cost",
    "protected",
)


def _patch(table: MemberTable, changed: Collection[str], fresh: MemberTable) -> MemberTable:
    """See :meth:`MemberTable.patched`.

    A member whose row changed but kept its index (a mark, a status change, a
    recreation) is replaced where it stands; one that left is dropped; one that
    joined is appended, and only then are the members sorted by index again.
    Copying the lists and arrays is the cost: a dozen list copies per patch.
    """
    positions = table.position_of()
    old, new = table.lists, fresh.lists
    in_place: list[tuple[int, int]] = []  # (position here, position in fresh)
    joined: list[int] = []
    for at, node_id in enumerate(new.ids):
        here = positions.get(node_id)
        if here is not None and old.index[here] == new.index[at]:
            in_place.append((here, at))
        else:
            joined.append(at)
    replaced = {here for here, _ in in_place}
    dropped = sorted(
        positions[i] for i in changed if i in positions and positions[i] not in replaced
    )
    lists = {name: list(getattr(old, name)) for name in _LIST_FIELDS}
    arrays = {name: getattr(table.columns, name).copy() for name in _ARRAY_FIELDS}
    for here, at in in_place:
        for name, values in lists.items():
            values[here] = getattr(new, name)[at]
        for name, array in arrays.items():
            array[here] = getattr(fresh.columns, name)[at]
    if dropped:
        keep = np.ones(len(old.ids), dtype=bool)
        keep[dropped] = False
        kept = keep.tolist()
        lists = {name: list(compress(values, kept)) for name, values in lists.items()}
        arrays = {name: array[keep] for name, array in arrays.items()}
    if joined:
        for name, values in lists.items():
            source = getattr(new, name)
            values.extend(source[at] for at in joined)
        for name, array in arrays.items():
            arrays[name] = np.concatenate((array, getattr(fresh.columns, name)[joined]))
        index = arrays["index"]
        if len(index) > 1 and bool((index[1:] < index[:-1]).any()):
            order = np.argsort(index, kind="stable")
            picks = order.tolist()
            lists = {name: [values[i] for i in picks] for name, values in lists.items()}
            arrays = {name: array[order] for name, array in arrays.items()}
    member_lists = MemberLists(**lists)
    columns = NodeColumns(
        ids=member_lists.ids,
        zone=member_lists.zone,
        region=member_lists.region,
        index=arrays["index"],
        bucket=arrays["bucket"],
        created_at=arrays["created_at"],
        profile_created_at=arrays["profile_created_at"],
        deletion_cost=arrays["deletion_cost"],
        protected=arrays["protected"],
    )
    patched = MemberTable(member_lists, columns)
    if not dropped and not joined:
        patched._positions = positions  # every member kept its place
    return patched
