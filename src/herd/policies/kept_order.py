"""The orders the age criteria keep between decisions on the same members.

The age criteria (OLDEST_FIRST, YOUNGEST_FIRST, OLDEST_PROFILE_FIRST) sort every member
once per member table by every key but the removal rank, and keep that order on the
columns; a decision takes the eligible broken members from their list and walks the order
for the rest. Marks, status changes and members leaving do not change the order, so a
patched table carries it (:func:`carry_kept_orders`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from herd.policies.columns import Bucket, IntArray, NodeColumns
from herd.policies.rank_keys import column, full_sort, key_functions
from herd.types import Criteria

#: the cache key prefix of a kept order's places (``members.MemberTable.with_states`` keeps it)
_PLACE = "place-"
#: Criteria whose order depends on the members alone, so it can be kept between decisions.
KEPT_CRITERIA = frozenset(
    (Criteria.OLDEST_FIRST, Criteria.YOUNGEST_FIRST, Criteria.OLDEST_PROFILE_FIRST)
)
_ORDER = "order-"
#: the cache key prefix of the broken members in ranking order, per criterion
_BROKEN = "broken-"
#: the cache key prefix under which a table patched with new states finds the broken lists
#: and good-member mask of the table it was patched from (``carry_for_states``)
_BEFORE = "before-"
_GOOD = "good"
_NOTHING: IntArray = np.zeros(0, dtype=np.int64)
#: The columns a kept order is sorted by (besides the ids).
ORDER_COLUMNS = ("index", "created_at", "profile_created_at", "deletion_cost")


def kept_order(cols: NodeColumns, criteria: Criteria) -> IntArray:
    """Every member's position, sorted by every key but the bucket (kept on ``cols``).

    Restricted to the members of one bucket it is the ranking order inside that
    bucket, and marks or status changes (which move members between buckets) do
    not change it; :func:`carry_kept_orders` carries it across departures.
    """
    name = _ORDER + criteria.value
    order: IntArray | None = cols.derived.get(name, np.ndarray)
    if order is None:
        keys = key_functions(cols, criteria, 0)[1:]  # [0] is the bucket, [-1] the index
        index = cols.index
        # A member table is in index order, and indexes are unique: then ties go by
        # position, which is the index, and no two members tie on every key.
        by_position = len(index) > 1 and bool((index[1:] > index[:-1]).all())
        values: list[npt.NDArray[np.generic]] = []
        for key in keys[:-1] if by_position else keys:
            value = key(None)
            # A key equal for every member (deletion_cost, usually) cannot order them,
            # nor can one equal to the key before it (OLDEST_FIRST's created_at, twice).
            if value.min() != value.max() and not (values and np.array_equal(value, values[-1])):
                values.append(value)
        if by_position:
            order = _by_keys_then_position(values, len(cols))
        else:
            order = full_sort(np.arange(len(cols), dtype=np.int64), list(map(column, values)),
                               cols.ids)  # fmt: skip
        order = cols.derived.keep(name, order)
    return order


def _by_keys_then_position(values: list[npt.NDArray[np.generic]], size: int) -> IntArray:
    """Positions sorted by ``values`` (most significant first), ties by position.

    The least significant key gets a quicksort (several times faster than a stable
    sort), with tied runs put back in position order; each key above it a stable
    sort of what is sorted so far.
    """
    if not values:
        return np.arange(size, dtype=np.int64)
    least = values[-1]
    order: IntArray = np.argsort(least)
    order = _ties_by_position(order, least[order])
    for value in reversed(values[:-1]):
        order = order[np.argsort(value[order], kind="stable")]
    return order


def _ties_by_position(order: IntArray, ordered: npt.NDArray[np.generic]) -> IntArray:
    """``order`` with each run of equal ``ordered`` values in ascending position."""
    tied = ordered[1:] == ordered[:-1]
    if not tied.any():
        return order
    follows = np.concatenate(([False], tied))  # equal to the one before
    at = np.flatnonzero(follows | np.concatenate((tied, [False])))  # in a tied run
    run = np.cumsum(~follows[at])  # which run, counted among the tied ones only
    order = order.copy()
    order[at] = order[at[np.lexsort((order[at], run))]]
    return order


def carry_kept_orders(
    held: NodeColumns, into: NodeColumns, kept: npt.NDArray[np.bool_] | None
) -> None:
    """Give ``into`` the orders kept on ``held``.

    Only valid when ``into`` holds the same members in the same order with the
    same ``ORDER_COLUMNS`` values, less those where ``kept`` is False.
    """
    orders = {
        name: order
        for name, order in held.derived.with_prefix(_ORDER).items()
        if isinstance(order, np.ndarray)
    }
    if kept is not None:
        new_position = np.cumsum(kept) - 1  # of each kept member; the others are dropped
        orders = {name: new_position[order[kept[order]]] for name, order in orders.items()}
    into.derived.keep_all(orders.items())


def carry_for_states(held: NodeColumns, into: NodeColumns, where: IntArray) -> None:
    """Leave on ``into`` the broken lists and good-member mask kept on ``held``, for the
    ranking to update rather than build again.

    Only valid when ``into`` is ``held`` with new removal ranks for the members at
    ``where`` alone (``members.MemberTable.with_states``): then members elsewhere keep
    their place in those lists. Building them again costs a pass over every member and a
    sort of every broken one (0.4 ms at 100,000 members); updating them, a pass over the
    broken ones and the changed ones.
    """
    into.derived.keep_all(
        (_BEFORE + name, (value, where))
        for name, value in held.derived.with_prefix((_BROKEN, _GOOD)).items()
        if isinstance(value, np.ndarray)
    )


def _good_members(cols: NodeColumns, unprotected: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The unprotected members of removal rank GOOD (from the table patched from, if any)."""
    before = cols.derived.get(_BEFORE + _GOOD, tuple)
    if before is None:
        good: npt.NDArray[np.bool_] = unprotected & (cols.bucket == Bucket.GOOD)
        return good
    held, where = before
    good = held.copy()
    good[where] = unprotected[where] & (cols.bucket[where] == Bucket.GOOD)
    return good


def _first_in_order(order: IntArray, wanted: npt.NDArray[np.bool_], count: int) -> IntArray:
    """The first ``count`` positions of ``order`` where ``wanted`` holds.

    Reads the order in growing chunks: a decision takes a prefix, so it should
    not look at every member.
    """
    found: list[IntArray] = []
    start, step, missing = 0, max(2 * count, 1024), count
    while missing > 0 and start < len(order):
        chunk = order[start : start + step]
        hits = chunk[wanted[chunk]][:missing]
        found.append(hits)
        missing -= len(hits)
        start, step = start + step, 2 * step
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _cached(cols: NodeColumns, name: str, build: Callable[[], npt.NDArray[np.generic]]) -> Any:
    return cols.derived.get_or_build(name, build)


def _broken_in_order(cols: NodeColumns, criteria: Criteria) -> IntArray:
    """Every broken member (protected too), by bucket and then by the kept order."""
    order = kept_order(cols, criteria)
    place = _cached(cols, _PLACE + criteria.value, lambda: _places(order))
    before = cols.derived.get(_BEFORE + _BROKEN + criteria.value, tuple)
    if before is not None:
        return _broken_updated(cols, order, place, *before)
    return _by_rank_and_place(cols, order, place, np.flatnonzero(cols.bucket < Bucket.GOOD))


def _by_rank_and_place(
    cols: NodeColumns, order: IntArray, place: npt.NDArray[np.int32], positions: IntArray
) -> IntArray:
    """``positions`` sorted by removal rank, then by place in ``order``.

    One integer key (rank above, place below; places are unique) sorted by value, its
    positions read back through ``order``: a third of the cost of an argsort of it.
    """
    wide = len(cols) >= 1 << 28  # ranks take 3 bits: then an int32 no longer holds both
    key: npt.NDArray[np.signedinteger[Any]] = cols.bucket[positions].astype(
        np.int64 if wide else np.int32
    )
    key <<= 32 if wide else 28
    key |= place[positions]
    key.sort()
    key &= (1 << (32 if wide else 28)) - 1
    result: IntArray = order[key]
    return result


def _broken_updated(
    cols: NodeColumns,
    order: IntArray,
    place: npt.NDArray[np.int32],
    held: IntArray,
    where: IntArray,
) -> IntArray:
    """The broken members of ``cols`` from ``held``, those of a table whose members differ
    only in the removal rank of those at ``where`` (``carry_for_states``): the others stay
    where they were, the changed ones that are broken now are merged in.
    """
    changed = np.zeros(len(cols), dtype=bool)
    changed[where] = True
    stay = held[~changed[held]]
    now = _by_rank_and_place(cols, order, place, where[cols.bucket[where] < Bucket.GOOD])
    at = np.searchsorted(_rank_and_place(cols, place, stay), _rank_and_place(cols, place, now))
    result: IntArray = np.insert(stay, at, now)
    return result


def _rank_and_place(
    cols: NodeColumns, place: npt.NDArray[np.int32], positions: IntArray
) -> npt.NDArray[np.int64]:
    """Each member's removal rank and place as one sortable integer."""
    key = cols.bucket[positions].astype(np.int64)
    key <<= 32
    key |= place[positions]
    return key


def _places(order: IntArray) -> npt.NDArray[np.int32]:
    """Each member's place in ``order`` (kept beside it: a table patched with new states
    carries both, and its broken members are then sorted without a pass over every member)."""
    place = np.empty(len(order), dtype=np.int32)
    place[order] = np.arange(len(order), dtype=np.int32)
    return place


def rank_kept(
    cols: NodeColumns, criteria: Criteria, pool: IntArray | None, count: int
) -> tuple[IntArray, int]:
    """``ranking.rank_columns`` for a criterion whose order is kept on ``cols``.

    Per table (cached): the kept order, the broken members in ranking order, and
    the good unprotected members. Per decision: the eligible broken members, then
    a walk along the order for the good ones.
    """
    unprotected = _cached(cols, "unprotected", lambda: ~cols.protected)
    good = _cached(cols, _GOOD, lambda: _good_members(cols, unprotected))
    eligible = unprotected
    if pool is not None:
        eligible = np.zeros(len(cols), dtype=bool)
        eligible[pool] = True
        eligible &= unprotected
        good = good & eligible
    take = min(max(count, 0), int(np.count_nonzero(eligible)))
    if not take:
        return _NOTHING, max(count, 0)
    broken = _cached(cols, _BROKEN + criteria.value, lambda: _broken_in_order(cols, criteria))
    broken = broken[eligible[broken]][:take]
    order = kept_order(cols, criteria)
    chosen = np.concatenate((broken, _first_in_order(order, good, take - len(broken))))
    return chosen, max(count, 0) - take
