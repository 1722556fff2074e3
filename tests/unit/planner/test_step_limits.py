"""Every per-node limit at the step where Ganeti checks it (see limit_cases)."""

from __future__ import annotations

from typing import Any

import pytest

from herd.planner import PlannerOptions, answer_dict, check_answer, parse_request

from .limit_cases import CASES, LimitCase


def _answer(raw: dict[str, Any], **options: Any) -> dict[str, Any]:
    answer = answer_dict(raw, PlannerOptions(**options))
    return {"success": answer.success, "info": answer.info, "result": answer.result}


def _assert_outcome(case: LimitCase, answer: dict[str, Any]) -> None:
    moved, failed, _ = answer["result"]
    reasons = dict(map(tuple, failed))
    assert {m[0]: m[2] for m in moved} == case.moved
    assert set(reasons) == set(case.failed)
    for name, mode in case.failed.items():
        assert mode in reasons[name], reasons[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_planner_follows_the_limit(name: str) -> None:
    case = CASES[name]()
    answer = _answer(case.raw)
    _assert_outcome(case, answer)
    report = check_answer(parse_request(case.raw), answer, max_resyncs_per_node=2)
    assert report.valid, report.errors


@pytest.mark.parametrize("name", sorted(CASES))
def test_ignore_soft_errors_only_lifts_soft_limits(name: str) -> None:
    case = CASES[name]()
    answer = _answer(case.raw, ignore_soft_errors=True)
    if case.hard:
        _assert_outcome(case, answer)
    else:
        assert answer["result"][1] == []
    report = check_answer(parse_request(case.raw), answer, ignore_soft_errors=True)
    assert report.valid, report.errors


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n]().forced))
def test_check_refuses_the_step_the_planner_avoids(name: str) -> None:
    case = CASES[name]()
    instance = case.forced[0]["instance_name"]
    data = parse_request(case.raw)
    others = [[n, "not moved"] for n in case.raw["request"]["instances"] if n != instance]
    result = [[[instance, "name-g1", _final_nodes(case)]], others, [case.forced]]
    body = {"success": True, "info": "", "result": result}
    strict = check_answer(data, body)
    assert any(e.endswith(case.refusal) for e in strict.errors), strict.errors
    lenient = check_answer(data, body, ignore_soft_errors=True)
    if case.hard:
        assert any(e.endswith(case.refusal) for e in lenient.errors), lenient.errors
    else:
        assert lenient.valid, lenient.errors
        soft = case.refusal.replace("(soft limit)", "(soft limit, ignored)")
        assert any(w.endswith(soft) for w in lenient.warnings), lenient.warnings


def _final_nodes(case: LimitCase) -> list[str]:
    op = case.forced[0]
    nodes = list(case.raw["instances"][op["instance_name"]]["nodes"])
    if op["OP_ID"] == "OP_INSTANCE_REPLACE_DISKS":
        return [nodes[0], op["remote_node"]]
    if "target_node" in op:
        return [op["target_node"]]
    return [nodes[1], nodes[0]]
