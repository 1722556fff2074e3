"""A cluster's members held as columns, readable as a sequence of snapshots.

The store reads members for a decision with one column-wise query; building
100,000 ``NodeSnapshot`` objects (let alone ORM rows) costs more than the
ranking itself. :class:`MemberTable` keeps what the query returned as plain
lists plus the :class:`NodeColumns` the ranking sorts, and builds a snapshot
only for the members code actually looks at one by one (a placement policy
counting zones, the preview showing victims).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

from herd.domain.snapshots import NodeSnapshot
from herd.policies.coded_texts import CodedTexts
from herd.policies.columns import IDS_KEY, IntArray, NodeColumns, base_ranks, state_ranks_at
from herd.policies.kept_order import ORDER_COLUMNS, carry_for_states, carry_kept_orders
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


@dataclass(frozen=True)
class MemberChanges:
    """What changed in a cluster's members since a table was read (see ``store/snapshots.py``).

    ``rewritten``: members whose rows changed in any column, or left; ``fresh`` holds the
    current rows of those still in the cluster. ``states``: members of which only the status
    or the health changed, with their new values (None: unchanged).
    """

    rewritten: Collection[str]
    fresh: MemberTable
    states: Mapping[str, tuple[str | None, str | None]]


class MemberTable(Sequence[NodeSnapshot]):
    """Members as columns; ``table[i]`` is the i-th member as a NodeSnapshot.

    A table is never changed once built (a cache may hand one table to several
    decisions at once); :meth:`patched` builds a new one.
    """

    __slots__ = ("_base", "_lists", "_positions", "_states", "columns")

    def __init__(self, lists: MemberLists, columns: NodeColumns | None = None) -> None:
        #: Every list but, once ``_states`` are set, the statuses and healths (which
        #: ``_states`` then hold, coded: see ``with_states``).
        self._base = lists
        self._lists: MemberLists | None = lists  # None: built from _base and _states on read
        self._states: tuple[CodedTexts, CodedTexts] | None = None
        #: What the ranking sorts, built once per table (the BEFORE check and the
        #: shrink decision of one action read the same table).
        self.columns = columns if columns is not None else _columns(lists)
        self._positions: dict[str, int] | None = None

    @property
    def lists(self) -> MemberLists:
        """Per-member values, one list per NodeSnapshot field (built on first read after
        ``with_states``)."""
        lists = self._lists
        if lists is None:
            assert self._states is not None
            status, health = self._states
            lists = dataclasses.replace(
                self._base, status=status.as_list(), health=health.as_list()
            )
            self._lists = lists
        return lists

    def _coded_states(self) -> tuple[CodedTexts, CodedTexts] | None:
        """The statuses and healths coded (built once per table read; None: too many
        distinct ones for a byte)."""
        states = self._states
        if states is None:
            status, health = CodedTexts.of(self._base.status), CodedTexts.of(self._base.health)
            if status is None or health is None:
                return None
            states = self._states = (status, health)
        return states

    def position_of(self) -> dict[str, int]:
        """Member id -> position (built on first use)."""
        if self._positions is None:
            ids = self._base.ids
            self._positions = dict(zip(ids, range(len(ids)), strict=True))
        return self._positions

    def patched(self, changed: Collection[str], fresh: MemberTable) -> MemberTable:
        """This table with the members in ``changed`` replaced by ``fresh``.

        ``fresh`` holds the current rows of the changed members still in the
        cluster (by index); changed members it lacks have left. The result is what
        reading every member again would give, in index order.
        """
        return _patch(self, changed, fresh)

    def updated(self, changes: MemberChanges) -> MemberTable | None:
        """This table with ``changes`` applied; None if they do not fit it (read again)."""
        table = self.patched(changes.rewritten, changes.fresh) if changes.rewritten else self
        return table.with_states(changes.states) if changes.states else table

    def with_states(
        self, states: Mapping[str, tuple[str | None, str | None]]
    ) -> MemberTable | None:
        """This table with a new status or health (None: unchanged) for some members; None
        if one of them is not in the table.

        Only the status and health lists and the removal ranks are new: every other list
        and array, the zone and region codes and the kept orders are this table's.
        """
        return _with_states(self, states)

    def __len__(self) -> int:
        return len(self._base.ids)

    def snapshot(self, position: int) -> NodeSnapshot:
        """The member at ``position`` as a frozen snapshot."""
        cols, lists = self._base, self._lists
        status: Sequence[str] | CodedTexts
        health: Sequence[str] | CodedTexts
        if lists is not None:
            status, health = lists.status, lists.health
        else:  # patched with new states and not read whole since: read the codes
            assert self._states is not None
            status, health = self._states
        return NodeSnapshot(
            id=cols.ids[position],
            name=cols.names[position],
            index=cols.index[position],
            status=NodeStatus(status[position]),
            health=HealthStatus(health[position]),
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
        return nodes._base.zone if key == "zone" else nodes._base.region
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
    Lists and arrays in which no replaced value differs are shared with ``table``
    (neither is ever changed), so a mark copies the health columns only.
    """
    positions = table.position_of()
    old, new = table.lists, fresh.lists
    heres: list[int] = []  # positions here of members replaced in place ...
    ats: list[int] = []  # ... and their positions in fresh
    joined: list[int] = []
    for at, (node_id, index) in enumerate(zip(new.ids, new.index, strict=True)):
        here = positions.get(node_id)
        if here is not None and old.index[here] == index:
            heres.append(here)
            ats.append(at)
        else:
            joined.append(at)
    replaced = set(heres)
    dropped = sorted(
        positions[i] for i in changed if i in positions and positions[i] not in replaced
    )
    every_fresh_in_place = ats == list(range(len(new.ids)))
    lists: dict[str, list[Any]] = {}
    for name in _LIST_FIELDS:
        values, source = getattr(old, name), getattr(new, name)
        # map() with __getitem__ gathers without a Python frame per member.
        now = source if every_fresh_in_place else list(map(source.__getitem__, ats))
        if list(map(values.__getitem__, heres)) != now:
            values = list(values)
            for here, value in zip(heres, now, strict=True):
                values[here] = value
        lists[name] = values
    arrays: dict[str, Any] = {}
    for name in _ARRAY_FIELDS:
        arrays[name] = _replaced(getattr(table.columns, name), getattr(fresh.columns, name),
                                 heres, ats)  # fmt: skip
    # The zone and region codes a per-group ranking built, carried over rather than rebuilt.
    codes: dict[str, tuple[IntArray, dict[str | None, int]]] = {}
    for key in ("zone", "region"):
        held = table.columns.derived.get(f"{key}-codes", tuple)
        if held is not None:
            code_of = dict(held[1])
            labels = getattr(new, key)
            new_codes = np.fromiter(
                (code_of.setdefault(g, len(code_of)) for g in labels), np.int64, len(labels)
            )
            codes[key] = (_replaced(held[0], new_codes, heres, ats), code_of)
    # The orders the age criteria keep hold while no sort key of a staying member changed.
    orders_hold = not joined and all(
        arrays[name] is getattr(table.columns, name) for name in ORDER_COLUMNS
    )
    keep = None
    if dropped:
        keep = np.ones(len(old.ids), dtype=bool)
        keep[dropped] = False
        kept = keep.tolist()
        lists = {name: list(compress(values, kept)) for name, values in lists.items()}
        arrays = {name: array[keep] for name, array in arrays.items()}
        codes = {key: (array[keep], code_of) for key, (array, code_of) in codes.items()}
    if joined:
        lists = {name: [*values, *(getattr(new, name)[at] for at in joined)]
                 for name, values in lists.items()}  # fmt: skip
        picks = np.asarray(joined, dtype=np.int64)
        for name, array in arrays.items():
            arrays[name] = np.concatenate((array, getattr(fresh.columns, name)[picks]))
        for key, (array, code_of) in codes.items():
            labels = getattr(new, key)
            more = [code_of.setdefault(labels[at], len(code_of)) for at in joined]
            codes[key] = (np.concatenate((array, np.asarray(more, dtype=np.int64))), code_of)
        index = arrays["index"]
        if len(index) > 1 and bool((index[1:] < index[:-1]).any()):
            order = np.argsort(index, kind="stable")
            order_list = order.tolist()
            lists = {name: [values[i] for i in order_list] for name, values in lists.items()}
            arrays = {name: array[order] for name, array in arrays.items()}
            codes = {key: (array[order], code_of) for key, (array, code_of) in codes.items()}
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
    columns.derived.keep_all((f"{key}-codes", value) for key, value in codes.items())
    if member_lists.ids is old.ids:  # no member left or joined: the same ids, in place
        columns.derived.keep_all(table.columns.derived.with_prefix(IDS_KEY).items())
    if orders_hold:
        carry_kept_orders(table.columns, columns, keep)
    patched = MemberTable(member_lists, columns)
    if not dropped and not joined:
        patched._positions = positions  # every member kept its place
    return patched


Scalar = TypeVar("Scalar", bound=np.generic)


def _replaced(
    array: npt.NDArray[Scalar], source: npt.NDArray[Scalar], heres: list[int], ats: list[int]
) -> npt.NDArray[Scalar]:
    """``array`` with ``source[ats]`` put at ``heres`` (a copy; ``array`` if nothing differs)."""
    if not heres:
        return array
    here, at = np.asarray(heres, dtype=np.int64), np.asarray(ats, dtype=np.int64)
    before, after = array[here], source[at]
    differs = before != after
    if array.dtype.kind == "f":
        differs &= ~(np.isnan(before) & np.isnan(after))
    if not differs.any():
        return array
    array = array.copy()
    array[here] = after
    return array


#: the derived key of the ranks a member's state does not change (``columns.base_ranks``)
_BASE = "base-ranks"
#: what a table's columns cache that does not depend on the removal ranks
_RANK_FREE = ("order-", "place-", "unprotected", "zone", "region", _BASE, IDS_KEY)


def _with_states(
    table: MemberTable, states: Mapping[str, tuple[str | None, str | None]]
) -> MemberTable | None:
    try:
        at = list(map(table.position_of().__getitem__, states))
    except KeyError:
        return None
    coded = table._coded_states()
    if coded is None:
        return None  # read again: more distinct states than a byte holds
    where = np.fromiter(at, np.int64, len(at))
    values = list(states.values())
    new: list[CodedTexts] = []
    for held, which in zip(coded, (0, 1), strict=True):
        # Usually every changed member has a new status and keeps its health (or the
        # reverse): then one side is the log's values and the other unchanged.
        given = list(map(itemgetter(which), values))
        updated = held if given.count(None) == len(given) else held.updated(where, given)
        if updated is None:
            return None
        new.append(updated)
    status, health = new
    if status is coded[0] and health is coded[1]:
        return table
    cols = table.columns
    # What ranks a member besides its state (tainted, never created) is kept per table.
    tainted = table._base.tainted
    base = cols.derived.get_or_build(_BASE, lambda: base_ranks(cols.created_at, tainted))
    ranks = state_ranks_at(base[where], health, status, where)
    bucket = cols.bucket
    if bool((bucket[where] != ranks).any()):
        bucket = bucket.copy()
        bucket[where] = ranks
    columns = NodeColumns(
        ids=cols.ids,
        zone=cols.zone,
        region=cols.region,
        index=cols.index,
        bucket=bucket,
        created_at=cols.created_at,
        profile_created_at=cols.profile_created_at,
        deletion_cost=cols.deletion_cost,
        protected=cols.protected,
    )
    columns.derived.keep_all(cols.derived.with_prefix(_RANK_FREE).items())
    carry_for_states(cols, columns, where)
    patched = MemberTable(table._base, columns)
    patched._lists = None  # built from the coded states when read
    patched._states = (status, health)
    patched._positions = table._positions
    return patched
