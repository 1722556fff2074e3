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

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from herd.domain.snapshots import NodeSnapshot
from herd.json_types import int_value
from herd.policies.columns import Bucket, IntArray, NodeColumns, columns_of
from herd.policies.kept_order import KEPT_CRITERIA, rank_kept
from herd.policies.rank_keys import KeyFn, by_id, full_sort, key_functions
from herd.policies.victims import RankResult, Victims, shortfall_text
from herd.types import Criteria

# What the tests import from here.
__all__ = ["KEPT_CRITERIA", "rank_columns", "rank_victims", "rank_victims_by_group"]

BUCKET_RULES = {
    Bucket.ERROR: "status ERROR",
    Bucket.WARNING: "status WARNING",
    Bucket.UNHEALTHY: "marked unhealthy (CHECK_FAILED)",
    Bucket.TAINTED: "tainted",
    Bucket.NEVER_CREATED: "never created",
}


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
        return full_sort(pos, keys, ids)
    while keys:
        first = keys[0](pos)
        if first.min() != first.max():
            break
        # A key that is the same for every candidate cannot order them.
        keys = keys[1:]
    else:
        every = np.arange(size, dtype=np.int64) if pos is None else pos
        return by_id(every, ids)[:k]
    threshold = np.partition(first, k - 1)[k - 1]
    ahead, tied = first < threshold, first == threshold
    ahead_pos = np.flatnonzero(ahead) if pos is None else pos[ahead]
    tied_pos = np.flatnonzero(tied) if pos is None else pos[tied]
    head = full_sort(ahead_pos, keys, ids)
    return np.concatenate((head, _top(tied_pos, len(tied_pos), keys[1:], k - len(head), ids)))


def _victims(cols: NodeColumns, chosen: IntArray, criteria: Criteria, suffix: str = "") -> Victims:
    """``chosen`` (as :func:`rank_columns` ranked them) with the rule that chose each: a
    broken member's rank names it, the others share the criterion's (kept as positions and
    codes until read, see ``victims.py``)."""
    texts = [BUCKET_RULES.get(bucket, criteria.value) + suffix for bucket in Bucket]
    return Victims.at_positions(cols.id_objects(), chosen, texts, cols.bucket[chosen])


def rank_columns(
    cols: NodeColumns, count: int, criteria: Criteria, seed: int, pool: IntArray | None = None
) -> tuple[IntArray, int]:
    """Rank positions of ``cols`` (or of ``pool``); protected members are skipped.

    Returns:
        The chosen positions in removal order and the shortfall (count not met).
    """
    criteria = Criteria(criteria)
    if criteria in KEPT_CRITERIA:
        return rank_kept(cols, criteria, pool, count)
    if pool is not None:
        pool = pool[~cols.protected[pool]]
    elif cols.protected.any():
        pool = np.flatnonzero(~cols.protected)
    size = len(cols) if pool is None else len(pool)
    take = min(max(count, 0), size)
    keys = key_functions(cols, criteria, seed)
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


def group_counts(value: object) -> Mapping[str, int] | None:
    """An earlier policy's per-group counts (``data['deletion']['zones']`` or
    ``['regions']``: name -> count), or None when ``value`` is no map."""
    if not isinstance(value, Mapping):
        return None
    return {str(name): int_value(count) for name, count in value.items()}


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
