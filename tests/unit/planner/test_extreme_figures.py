"""Extreme but finite figures: a plan, or a MalformedRequest naming the key; never an
exception, a numpy warning (pytest makes warnings errors), inf or nan.

The fuzz over ``/openapi.json`` found the planner's score overflowing on a node with
``total_memory`` near 2^53 beside ``total_cpus`` of 5e-268: a ratio over a tiny positive
denominator, squared and summed. The parser refuses numbers past 2^53 and CPU counts that
are negative or not whole (``request_schema``); every other figure in that range, 5e-268
MiB of disk or a 1e-300 spindle ratio included, must plan.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herd.cli.iallocator import run_iallocator
from herd.planner import MalformedRequest
from herd.planner.report import PlanReport, plan_report
from herd.planner.request_schema import LIMIT
from herd.planner.score import RATIO_LIMIT, _ratio

from .factory import instance, template_cluster

DRBD = {k: v for k, v in instance("drbd", []).items() if k != "nodes"}
PLAIN = {k: v for k, v in instance("plain", []).items() if k != "nodes"}
REQUESTS: list[dict[str, Any]] = [
    {"type": "node-evacuate", "evac_mode": "all", "instances": ["i-drbd", "i-plain"]},
    {"type": "node-evacuate", "evac_mode": "secondary-only", "instances": ["i-drbd"]},
    {"type": "change-group", "instances": ["i-drbd", "i-plain"], "target_groups": ["g2"]},
    {
        "type": "relocate",
        "name": "i-drbd",
        "required_nodes": 1,
        "disk_space_total": 1152,
        "relocate_from": ["n2"],
    },
    {"type": "allocate-secondary", "name": "i-plain"},
    {**DRBD, "type": "allocate", "name": "new", "required_nodes": 2},
    {
        "type": "multi-allocate",
        "instances": [
            {**DRBD, "name": "a", "required_nodes": 2},
            {**PLAIN, "name": "b", "required_nodes": 1},
        ],
    },
]
NODE_KEYS = [
    "total_memory",
    "free_memory",
    "reserved_memory",
    "total_disk",
    "free_disk",
    "total_spindles",
    "free_spindles",
    "total_cpus",
    "reserved_cpus",
]
INSTANCE_KEYS = ["memory", "vcpus", "disk_space_total", "spindle_use"]
POLICY_KEYS = ["vcpu-ratio", "spindle-ratio"]
CPU_KEYS = {"total_cpus", "reserved_cpus"}
#: 2^53 and its negative are the parser's bounds and are taken; 1e308 is past them
VALUES = [1e308, -1e308, float(LIMIT), -float(LIMIT), 5e-268, -5e-268, 5e-324, 0, 0.5, 7]


def _set(raw: dict[str, Any], key: str, value: object) -> str:
    """Put ``value`` at ``key`` of every node (or instance, or group policy, with its
    spindle_count for ``spindle_count``); returns the path the first one is named by."""
    if key in NODE_KEYS:
        for node in raw["nodes"].values():
            node[key] = value
        return f"nodes.n1.{key}"
    if key == "spindle_count":
        for node in raw["nodes"].values():
            node["ndparams"][key] = value
        return f"nodes.n1.ndparams.{key}"
    if key in INSTANCE_KEYS:
        for inst in raw["instances"].values():
            inst[key] = value
        return f"instances.i-drbd.{key}"
    for group in raw["nodegroups"].values():
        group["ipolicy"] = {**group["ipolicy"], key: value}
    return f"nodegroups.g1.ipolicy.{key}"


def _refused(key: str, value: float) -> bool:
    """What the parser refuses: past 2^53, or a CPU count negative or not whole."""
    if abs(value) > LIMIT:
        return True
    return key in CPU_KEYS and (value < 0 or not float(value).is_integer())


def _assert_finite(report: PlanReport) -> None:
    """Everything the API answers with is finite (JSON has no inf or nan)."""
    check = report.check
    for score in (check.score_before, check.score_after):
        assert score is None or math.isfinite(score), score
    for host in report.hosts:
        figures = [v for v in vars(host).values() if isinstance(v, float)]
        assert all(math.isfinite(v) for v in figures), host
    json.dumps(report.answer.result, allow_nan=False)


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("key", [*NODE_KEYS, "spindle_count", *INSTANCE_KEYS, *POLICY_KEYS])
def test_an_extreme_figure_plans_or_is_refused_naming_its_key(key: str, value: float) -> None:
    for request in REQUESTS:
        raw = template_cluster(copy.deepcopy(request))
        where = _set(raw, key, value)
        if _refused(key, value):
            with pytest.raises(MalformedRequest) as caught:
                plan_report(raw)
            assert caught.value.field == where, (request["type"], str(caught.value))
            assert str(caught.value).startswith(f"{where}: ")
        else:
            _assert_finite(plan_report(raw))


@pytest.mark.parametrize("tiny", ["total_memory", "total_disk", "total_spindles"])
def test_the_fuzz_case_a_huge_figure_beside_a_tiny_total_plans(tiny: str) -> None:
    """The fuzz's case, with the tiny figure where the parser takes one (the CPU count
    itself is refused: see the next test)."""
    for request in REQUESTS:
        raw = template_cluster(copy.deepcopy(request))
        for node in raw["nodes"].values():
            node.update({"total_memory": LIMIT, "free_memory": LIMIT, tiny: 5e-268})
            node["ndparams"]["exclusive_storage"] = tiny == "total_spindles"
        _assert_finite(plan_report(raw))


def test_a_fraction_of_a_cpu_is_refused_naming_the_node() -> None:
    raw = template_cluster(copy.deepcopy(REQUESTS[0]))
    raw["nodes"]["n3"].update({"total_memory": LIMIT, "total_cpus": 5e-268})
    with pytest.raises(MalformedRequest) as caught:
        plan_report(raw)
    assert caught.value.field == "nodes.n3.total_cpus"
    assert str(caught.value) == (
        "nodes.n3.total_cpus: a count of CPUs, a whole number from 0 to 2^53 (got 5e-268)"
    )
    raw["nodes"]["n3"]["total_cpus"] = 4.0  # whole, though written as a float: taken
    _assert_finite(plan_report(raw))


def test_an_offline_nodes_figures_are_bounded_too() -> None:
    """The parser does not read an offline node's figures, but the schema bounds them, so
    the check does (what /openapi.json says is what is refused)."""
    raw = template_cluster(copy.deepcopy(REQUESTS[0]))
    raw["nodes"]["n4"].update({"offline": True, "total_memory": 1e308})
    with pytest.raises(MalformedRequest, match=r"^nodes\.n4\.total_memory: number out of"):
        plan_report(raw)


def test_a_ratio_over_a_tiny_denominator_is_held_at_the_bound() -> None:
    num = np.asarray([float(LIMIT), -float(LIMIT), 3.0, 0.0, 1.0, 5.0])
    den = np.asarray([5e-268, 5e-324, 2.0, 5e-268, 0.0, -1.0])
    assert _ratio(num, den, 9.0).tolist() == [RATIO_LIMIT, -RATIO_LIMIT, 1.5, 0.0, 9.0, 9.0]


FIGURE = st.one_of(
    st.integers(-LIMIT, LIMIT),
    st.floats(-float(LIMIT), float(LIMIT), allow_nan=False),
    st.sampled_from([5e-268, -5e-268, 5e-324, 0.0, float(LIMIT)]),
)
CPUS = st.one_of(st.integers(0, LIMIT), st.sampled_from([0, 1, LIMIT]))


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    request=st.sampled_from(REQUESTS),
    figures=st.lists(
        st.fixed_dictionaries(
            {key: (CPUS if key in CPU_KEYS else FIGURE) for key in NODE_KEYS}
            | {"spindle_count": FIGURE}
        ),
        min_size=8,
        max_size=8,
    ),
    instance_figures=st.fixed_dictionaries(
        {key: st.integers(-LIMIT, LIMIT) for key in INSTANCE_KEYS}
    ),
    ratios=st.fixed_dictionaries({key: FIGURE for key in POLICY_KEYS}),
    exclusive=st.booleans(),
)
def test_any_figures_the_parser_takes_plan_to_finite_numbers(
    request: dict[str, Any],
    figures: list[dict[str, Any]],
    instance_figures: dict[str, int],
    ratios: dict[str, float],
    exclusive: bool,
) -> None:
    raw = template_cluster(copy.deepcopy(request))
    for node, drawn in zip(raw["nodes"].values(), figures, strict=True):
        node["ndparams"] = {"exclusive_storage": exclusive, "spindle_count": drawn["spindle_count"]}
        node.update({key: drawn[key] for key in NODE_KEYS})
    allocations = raw["request"].get("instances", [raw["request"]])
    for inst in [*raw["instances"].values(), *[a for a in allocations if isinstance(a, dict)]]:
        inst.update(instance_figures)
    for group in raw["nodegroups"].values():
        group["ipolicy"] = {**group["ipolicy"], **ratios}
    _assert_finite(plan_report(raw))


def test_herd_iallocator_refuses_what_the_api_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bounds are the parser's, so the command line (which hail takes 1e308 from)
    exits 1 naming the key, as for any malformed request."""
    raw = template_cluster(copy.deepcopy(REQUESTS[0]))
    raw["nodes"]["n2"]["free_disk"] = 1e308
    request = tmp_path / "request.json"
    request.write_text(json.dumps(raw))
    assert run_iallocator([str(request)]) == 1
    assert capsys.readouterr().err.startswith("Error: nodes.n2.free_disk: number out of range")
