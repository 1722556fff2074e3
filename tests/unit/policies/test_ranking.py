"""The victim ranking: Senlin's selectors' cases, herd's additions, and properties."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herd.domain.snapshots import NodeSnapshot
from herd.policies.columns import Bucket, NodeColumns
from herd.policies.rank_keys import key_functions
from herd.policies.ranking import (
    KEPT_CRITERIA,
    _top,
    rank_columns,
    rank_victims,
    rank_victims_by_group,
)
from herd.types import Criteria, HealthStatus, NodeStatus

Node = Callable[..., NodeSnapshot]


def senlin_nodes(node: Node) -> list[NodeSnapshot]:
    """test_common_scaleutils' fixture: four bad nodes among nine."""
    return [
        node(1, created_at=40.0, profile_created_at=4.0),
        node(2, status=NodeStatus.ERROR, created_at=10.0),
        node(3, created_at=20.0, profile_created_at=1.0),
        node(4, status=NodeStatus.WARNING, created_at=30.0),
        node(5, created_at=50.0, profile_created_at=3.0),
        node(6, tainted=True, created_at=60.0),
        node(7, created_at=None, status=NodeStatus.CREATING),
        node(8, created_at=70.0, profile_created_at=2.0),
        node(9, created_at=5.0, profile_created_at=5.0),
    ]


def test_broken_members_go_first_in_severity_order(node: Node) -> None:
    nodes = senlin_nodes(node)
    nodes.append(node(10, health=HealthStatus.CHECK_FAILED, created_at=1.0))
    result = rank_victims(nodes, 5, Criteria.OLDEST_FIRST, seed=0)
    assert result.node_ids == ["N2", "N4", "N10", "N6", "N7"]
    assert [v.rule for v in result.victims] == [
        "status ERROR",
        "status WARNING",
        "marked unhealthy (CHECK_FAILED)",
        "tainted",
        "never created",
    ]


def test_count_within_bad_bucket_returns_a_prefix(node: Node) -> None:
    result = rank_victims(senlin_nodes(node), 2, Criteria.RANDOM, seed=7)
    assert result.node_ids == ["N2", "N4"]


def test_random_takes_all_bad_then_random_good(node: Node) -> None:
    result = rank_victims(senlin_nodes(node), 6, Criteria.RANDOM, seed=7)
    assert result.node_ids[:4] == ["N2", "N4", "N6", "N7"]
    assert len(set(result.node_ids)) == 6
    assert {v.rule for v in result.victims[4:]} == {"RANDOM"}


def test_oldest_first(node: Node) -> None:
    result = rank_victims(senlin_nodes(node), 7, Criteria.OLDEST_FIRST, seed=0)
    assert result.node_ids == ["N2", "N4", "N6", "N7", "N9", "N3", "N1"]


def test_youngest_first(node: Node) -> None:
    result = rank_victims(senlin_nodes(node), 7, Criteria.YOUNGEST_FIRST, seed=0)
    assert result.node_ids == ["N2", "N4", "N6", "N7", "N8", "N5", "N1"]


def test_oldest_profile_first(node: Node) -> None:
    result = rank_victims(senlin_nodes(node), 7, Criteria.OLDEST_PROFILE_FIRST, seed=0)
    assert result.node_ids == ["N2", "N4", "N6", "N7", "N3", "N8", "N5"]


def test_protected_nodes_are_never_chosen(node: Node) -> None:
    nodes = [node(1, status=NodeStatus.ERROR, protected=True), node(2), node(3)]
    assert rank_victims(nodes, 2, Criteria.OLDEST_FIRST, 0).node_ids == ["N2", "N3"]


def test_shortfall_when_protection_leaves_too_few(node: Node) -> None:
    nodes = [node(1, protected=True), node(2), node(3)]
    result = rank_victims(nodes, 3, Criteria.OLDEST_FIRST, 0)
    assert result.node_ids == ["N2", "N3"]
    assert result.shortfall == 1
    assert result.error == "Cannot remove 3 nodes: only 2 unprotected members"


def test_lower_deletion_cost_goes_first_within_a_rank(node: Node) -> None:
    nodes = [node(1, deletion_cost=5.0), node(2, deletion_cost=1.0), node(3)]
    nodes.append(node(4, status=NodeStatus.ERROR, deletion_cost=9.0))
    assert rank_victims(nodes, 4, Criteria.OLDEST_FIRST, 0).node_ids == ["N4", "N3", "N2", "N1"]


def test_ties_break_by_created_at_then_index_then_id(node: Node) -> None:
    nodes = [
        node(3, id="b", created_at=1.0, profile_created_at=None),
        node(3, id="a", created_at=1.0, profile_created_at=None),
        node(1, id="z", created_at=1.0, profile_created_at=None),
        node(9, id="y", created_at=0.5, profile_created_at=None),
    ]
    result = rank_victims(nodes, 4, Criteria.OLDEST_PROFILE_FIRST, 0)
    assert result.node_ids == ["y", "z", "a", "b"]


def test_random_is_deterministic_for_a_seed_and_input_order(node: Node) -> None:
    nodes = [node(i) for i in range(1, 50)]
    first = rank_victims(nodes, 10, Criteria.RANDOM, seed=3).node_ids
    assert rank_victims(list(reversed(nodes)), 10, Criteria.RANDOM, seed=3).node_ids == first
    assert rank_victims(nodes, 10, Criteria.RANDOM, seed=4).node_ids != first


def test_columns_from_arrays_match_snapshots(node: Node) -> None:
    nodes = senlin_nodes(node)
    cols = NodeColumns.from_arrays(
        [n.id for n in nodes],
        index=[n.index for n in nodes],
        status=np.array([n.status.value for n in nodes]),
        tainted=[n.tainted for n in nodes],
        created_at=[n.created_at for n in nodes],
        profile_created_at=[n.profile_created_at for n in nodes],
    )
    assert cols.bucket.tolist()[:4] == [Bucket.GOOD, Bucket.ERROR, Bucket.GOOD, Bucket.WARNING]
    for criteria in Criteria:
        assert rank_victims(cols, 6, criteria, 1) == rank_victims(nodes, 6, criteria, 1)


def test_empty_and_zero_count(node: Node) -> None:
    assert rank_victims([], 0, Criteria.RANDOM, 0).victims == []
    assert rank_victims([node(1)], 0, Criteria.RANDOM, 0).victims == []
    assert (
        rank_victims([], 1, Criteria.RANDOM, 0).error
        == "Cannot remove 1 node: only 0 unprotected members"
    )


def zoned(node: Node) -> list[NodeSnapshot]:
    return [node(i, zone=("AZ1", "AZ2", "AZ8")[i % 3]) for i in range(1, 10)]


def test_by_zone_sorted_order_and_counts(node: Node) -> None:
    result = rank_victims_by_group(
        zoned(node), {"AZ8": 1, "AZ1": 2}, "zone", Criteria.OLDEST_FIRST, 0
    )
    assert result.node_ids == ["N3", "N6", "N2"]
    assert result.victims[0].rule == "OLDEST_FIRST (zone AZ1)"


def test_by_zone_shortfall_is_clamped_and_redistributed(node: Node) -> None:
    nodes = zoned(node)  # AZ1: N3 N6 N9; AZ2: N1 N4 N7; AZ8: N2 N5 N8
    result = rank_victims_by_group(nodes, {"AZ1": 5}, "zone", Criteria.OLDEST_FIRST, 0)
    assert result.error is None
    assert result.node_ids == ["N3", "N6", "N9", "N1", "N2"]
    assert result.victims[3].rule == "OLDEST_FIRST (zone AZ2, redistributed)"


def test_by_region_total_never_exceeds_members(node: Node) -> None:
    nodes = [node(i, region="R1") for i in range(1, 4)]
    result = rank_victims_by_group(nodes, {"R1": 5}, "region", Criteria.RANDOM, 0)
    assert len(result.victims) == 3
    assert result.error == "Cannot remove 5 nodes: only 3 unprotected members"


# -- properties ------------------------------------------------------------

STATUSES = [NodeStatus.ACTIVE, NodeStatus.ACTIVE, NodeStatus.ERROR, NodeStatus.WARNING]


def _node(i: int, fields: tuple[Any, ...]) -> NodeSnapshot:
    index, status, health, created, profile, zone, protected, cost, tainted = fields
    return NodeSnapshot(
        id=f"N{i:03d}",
        name=f"n{i}",
        index=index,
        status=status,
        health=health,
        created_at=created,
        profile_created_at=profile,
        zone=zone,
        protected=protected,
        deletion_cost=cost,
        tainted=tainted,
    )


_fields = st.tuples(
    st.integers(1, 8),
    st.sampled_from(STATUSES),
    st.sampled_from(list(HealthStatus)),
    st.one_of(st.none(), st.integers(0, 5).map(float)),
    st.one_of(st.none(), st.integers(0, 3).map(float)),
    st.sampled_from(["AZ1", "AZ2", "AZ3", None]),
    st.booleans(),
    st.sampled_from([0.0, 0.0, 1.0]),
    st.booleans(),
)


def members() -> st.SearchStrategy[list[NodeSnapshot]]:
    return st.lists(_fields, max_size=30).map(
        lambda rows: [_node(i, r) for i, r in enumerate(rows)]
    )


criteria_st = st.sampled_from(list(Criteria))


@settings(max_examples=100, deadline=None)
@given(members(), st.integers(0, 35), criteria_st, st.integers(0, 2**32))
def test_property_protection_count_and_determinism(
    nodes: list[NodeSnapshot], count: int, criteria: Criteria, seed: int
) -> None:
    result = rank_victims(nodes, count, criteria, seed)
    chosen = result.node_ids
    unprotected = [n for n in nodes if not n.protected]
    assert len(chosen) == len(set(chosen)) == min(count, len(unprotected))
    assert len(chosen) <= len(nodes)
    assert not any(n.protected for n in nodes if n.id in chosen)
    assert result.shortfall == count - len(chosen)
    assert rank_victims(nodes, count, criteria, seed) == result


@settings(max_examples=100, deadline=None)
@given(members(), st.integers(0, 35), criteria_st, st.integers(0, 1000))
def test_property_broken_members_first(
    nodes: list[NodeSnapshot], count: int, criteria: Criteria, seed: int
) -> None:
    cols = NodeColumns.from_nodes(nodes)
    bucket_of = {n.id: int(b) for n, b in zip(nodes, cols.bucket.tolist(), strict=True)}
    chosen = rank_victims(nodes, count, criteria, seed).node_ids
    buckets = [bucket_of[i] for i in chosen]
    assert buckets == sorted(buckets)
    if chosen:
        worst = max(buckets)
        left = [bucket_of[n.id] for n in nodes if not n.protected and n.id not in chosen]
        assert all(b >= worst for b in left)


@settings(max_examples=100, deadline=None)
@given(
    members(),
    st.dictionaries(st.sampled_from(["AZ1", "AZ2", "AZ3"]), st.integers(0, 6), max_size=3),
    criteria_st,
    st.integers(0, 1000),
)
def test_property_per_zone_counts(
    nodes: list[NodeSnapshot], quotas: dict[str, int], criteria: Criteria, seed: int
) -> None:
    result = rank_victims_by_group(nodes, quotas, "zone", criteria, seed)
    chosen = result.node_ids
    by_id = {n.id: n for n in nodes}
    eligible = Counter(n.zone for n in nodes if not n.protected)
    per_zone = Counter(by_id[i].zone for i in chosen)
    assert len(chosen) == len(set(chosen)) <= len(nodes)
    assert not any(by_id[i].protected for i in chosen)
    requested = sum(quotas.values())
    assert len(chosen) == min(requested, sum(eligible.values()))
    for zone, wanted in quotas.items():
        # Each zone gives its quota when it can, never less than it could.
        assert per_zone[zone] >= min(wanted, eligible[zone])
    if all(wanted <= eligible[zone] for zone, wanted in quotas.items()):
        assert {z: per_zone[z] for z in quotas} == quotas


_SEVERITY = {NodeStatus.ERROR: 0, NodeStatus.WARNING: 1}


def _oracle_key(node: NodeSnapshot, criteria: Criteria) -> tuple[Any, ...]:
    """The documented order, written as one plain sort key (age criteria only)."""
    if node.status in _SEVERITY:
        bucket = _SEVERITY[node.status]
    elif node.health is HealthStatus.CHECK_FAILED:
        bucket = 2
    elif node.tainted:
        bucket = 3
    else:
        bucket = 4 if node.created_at is None else 5
    created = math.inf if node.created_at is None else node.created_at
    if criteria is Criteria.OLDEST_FIRST:
        first = created
    elif criteria is Criteria.YOUNGEST_FIRST:
        first = math.inf if node.created_at is None else -node.created_at
    else:
        first = math.inf if node.profile_created_at is None else node.profile_created_at
    return (bucket, node.deletion_cost, first, created, node.index, node.id)


age_criteria_st = st.sampled_from(
    [Criteria.OLDEST_FIRST, Criteria.YOUNGEST_FIRST, Criteria.OLDEST_PROFILE_FIRST]
)


@settings(max_examples=300, deadline=None)
@given(members(), st.integers(0, 35), age_criteria_st, st.sets(st.integers(0, 29)), st.booleans())
def test_property_kept_order_equals_the_documented_sort(
    nodes: list[NodeSnapshot], count: int, criteria: Criteria, pool_at: set[int], table: bool
) -> None:
    """The age criteria walk an order kept on the columns; it must be the documented one.

    ``table``: the members come in index order with unique indexes, as a member table
    holds them (the order is then sorted by the keys and position alone).
    """
    if table:
        nodes = [replace(n, index=i + 1) for i, n in enumerate(nodes)]
    cols = NodeColumns.from_nodes(nodes)
    expected = sorted((n for n in nodes if not n.protected), key=lambda n: _oracle_key(n, criteria))
    for _ in range(2):  # the second decision reuses the order the first one kept
        assert rank_victims(cols, count, criteria, 0).node_ids == [n.id for n in expected[:count]]
    pool = np.asarray(sorted(i for i in pool_at if i < len(nodes)), dtype=np.int64)
    chosen, shortfall = rank_columns(cols, count, criteria, 0, pool)
    in_pool = [n for n in expected if nodes.index(n) in pool_at]
    assert [nodes[p].id for p in chosen.tolist()] == [n.id for n in in_pool[:count]]
    assert shortfall == max(count - len(in_pool), 0)


@settings(max_examples=100, deadline=None)
@given(members(), st.integers(0, 35), criteria_st, st.integers(0, 1000))
def test_property_kept_order_equals_the_partition(
    nodes: list[NodeSnapshot], count: int, criteria: Criteria, seed: int
) -> None:
    """The kept order (age criteria) and the partitions (RANDOM) agree, ties by id included."""
    cols = NodeColumns.from_nodes(nodes)
    pool = None if not cols.protected.any() else np.flatnonzero(~cols.protected)
    size = len(cols) if pool is None else len(pool)
    take = min(count, size)
    by_partition = _top(pool, size, key_functions(cols, criteria, seed), take, cols.ids)
    by_kept_order = rank_columns(cols, count, criteria, seed)[0]
    assert by_kept_order.tolist() == by_partition.tolist()
    # RANDOM's order depends on the action's seed: it is never kept.
    kept = bool(cols.derived.with_prefix("order-"))
    assert kept == (criteria in KEPT_CRITERIA and take > 0)
