"""Job dependencies keep every parallel execution within node capacity."""

from __future__ import annotations

import numpy as np

from herd.planner import PlannerOptions, answer_dict, check_answer, parse_request
from herd.planner.jobs import JobEffect, build_dependencies

from .factory import cluster, instance


def _effect(adds: dict[int, float], releases: dict[int, float]) -> JobEffect:
    return JobEffect(
        adds={n: np.asarray([m, 0.0, 0.0, 0.0]) for n, m in adds.items()},
        releases={n: np.asarray([m, 0.0, 0.0, 0.0]) for n, m in releases.items()},
        resync_nodes=frozenset(),
    )


def test_move_into_freed_memory_waits_for_the_move_out() -> None:
    leave = _effect(adds={1: 8.0}, releases={0: 8.0})
    enter = _effect(adds={0: 8.0}, releases={2: 8.0})
    # Node 0 has no spare memory: the newcomer fits only after the other left.
    capacity = np.asarray([[0.0, 9, 9, 9], [16.0, 9, 9, 9], [0.0, 9, 9, 9]])
    assert build_dependencies([leave, enter], capacity, 2) == [[], [0]]


def test_independent_moves_stay_parallel() -> None:
    first = _effect(adds={1: 8.0}, releases={0: 8.0})
    second = _effect(adds={2: 8.0}, releases={3: 8.0})
    capacity = np.full((4, 4), 16.0)
    assert build_dependencies([first, second], capacity, 2) == [[], []]


def _secondary_evacuation() -> dict[str, object]:
    instances = {f"i{k}": instance("drbd", [f"n{1 + k % 3}", "n0"], memory=512) for k in range(6)}
    groups = {"g": ["n0", "n1", "n2", "n3", "n4", "n5"]}
    request = {
        "type": "node-evacuate",
        "instances": sorted(instances),
        "evac_mode": "secondary-only",
    }
    return cluster(groups, instances, request)


def test_resync_cap_adds_depends_and_check_enforces_it() -> None:
    raw = _secondary_evacuation()
    answer = answer_dict(raw, PlannerOptions(max_resyncs_per_node=1))
    moved, failed, jobs = answer.result
    assert len(moved) == 6 and not failed
    assert any("depends" in job[0] for job in jobs)
    data = parse_request(raw)
    body = {"success": True, "info": "", "result": answer.result}
    assert check_answer(data, body, max_resyncs_per_node=1).valid
    stripped = [[{k: v for k, v in op.items() if k != "depends"} for op in job] for job in jobs]
    broken = {"success": True, "info": "", "result": [moved, failed, stripped]}
    report = check_answer(data, broken, max_resyncs_per_node=1)
    assert not report.valid and "parallel" in report.errors[0]


def test_depends_are_relative_and_backwards() -> None:
    answer = answer_dict(_secondary_evacuation(), PlannerOptions(max_resyncs_per_node=1))
    for index, job in enumerate(answer.result[2]):
        for offset, states in job[0].get("depends", []):
            assert offset < 0 and index + offset >= 0 and states == ["success"]
