"""Senlin's resize arithmetic (mirrors senlin/tests/unit/test_common_scaleutils.py)."""

from __future__ import annotations

import re

import pytest

from herd.domain.sizing import (
    SizeBounds,
    calculate_desired,
    check_size_params,
    parse_resize,
    truncate_desired,
)
from herd.types import AdjustmentType

EXACT = AdjustmentType.EXACT_CAPACITY
CHANGE = AdjustmentType.CHANGE_IN_CAPACITY
PCT = AdjustmentType.CHANGE_IN_PERCENTAGE


def test_exact_capacity_ignores_current() -> None:
    assert calculate_desired(5, EXACT, 1, None) == 1
    assert calculate_desired(100, EXACT, 1, None) == 1


def test_change_in_capacity_adds() -> None:
    assert calculate_desired(5, CHANGE, 1, None) == 6
    assert calculate_desired(5, CHANGE, -3, None) == 2


@pytest.mark.parametrize(
    ("number", "expected"),
    [(10, 11), (15, 11), (22, 12), (1, 11), (-10, 9), (-15, 9), (-22, 8), (-1, 9)],
)
def test_percentage_rounding(number: float, expected: int) -> None:
    assert calculate_desired(10, PCT, number, None) == expected


@pytest.mark.parametrize("min_step", [0, 1])
@pytest.mark.parametrize(
    ("number", "expected"), [(10, 11), (-10, 9), (1, 11), (-1, 9), (22, 12), (-22, 8)]
)
def test_percentage_small_min_step_is_no_min_step(
    min_step: int, number: int, expected: int
) -> None:
    assert calculate_desired(10, PCT, number, min_step) == expected


@pytest.mark.parametrize(("number", "expected"), [(10, 12), (-10, 8), (1, 12), (-1, 8)])
def test_percentage_min_step_two(number: int, expected: int) -> None:
    assert calculate_desired(10, PCT, number, 2) == expected


def test_percentage_zero_change_with_min_step_shrinks() -> None:
    # Senlin's sign rule: rounded == 0 counts as negative.
    assert calculate_desired(10, PCT, 0, 2) == 8


CLUSTER_10_50 = SizeBounds(min_size=10, max_size=50, desired_capacity=20)


@pytest.mark.parametrize(
    ("desired", "min_size", "max_size", "expected"),
    [
        (10, None, None, 10),
        (20, None, None, 20),
        (50, None, None, 50),
        (10, 20, None, 20),  # new min lifts
        (5, None, None, 10),  # cluster min lifts
        (60, None, -1, 60),  # new max -1: no cap
        (40, None, 30, 30),  # new max caps
        (60, None, None, 50),  # cluster max caps
    ],
)
def test_truncate_desired(
    desired: int, min_size: int | None, max_size: int | None, expected: int
) -> None:
    assert truncate_desired(CLUSTER_10_50, desired, min_size, max_size) == expected


def test_truncate_max_zero_is_a_cap_unlike_senlin() -> None:
    assert truncate_desired(SizeBounds(0, -1, 3), 3, None, 0) == 0
    assert truncate_desired(SizeBounds(0, 0, 0), 3, None, None) == 0


CLUSTER = SizeBounds(min_size=10, max_size=20, desired_capacity=15)

SIZE_SCENARIOS: list[tuple[str, int | None, int | None, int | None, bool, str | None]] = [
    # name, desired, min, max, strict, result
    (
        "10_15_x_x",
        10,
        15,
        None,
        True,
        "The target capacity (10) is less than the specified min_size (15).",
    ),
    (
        "5_x10_x_x",
        5,
        None,
        None,
        True,
        "The target capacity (5) is less than the cluster's min_size (10).",
    ),
    (
        "30_x_25_x",
        30,
        None,
        25,
        True,
        "The target capacity (30) is greater than the specified max_size (25).",
    ),
    (
        "30_x_x20_x",
        30,
        None,
        None,
        True,
        "The target capacity (30) is greater than the cluster's max_size (20).",
    ),
    (
        "x_20_18_x",
        None,
        20,
        18,
        True,
        "The specified min_size (20) is greater than the specified max_size (18).",
    ),
    (
        "x_25_x20_x",
        None,
        25,
        None,
        True,
        "The specified min_size (25) is greater than the current max_size (20) of the cluster.",
    ),
    (
        "x_20_x_x",
        None,
        20,
        None,
        True,
        "The specified min_size (20) is greater than the current desired_capacity (15) of the cluster.",  # noqa: E501
    ),
    (
        "x_x_5_x",
        None,
        None,
        5,
        True,
        "The specified max_size (5) is less than the current min_size (10) of the cluster.",
    ),
    (
        "x_x_14_x",
        None,
        None,
        14,
        True,
        "The specified max_size (14) is less than the current desired_capacity (15) of the cluster.",  # noqa: E501
    ),
    (
        "101_x_x_x",
        101,
        None,
        None,
        True,
        "The target capacity (101) is greater than the maximum number of nodes allowed per cluster (100).",  # noqa: E501
    ),
    (
        "x_x_101_x",
        None,
        None,
        101,
        True,
        "The specified max_size (101) is greater than the maximum number of nodes allowed per cluster (100).",  # noqa: E501
    ),
    (
        "101_x_x_n",
        101,
        None,
        None,
        False,
        "The target capacity (101) is greater than the maximum number of nodes allowed per cluster (100).",  # noqa: E501
    ),
    (
        "10_15_x_n",
        10,
        15,
        None,
        False,
        "The target capacity (10) is less than the specified min_size (15).",
    ),
    (
        "30_x_25_n",
        30,
        None,
        25,
        False,
        "The target capacity (30) is greater than the specified max_size (25).",
    ),
    (
        "x_25_x20_n",
        None,
        25,
        None,
        False,
        "The specified min_size (25) is greater than the current max_size (20) of the cluster.",
    ),
    (
        "x_x_5_n",
        None,
        None,
        5,
        False,
        "The specified max_size (5) is less than the current min_size (10) of the cluster.",
    ),
    # strict-only errors vanish when strict is False
    ("5_x10_x_n", 5, None, None, False, None),
    ("30_x_x20_n", 30, None, None, False, None),
    ("x_20_x_n", None, 20, None, False, None),
    ("x_x_14_n", None, None, 14, False, None),
    # OK cases
    ("15_x_x_x", 15, None, None, True, None),
    ("30_x_-1_x", 30, None, -1, True, None),
    ("15_15_x_x", 15, 15, None, True, None),
    ("18_x_18_x", 18, None, 18, True, None),
    ("x_x_x_x", None, None, None, True, None),
    ("x_x_-1_x", None, None, -1, True, None),
    ("12_5_40_x", 12, 5, 40, True, None),
]


def test_there_are_27_size_scenarios() -> None:
    assert len(SIZE_SCENARIOS) == 27
    templates = {re.sub(r"\(-?\d+\)", "(n)", s[5]) for s in SIZE_SCENARIOS if s[5]}
    assert len(templates) == 11


@pytest.mark.parametrize(
    ("desired", "min_size", "max_size", "strict", "result"),
    [s[1:] for s in SIZE_SCENARIOS],
    ids=[s[0] for s in SIZE_SCENARIOS],
)
def test_check_size_params(
    desired: int | None,
    min_size: int | None,
    max_size: int | None,
    strict: bool,
    result: str | None,
) -> None:
    assert check_size_params(CLUSTER, desired, min_size, max_size, strict, 100) == result


def test_check_size_params_non_strict_lets_desired_below_cluster_min() -> None:
    assert check_size_params(CLUSTER, 5, None, None, False, 100) is None


CLUSTER_6 = SizeBounds(min_size=0, max_size=-1, desired_capacity=6)


def test_parse_resize_shrink() -> None:
    inputs = {"adjustment_type": EXACT, "number": 4, "min_size": 3, "max_size": 10, "strict": True}
    plan = parse_resize(6, CLUSTER_6, inputs, 1000)
    assert plan.error is None
    assert plan.to_data() == {"deletion": {"count": 2}}


def test_parse_resize_grow() -> None:
    inputs = {"adjustment_type": EXACT, "number": 9, "min_size": 3, "max_size": 10, "strict": True}
    assert parse_resize(6, CLUSTER_6, inputs, 1000).to_data() == {"creation": {"count": 3}}


def test_parse_resize_invalid() -> None:
    inputs = {"adjustment_type": EXACT, "number": 11, "min_size": 3, "max_size": 10, "strict": True}
    plan = parse_resize(6, CLUSTER_6, inputs, 1000)
    assert plan.error == "The target capacity (11) is greater than the specified max_size (10)."


def test_parse_resize_unchanged_writes_creation_zero() -> None:
    plan = parse_resize(6, CLUSTER_6, {"min_size": 1}, 1000)
    assert plan.to_data() == {"creation": {"count": 0}}


def test_parse_resize_uses_current_zero_unlike_senlin() -> None:
    # Senlin's `current or desired_capacity` treated an empty cluster as having 6 nodes.
    plan = parse_resize(
        0, CLUSTER_6, {"adjustment_type": CHANGE, "number": 2, "strict": True}, 1000
    )
    assert plan.desired == 2
    assert plan.to_data() == {"creation": {"count": 2}}


def test_parse_resize_non_strict_truncates() -> None:
    cluster = SizeBounds(min_size=2, max_size=5, desired_capacity=4)
    plan = parse_resize(4, cluster, {"adjustment_type": CHANGE, "number": -5}, 1000)
    assert (plan.error, plan.desired, plan.deletion_count) == (None, 2, 2)
