"""herd against the real hail where per-node limits decide the outcome.

Three sources of clusters: Ganeti's own test data with the spindle ratio
lowered so that several nodes are over their limit, generated clusters with
nodes over their spindle limit, and one small case per per-node limit
(tests/unit/planner/limit_cases.py). herd's answers are checked by herd and
by an independent replay of the spindle rule in every case; the comparison
with hail runs when Debian's ganeti-htools and ganeti-testsuite are
installed and is skipped otherwise.
"""

from __future__ import annotations

import copy
import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.unit.planner.limit_cases import CASES
from tests.unit.planner.overlimit import MODES, overlimit_cluster
from tests.unit.planner.replay import over_limit_nodes, spindle_refusals

from herd.planner import PlannerOptions, answer_dict, check_answer, parse_request

DATA = Path("/usr/share/ganeti/testsuite/test/data/htools")
HAIL = Path("/usr/lib/ganeti/iallocators/hail")


def _hail(raw: dict[str, Any], tmp_path: Path, *flags: str) -> dict[str, Any]:
    if not HAIL.exists():
        pytest.skip(f"hail is not installed ({HAIL}; apt ganeti-htools-3.0)")
    request = tmp_path / "request.json"
    request.write_text(json.dumps(raw))
    done = subprocess.run(
        [str(HAIL), *flags, str(request)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _herd(raw: dict[str, Any], **options: Any) -> dict[str, Any]:
    answer = answer_dict(raw, PlannerOptions(**options))
    body = {"success": answer.success, "info": answer.info, "result": answer.result}
    report = check_answer(
        parse_request(raw),
        body,
        max_resyncs_per_node=2,
        ignore_soft_errors=bool(options.get("ignore_soft_errors")),
    )
    assert report.valid, report.errors
    if not options.get("ignore_soft_errors"):
        assert spindle_refusals(raw, answer.result) == []
    return body


def _moved(answer: dict[str, Any]) -> dict[str, list[str]]:
    return {name: nodes for name, _, nodes in answer["result"][0]}


FAIL_MODE = re.compile(r"\bFail(?:Mem|DiskCount|Disk|CPU|N1|Tags|Mig|Spindles|Internal)\b")


def _modes(answer: dict[str, Any]) -> dict[str, set[str]]:
    """The failure modes each failed instance's explanation names."""
    return {name: set(FAIL_MODE.findall(reason)) for name, reason in answer["result"][1]}


def _ganeti_file(name: str, ratio: float, mode: str | None, every: bool) -> dict[str, Any]:
    if not DATA.is_dir():
        pytest.skip(f"Ganeti test data not installed ({DATA}; apt ganeti-testsuite)")
    raw: dict[str, Any] = json.loads((DATA / name).read_text())
    raw["nodegroups"]["uuid-group-1"]["ipolicy"]["spindle-ratio"] = ratio
    if mode is not None:
        raw["request"]["evac_mode"] = mode
        for inst in raw["instances"].values():
            for disk in inst["disks"]:
                disk.pop("spindles", None)
    if every:
        raw["request"]["instances"] = sorted(
            n for n, i in raw["instances"].items() if i["disk_template"] == "drbd"
        )
    return raw


GANETI_VARIANTS = [
    ("hail-change-group.json", None),
    ("hail-node-evac.json", "primary-only"),
    ("hail-node-evac.json", "secondary-only"),
    ("hail-node-evac.json", "all"),
]


@pytest.mark.parametrize("every", [False, True], ids=["one", "every-drbd"])
@pytest.mark.parametrize("ratio", [4.0, 6.0])
@pytest.mark.parametrize(("name", "mode"), GANETI_VARIANTS)
def test_ganeti_data_with_nodes_over_their_spindle_limit(
    name: str, mode: str | None, ratio: float, every: bool, tmp_path: Path
) -> None:
    raw = _ganeti_file(name, ratio, mode, every)
    # node3 holds 5 spindles and node4 holds 10: ratio 4 puts both over.
    assert over_limit_nodes(raw) == (["node3", "node4"] if ratio == 4.0 else ["node4"])
    herd = _herd(raw)
    hail = _hail(raw, tmp_path)
    assert _moved(herd) == _moved(hail)
    assert _modes(herd) == _modes(hail)


@pytest.mark.parametrize("offline", [None, "n2", "m2"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(4))
def test_generated_clusters_over_their_spindle_limit(
    seed: int, mode: str, offline: str | None, tmp_path: Path
) -> None:
    raw = overlimit_cluster(random.Random(seed), mode, offline)
    herd = _herd(raw)
    hail = _hail(raw, tmp_path, "--no-capacity-checks")
    if mode == "all":
        # Deliberate difference: hail excludes every peer node of the listed
        # instances; herd only the evacuated node (docs/iallocator.md).
        assert set(_moved(hail)) <= set(_moved(herd))
    else:
        assert _moved(herd) == _moved(hail)
        assert _modes(herd) == _modes(hail)


@pytest.mark.parametrize("ignore", [False, True], ids=["strict", "ignore-soft-errors"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_limit_matches_hail(name: str, ignore: bool, tmp_path: Path) -> None:
    raw = copy.deepcopy(CASES[name]().raw)
    herd = _herd(raw, ignore_soft_errors=ignore)
    hail = _hail(raw, tmp_path, *(["--ignore-soft-errors"] if ignore else []))
    assert _moved(herd) == _moved(hail)
    assert _modes(herd) == _modes(hail)


def test_property_regression_matches_hail(tmp_path: Path) -> None:
    from tests.unit.planner.test_regressions import _offline_primary_onto_a_full_secondary

    raw = _offline_primary_onto_a_full_secondary()
    herd = _herd(raw)
    hail = _hail(raw, tmp_path, "--no-capacity-checks")
    assert _moved(herd) == _moved(hail) == {}
    for (name, herd_reason), (_, hail_reason) in zip(
        herd["result"][1], hail["result"][1], strict=True
    ):
        step = hail_reason.rsplit("Allocation failed: ", 1)[1]
        assert herd_reason.endswith(f"last pair: {step}"), (name, herd_reason, hail_reason)
