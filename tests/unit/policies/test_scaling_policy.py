"""The scaling policy (Senlin's ScalingPolicy behaviour, section 1.5 of the notes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from herd.domain.snapshots import ClusterSnapshot
from herd.errors import InvalidSpec
from herd.policies.base import PolicyContext
from herd.policies.scaling import ScalingPolicy
from herd.types import ActionName, CheckStatus, Phase

Cluster = Callable[..., ClusterSnapshot]
Ctx = Callable[..., PolicyContext]
IN = ActionName.CLUSTER_SCALE_IN
OUT = ActionName.CLUSTER_SCALE_OUT


def scaling(event: str = "CLUSTER_SCALE_IN", **adjustment: Any) -> ScalingPolicy:
    return ScalingPolicy({"event": event, "adjustment": adjustment}, policy_id="P1")


def test_defaults_and_identity() -> None:
    p = scaling()
    assert p.properties["adjustment"] == {
        "type": "CHANGE_IN_CAPACITY",
        "number": 1,
        "min_step": 1,
        "best_effort": False,
        "cooldown": 0,
    }
    assert (p.priority, p.singleton) == (100, False)


@pytest.mark.parametrize(
    ("props", "message", "field"),
    [
        (
            {"event": "CLUSTER_SCALE_IN", "adjustment": {"number": 0}},
            "the 'number' for 'adjustment' must be > 0",
            "properties.adjustment.number",
        ),
        (
            {"event": "CLUSTER_SCALE_IN", "adjustment": {"min_step": -1}},
            "the 'min_step' for 'adjustment' must be >= 0",
            "properties.adjustment.min_step",
        ),
        (
            {"event": "CLUSTER_SCALE_IN", "adjustment": {"cooldown": -1}},
            "the 'cooldown' for 'adjustment' must be >= 0",
            "properties.adjustment.cooldown",
        ),
        ({"adjustment": {}}, "Required spec item 'event' not provided", "properties.event"),
        (
            {"event": "CLUSTER_RESIZE"},
            "'CLUSTER_RESIZE' must be one of the allowed values: "
            "CLUSTER_SCALE_IN, CLUSTER_SCALE_OUT",
            "properties.event",
        ),
        (
            {"event": "CLUSTER_SCALE_IN", "adjustment": {"number": "many"}},
            "The value 'many' is not a valid number.",
            "properties.adjustment.number",
        ),
    ],
)
def test_spec_errors(props: dict[str, Any], message: str, field: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        ScalingPolicy(props)
    assert (info.value.message, info.value.field) == (message, field)


def test_before_only_for_its_event_after_for_both() -> None:
    p = scaling("CLUSTER_SCALE_OUT")
    assert p.applies_to(OUT, Phase.BEFORE) and not p.applies_to(IN, Phase.BEFORE)
    assert p.applies_to(IN, Phase.AFTER) and p.applies_to(OUT, Phase.AFTER)
    assert not p.applies_to(ActionName.CLUSTER_RESIZE, Phase.BEFORE)


def test_scale_in_writes_deletion_count(cluster: Cluster, ctx: Ctx) -> None:
    decision = scaling(number=2).before(ctx(IN, cluster(5)))
    assert decision.status is CheckStatus.OK
    assert decision.reason == "Scaling request validated."
    assert decision.data == {"deletion": {"count": 2}}


def test_input_count_wins(cluster: Cluster, ctx: Ctx) -> None:
    decision = scaling(number=2).before(ctx(IN, cluster(5), inputs={"count": 3}))
    assert decision.data == {"deletion": {"count": 3}}


def test_scale_out_writes_creation(cluster: Cluster, ctx: Ctx) -> None:
    decision = scaling("CLUSTER_SCALE_OUT", number=2).before(ctx(OUT, cluster(5)))
    assert decision.data == {"creation": {"count": 2}}


@pytest.mark.parametrize(
    ("event", "kind", "number", "min_step", "expected"),
    [
        ("CLUSTER_SCALE_IN", "EXACT_CAPACITY", 7, 1, 3),
        ("CLUSTER_SCALE_OUT", "EXACT_CAPACITY", 14, 1, 4),
        ("CLUSTER_SCALE_IN", "CHANGE_IN_PERCENTAGE", 25, 1, 2),
        ("CLUSTER_SCALE_IN", "CHANGE_IN_PERCENTAGE", 1, 3, 3),
    ],
)
def test_adjustment_count(event: str, kind: str, number: int, min_step: int, expected: int) -> None:
    p = scaling(event, type=kind, number=number, min_step=min_step)
    assert p.adjustment_count(10) == expected


def test_invalid_count(cluster: Cluster, ctx: Ctx) -> None:
    decision = scaling(type="EXACT_CAPACITY", number=7).before(ctx(IN, cluster(5)))
    assert decision.status is CheckStatus.ERROR
    assert decision.reason == "Invalid count (-2) for action 'CLUSTER_SCALE_IN'."
    bad = scaling().before(ctx(IN, cluster(5), inputs={"count": "tt"}))
    assert bad.reason == "Invalid count (tt) for action 'CLUSTER_SCALE_IN'."


def test_size_check_strict(cluster: Cluster, ctx: Ctx) -> None:
    decision = scaling(number=3).before(ctx(IN, cluster(3, min_size=1)))
    assert decision.reason == "The target capacity (0) is less than the cluster's min_size (1)."


def test_best_effort_clamps(cluster: Cluster, ctx: Ctx) -> None:
    decision = scaling(number=3, best_effort=True).before(ctx(IN, cluster(3, min_size=1)))
    assert decision.data == {"deletion": {"count": 2}}
    out = scaling("CLUSTER_SCALE_OUT", number=5, best_effort=True)
    assert out.before(ctx(OUT, cluster(3, max_size=4))).data == {"creation": {"count": 1}}


def test_cooldown(cluster: Cluster, ctx: Ctx) -> None:
    p = scaling(cooldown=60)
    blocked = p.before(ctx(IN, cluster(3), now=1000.0, last_op=950.0))
    assert blocked.status is CheckStatus.ERROR
    assert blocked.reason == "Policy P1 cooldown is still in progress."
    assert p.before(ctx(IN, cluster(3), now=1000.0, last_op=900.0)).status is CheckStatus.OK


def test_after_touches_last_op(cluster: Cluster, ctx: Ctx) -> None:
    decision = scaling().after(ctx(OUT, cluster(1), phase=Phase.AFTER))
    assert decision.touch_last_op and decision.status is CheckStatus.OK
