"""The one victim ranking every shrink uses (scale-in, resize, deletion policy, preview).

Order, most removable first:

1. broken members, by severity: status ERROR, status WARNING, marked unhealthy
   (health CHECK_FAILED), tainted, never created (``created_at`` is None);
2. then everyone else;

and inside each of those ranks: lower ``deletion_cost`` first, then the
criterion (OLDEST_FIRST: ``created_at`` ascending; YOUNGEST_FIRST: descending;
OLDEST_PROFILE_FIRST: ``profile_created_at`` ascending; RANDOM: a permutation
drawn from ``seed``), then ``created_at``, ``index`` and ``id``. Protected
members are never chosen.

It works on columns (numpy arrays). RANDOM (whose order depends on the action's
seed) selects the top ``count`` with partitions instead of a full sort. The age
criteria sort every member once per member table and keep that order on the
columns (:func:`kept_order`); a later decision on the same members, or on a
table patched from it, walks the kept order instead of ranking again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from herd.domain.snapshots import NodeSnapshot
from herd.policies.columns import Bucket, FloatArray, IntArray, NodeColumns, columns_of
from herd.policies.victims import RankResult, Victims, shortfall_text
from herd.types import Criteria

BUCKET_RULES = {
    Bucket.ERROR: "status ERROR",
    Bucket.WARNING: "status WARNING",
    Bucket.UNHEALTHY: "marked unhealthy (CHECK_FAILED)",
    Bucket.TAINTED: "tainted",
    Bucket.NEVER_CREATED: "never created",
}


#: A sort key evaluated lazily for some members (None: all of them, uncopied).
KeyFn = Callable[[IntArray | None], npt.NDArray[Any]]


def _column(values: npt.NDArray[Any]) -> KeyFn:
    return lambda pos: values if pos is None else values[pos]


def _key_functions(cols: NodeColumns, criteria: Criteria, seed: int) -> list[KeyFn]:
    """Sort keys, most significant first; ids are the last resort (``_full_sort``).

    Keys are evaluated only for the members a partition leaves in play, so a
    criterion (or a tie-break) costs nothing when the broken rank fills the count.
    """
    created, index = _column(cols.created_at), _column(cols.index)
    criterion: KeyFn
    if criteria is Criteria.OLDEST_FIRST:
        criterion = lambda pos: _nan_last(created(pos))  # noqa: E731
    elif criteria is Criteria.YOUNGEST_FIRST:
        criterion = lambda pos: _nan_last(-created(pos))  # noqa: E731
    elif criteria is Criteria.OLDEST_PROFILE_FIRST:
        profile = _column(cols.profile_created_at)
        criterion = lambda pos: _nan_last(profile(pos))  # noqa: E731
    else:
        # A keyed hash of the member index rather than a draw in input order:
        # a replay over the same members picks the same victims.
        criterion = lambda pos: _mix(index(pos), seed)  # noqa: E731
    return [
        _column(cols.bucket),
        _column(cols.deletion_cost),
        criterion,
        lambda pos: _nan_last(created(pos)),
        index,
    ]


_MASK64 = (1 << 64) - 1


def _splitmix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """splitmix64's finaliser, in place (wrapping uint64 arithmetic)."""
    z += np.uint64(0x9E3779B97F4A7C15)
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def _mix(index: IntArray, seed: int) -> npt.NDArray[np.uint64]:
    """A seeded pseudo-random permutation key per member index."""
    key = _splitmix64(np.array([seed & _MASK64], dtype=np.uint64))[0]
    mixed = index.astype(np.uint64)
    mixed ^= key
    return _splitmix64(mixed)


def _nan_last(values: FloatArray) -> FloatArray:
    """Replace NaN (never created, unknown profile age) by +inf: it sorts last."""
    missing = np.isnan(values)
    if not missing.any():
        return values
    values = values.copy()
    values[missing] = np.inf
    return values


def _by_id(positions: IntArray, ids: Sequence[str]) -> IntArray:
    return np.asarray(sorted(positions.tolist(), key=ids.__getitem__), dtype=np.int64)


def _full_sort(pos: IntArray, keys: list[KeyFn], ids: Sequence[str]) -> IntArray:
    """Sort ``pos`` by every key, then by id."""
    if len(pos) <= 1:
        return pos
    if not keys:
        return _by_id(pos, ids)
    values = [key(pos) for key in keys]
    order = np.lexsort(values[::-1])
    ordered = pos[order]
    same = np.ones(len(ordered) - 1, dtype=bool)
    for column in values:
        sorted_column = column[order]
        same &= sorted_column[1:] == sorted_column[:-1]
    if same.any():
        # Rare: members equal on every numeric key fall back to their ids.
        starts = np.flatnonzero(~np.concatenate(([False], same)))
        ends = np.append(starts[1:], len(ordered))
        ordered = np.concatenate(
            [_by_id(ordered[s:e], ids) for s, e in zip(starts, ends, strict=True)]
        )
    return ordered


def _top(
    pos: IntArray | None, size: int, keys: list[KeyFn], k: int, ids: Sequence[str]
) -> IntArray:
    """The first ``k`` of ``pos`` (None: all ``size`` members) in key order.

    Partitions on one key at a time and sorts only what is surely chosen.
    """
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if pos is None and k >= size:
        pos = np.arange(size, dtype=np.int64)
    if pos is not None and k >= len(pos):
        return _full_sort(pos, keys, ids)
    while keys:
        first = keys[0](pos)
        if first.min() != first.max():
            break
        # A key that is the same for every candidate cannot order them.
        keys = keys[1:]
    else:
        every = np.arange(size, dtype=np.int64) if pos is None else pos
        return _by_id(every, ids)[:k]
    threshold = np.partition(first, k - 1)[k - 1]
    ahead, tied = first < threshold, first == threshold
    ahead_pos = np.flatnonzero(ahead) if pos is None else pos[ahead]
    tied_pos = np.flatnonzero(tied) if pos is None else pos[tied]
    head = _full_sort(ahead_pos, keys, ids)
    return np.concatenate((head, _top(tied_pos, len(tied_pos), keys[1:], k - len(head), ids)))


def _victims(cols: NodeColumns, chosen: IntArray, criteria: Criteria, suffix: str = "") -> Victims:
    """``chosen`` (as :func:`rank_columns` ranked them) with the rule that chose each."""
    texts = [BUCKET_RULES.get(bucket, criteria.value) + suffix for bucket in Bucket]
    node_ids = map(cols.ids.__getitem__, chosen.tolist())
    buckets = cols.bucket[chosen]
    # Ranked: the broken members come first, and the rest share the criterion's rule.
    broken = int(np.count_nonzero(buckets < Bucket.GOOD))
    head = list(map(texts.__getitem__, buckets[:broken].tolist()))
    return Victims(node_ids, head + [texts[Bucket.GOOD]] * (len(buckets) - broken))


#: Criteria whose order depends on the members alone, so it can be kept between decisions.
KEPT_CRITERIA = frozenset(
    (Criteria.OLDEST_FIRST, Criteria.YOUNGEST_FIRST, Criteria.OLDEST_PROFILE_FIRST)
)
_ORDER = "order-"
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
    order: IntArray | None = cols._cache.get(name)
    if order is None:
        keys = _key_functions(cols, criteria, 0)[1:]  # [0] is the bucket, [-1] the index
        index = cols.index
        # A member table is in index order, and indexes are unique: then ties go by
        # position, which is the index, and no two members tie on every key.
        by_position = len(index) > 1 and bool((index[1:] > index[:-1]).all())
        values: list[npt.NDArray[Any]] = []
        for key in keys[:-1] if by_position else keys:
            value = key(None)
            # A key equal for every member (deletion_cost, usually) cannot order them,
            # nor can one equal to the key before it (OLDEST_FIRST's created_at, twice).
            if value.min() != value.max() and not (values and np.array_equal(value, values[-1])):
                values.append(value)
        if by_position:
            order = _by_keys_then_position(values, len(cols))
        else:
            order = _full_sort(np.arange(len(cols), dtype=np.int64), list(map(_column, values)),
                               cols.ids)  # fmt: skip
        cols._cache[name] = order
    return order


def _by_keys_then_position(values: list[npt.NDArray[Any]], size: int) -> IntArray:
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


def _ties_by_position(order: IntArray, ordered: npt.NDArray[Any]) -> IntArray:
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
    # list() copies the items in one step: another decision may be adding to the cache.
    orders = {name: value for name, value in list(held._cache.items()) if name.startswith(_ORDER)}
    if kept is not None:
        new_position = np.cumsum(kept) - 1  # of each kept member; the others are dropped
        orders = {name: new_position[order[kept[order]]] for name, order in orders.items()}
    into._cache.update(orders)


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


def _cached(cols: NodeColumns, name: str, build: Callable[[], npt.NDArray[Any]]) -> Any:
    value = cols._cache.get(name)
    if value is None:
        value = cols._cache[name] = build()
    return value


def _broken_in_order(cols: NodeColumns, criteria: Criteria) -> IntArray:
    """Every broken member (protected too), by bucket and then by the kept order."""
    order = kept_order(cols, criteria)
    broken = np.flatnonzero(cols.bucket < Bucket.GOOD)
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order), dtype=np.int64)
    result: IntArray = broken[np.lexsort((place[broken], cols.bucket[broken]))]
    return result


def _rank_kept(
    cols: NodeColumns, criteria: Criteria, pool: IntArray | None, count: int
) -> tuple[IntArray, int]:
    """:func:`rank_columns` for a criterion whose order is kept on ``cols``.

    Per table (cached): the kept order, the broken members in ranking order, and
    the good unprotected members. Per decision: the eligible broken members, then
    a walk along the order for the good ones.
    """
    unprotected = _cached(cols, "unprotected", lambda: ~cols.protected)
    good = _cached(cols, "good", lambda: unprotected & (cols.bucket == Bucket.GOOD))
    eligible = unprotected
    if pool is not None:
        eligible = np.zeros(len(cols), dtype=bool)
        eligible[pool] = True
        eligible &= unprotected
        good = good & eligible
    take = min(max(count, 0), int(np.count_nonzero(eligible)))
    if not take:
        return _NOTHING, max(count, 0)
    broken = _cached(cols, "broken-" + criteria.value, lambda: _broken_in_order(cols, criteria))
    broken = broken[eligible[broken]][:take]
    order = kept_order(cols, criteria)
    chosen = np.concatenate((broken, _first_in_order(order, good, take - len(broken))))
    return chosen, max(count, 0) - take


def rank_columns(
    cols: NodeColumns, count: int, criteria: Criteria, seed: int, pool: IntArray | None = None
) -> tuple[IntArray, int]:
    """Rank positions of ``cols`` (or of ``pool``); protected members are skipped.

    Returns:
        The chosen positions in removal order and the shortfall (count not met).
    """
    criteria = Criteria(criteria)
    if criteria in KEPT_CRITERIA:
        return _rank_kept(cols, criteria, pool, count)
    if pool is not None:
        pool = pool[~cols.protected[pool]]
    elif cols.protected.any():
        pool = np.flatnonzero(~cols.protected)
    size = len(cols) if pool is None else len(pool)
    take = min(max(count, 0), size)
    keys = _key_functions(cols, criteria, seed)
    chosen = _top(pool, size, keys, take, cols.ids)
    return chosen, max(count, 0) - take


def rank_victims(
    nodes: Sequence[NodeSnapshot] | NodeColumns, count: int, criteria: Criteria, seed: int
) -> RankResult:
    """Choose ``count`` members to remove, most removable first.

    Args:
        nodes: The candidate members (snapshots, or columns built once).
        count: How many to choose.
        criteria: The deletion criterion applied after the broken ranks.
        seed: Seed for RANDOM, so that a decision can be replayed.

    Returns:
        The victims in order, each with the rule that chose it. When fewer than
        ``count`` unprotected members exist, all of them are returned with the
        shortfall and a reason.
    """
    cols = columns_of(nodes)
    criteria = Criteria(criteria)
    chosen, shortfall = rank_columns(cols, count, criteria, seed)
    victims = _victims(cols, chosen, criteria)
    error = shortfall_text(count, len(victims)) if shortfall else None
    return RankResult(victims, max(count, 0), shortfall, error)


def rank_victims_by_group(
    nodes: Sequence[NodeSnapshot] | NodeColumns,
    quotas: Mapping[str, int],
    key: Literal["zone", "region"],
    criteria: Criteria,
    seed: int,
) -> RankResult:
    """Choose victims per zone or region, as a placement policy asked.

    Groups are visited in sorted name order and each gives up to its quota.
    Unlike Senlin (which crashed), a quota larger than a group's unprotected
    members is clamped and the remainder is taken, in the same ranking order,
    from the other listed groups' remaining members, then from members outside
    the listed groups. The total never exceeds the members.

    Args:
        nodes: The cluster's members.
        quotas: Victims wanted per group name.
        key: ``"zone"`` or ``"region"``: which member attribute names the group.
        criteria: The deletion criterion.
        seed: Seed for RANDOM.
    """
    cols = columns_of(nodes)
    criteria = Criteria(criteria)
    codes, code_of = cols.group_codes(key)
    names = sorted(name for name, wanted in quotas.items() if wanted > 0)
    requested = sum(max(quotas[name], 0) for name in names)
    parts: list[Victims] = []
    chosen_count = 0
    taken = np.zeros(len(cols), dtype=bool)
    for name in names:
        members = np.flatnonzero(codes == code_of.get(name, -1))
        chosen, _ = rank_columns(cols, quotas[name], criteria, seed, members)
        taken[chosen] = True
        parts.append(_victims(cols, chosen, criteria, f" ({key} {name})"))
        chosen_count += len(chosen)
    for outside in (False, True):
        missing = requested - chosen_count
        if missing <= 0:
            break
        labels = cols.labels(key)
        listed = np.isin(codes, [code_of[name] for name in names if name in code_of])
        pool = np.flatnonzero(~taken & (~listed if outside else listed))
        chosen, _ = rank_columns(cols, missing, criteria, seed, pool)
        taken[chosen] = True
        ranked = _victims(cols, chosen, criteria)
        rules = [
            f"{rule} ({key} {labels[p]}, redistributed)"
            for rule, p in zip(ranked.rules, chosen.tolist(), strict=True)
        ]
        parts.append(Victims(ranked.node_ids, rules))
        chosen_count += len(chosen)
    victims = Victims.joined(parts)
    shortfall = requested - len(victims)
    error = shortfall_text(requested, len(victims)) if shortfall else None
    return RankResult(victims, requested, shortfall, error)
