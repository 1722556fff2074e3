"""Ganeti's spindle rule at every opcode, on clusters with nodes over their limit.

A node over ``spindle-ratio x spindle_count`` refuses to receive an instance
in any move, even one that leaves its load unchanged: the old primary taking
the instance back as the secondary in a failover (FailDisk). Only the forced
re-add of a primary during a replace-disks, and moves that leave an offline
node, skip the rule. The answers are replayed with an independent
implementation of the rule (``replay.spindle_refusals``) as well as with
herd's checker.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herd.cli.iallocator import run_iallocator
from herd.planner import PlannerOptions, answer_dict, check_answer, parse_request

from .factory import IPOLICY, cluster, instance
from .overlimit import MODES, SOURCE, overlimit_cluster
from .replay import over_limit_nodes, spindle_load, spindle_refusals


def _answer(raw: dict[str, Any], **options: Any) -> dict[str, Any]:
    answer = answer_dict(raw, PlannerOptions(**options))
    return {"success": answer.success, "info": answer.info, "result": answer.result}


def _assert_never_refused(raw: dict[str, Any], answer: dict[str, Any]) -> None:
    report = check_answer(parse_request(raw), answer, max_resyncs_per_node=2)
    assert report.valid, report.errors
    assert spindle_refusals(raw, answer["result"]) == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(6))
def test_answers_never_pass_through_a_refused_state(mode: str, seed: int) -> None:
    raw = overlimit_cluster(random.Random(seed), mode)
    assert len([n for n in over_limit_nodes(raw) if n in SOURCE]) >= 2
    answer = _answer(raw)
    _assert_never_refused(raw, answer)
    moved, failed, jobs = answer["result"]
    assert len(moved) + len(failed) == len(raw["request"]["instances"])
    assert len(jobs) == len(moved)


def _two_over_limit_nodes(request: dict[str, Any]) -> dict[str, Any]:
    """g1: n1 and n2 hold 5 spindles each (limit 4), n3 and n4 hold 1; g2 is empty."""
    instances = {
        "a": instance("drbd", ["n1", "n3"]),
        "b": instance("drbd", ["n2", "n4"]),
        "c": instance("drbd", ["n3", "n4"]),
        "d": instance("drbd", ["n1", "n2"], spindle_use=2),
        "e": instance("drbd", ["n2", "n1"], spindle_use=2),
        "f": instance("plain", ["n1"]),
        "g": instance("plain", ["n2"]),
    }
    raw = cluster({"g1": ["n1", "n2", "n3", "n4"], "g2": ["m1", "m2", "m3"]}, instances, request)
    for group in raw["nodegroups"].values():
        group["ipolicy"] = {**IPOLICY, "spindle-ratio": 4.0}
    assert over_limit_nodes(raw) == ["n1", "n2"]
    assert spindle_load(raw)["n3"] == 2
    return raw


def test_change_group_fails_instances_whose_primary_is_over_its_limit() -> None:
    request = {"type": "change-group", "instances": ["a", "b", "c"], "target_groups": []}
    raw = _two_over_limit_nodes(request)
    answer = _answer(raw)
    _assert_never_refused(raw, answer)
    moved, failed, _ = answer["result"]
    # c's primary n3 is within its limit: it moves. a and b would pass
    # through a state with n1/n2 holding their secondary (FailDisk).
    assert [m[0] for m in moved] == ["c"]
    reasons = dict(map(tuple, failed))
    for name in ("a", "b"):
        assert "last pair: Failing over to new primary: FailDisk" in reasons[name]


def test_ignore_soft_errors_lets_them_move_and_check_warns() -> None:
    request = {"type": "change-group", "instances": ["a", "b", "c"], "target_groups": []}
    raw = _two_over_limit_nodes(request)
    answer = _answer(raw, ignore_soft_errors=True)
    assert [m[0] for m in answer["result"][0]] == ["a", "b", "c"]
    strict = check_answer(parse_request(raw), answer)
    assert any("the old primary n1 taking the secondary back: FailDisk" in e for e in strict.errors)
    lenient = check_answer(parse_request(raw), answer, ignore_soft_errors=True)
    assert lenient.valid, lenient.errors
    assert any("soft limit, ignored" in w for w in lenient.warnings)


def test_primary_only_cannot_leave_the_secondary_on_an_over_limit_node() -> None:
    raw = _two_over_limit_nodes(
        {"type": "node-evacuate", "instances": ["a", "d"], "evac_mode": "primary-only"}
    )
    answer = _answer(raw)
    _assert_never_refused(raw, answer)
    reasons = dict(map(tuple, answer["result"][1]))
    # a: n1 (over) would take the secondary back; d: n2 (over) becomes primary.
    assert reasons["a"].startswith("FailDisk: cannot fail over to secondary node n3")
    assert "the old primary n1 taking the secondary back" in reasons["a"]
    assert reasons["d"] == "FailDisk: cannot fail over to secondary node n2"


def test_secondary_only_keeps_an_over_limit_primary() -> None:
    # The primary is only re-added with force: its spindles are not checked.
    raw = _two_over_limit_nodes(
        {"type": "node-evacuate", "instances": ["c"], "evac_mode": "secondary-only"}
    )
    raw["request"]["instances"] = ["a"]
    answer = _answer(raw)
    _assert_never_refused(raw, answer)
    assert answer["result"][0] == [["a", "name-g1", ["n1", "n4"]]]


def test_all_mode_keeps_an_over_limit_primary_but_adds_to_none() -> None:
    raw = _two_over_limit_nodes(
        {"type": "node-evacuate", "instances": ["a", "c"], "evac_mode": "all"}
    )
    answer = _answer(raw)
    _assert_never_refused(raw, answer)
    # n3 is evacuated. a (n1/n3) keeps n1, re-added with force, and only
    # replaces n3. c (n3/n4) needs a node other than n3/n4: n1 and n2 are
    # over their limit, so every path fails.
    assert answer["result"][0] == [["a", "name-g1", ["n1", "n4"]]]
    assert answer["result"][1] == [
        [
            "c",
            "Can't find any good nodes for relocation: Allocation failed: "
            "Changing secondary to new primary: FailDisk",
        ]
    ]


def test_leaving_an_offline_node_skips_the_spindle_check() -> None:
    raw = _two_over_limit_nodes(
        {"type": "node-evacuate", "instances": ["b"], "evac_mode": "primary-only"}
    )
    raw["instances"]["b"]["nodes"] = ["n3", "n2"]
    node = raw["nodes"]["n3"]
    node["offline"] = True
    for key in [k for k in node if k.startswith(("total_", "free_", "reserved_"))]:
        del node[key]
    answer = _answer(raw)
    # n2 is over its limit, but the failover leaves an offline node (force).
    assert answer["result"][0] == [["b", "name-g1", ["n2", "n3"]]]
    _assert_never_refused(raw, answer)


@st.composite
def overlimit_requests(draw: st.DrawFn) -> dict[str, Any]:
    rng = draw(st.randoms(use_true_random=False))
    mode = draw(st.sampled_from(MODES))
    offline = draw(st.sampled_from([None, None, None, "n2", "n4", "m2"]))
    return overlimit_cluster(rng, mode, offline)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(overlimit_requests())
def test_property_no_refused_state_with_nodes_over_their_limit(raw: dict[str, Any]) -> None:
    _assert_never_refused(raw, _answer(raw))


def test_cli_check_takes_ignore_soft_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = {"type": "change-group", "instances": ["a", "b", "c"], "target_groups": []}
    raw = _two_over_limit_nodes(request)
    (tmp_path / "req.json").write_text(json.dumps(raw))
    answer = _answer(raw, ignore_soft_errors=True)
    (tmp_path / "ans.json").write_text(json.dumps(answer))
    files = [str(tmp_path / "req.json"), str(tmp_path / "ans.json")]
    assert run_iallocator(["check", *files]) == 1
    assert "taking the secondary back: FailDisk (soft limit)" in capsys.readouterr().out
    assert run_iallocator(["check", "--ignore-soft-errors", *files]) == 0
    assert "(soft limit, ignored)" in capsys.readouterr().out
