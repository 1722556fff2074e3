"""allocate, multi-allocate, relocate, allocate-secondary, explain and layering."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import herd.planner
from herd.cli.iallocator import run_iallocator
from herd.planner import MalformedRequest, answer_dict, explain

from .factory import cluster, instance, template_cluster

ALLOC = {
    "type": "allocate",
    "name": "new",
    "disk_template": "drbd",
    "tags": [],
    "os": "debian",
    "vcpus": 1,
    "memory": 1024,
    "spindle_use": 1,
    "disks": [{"size": 1024, "mode": "rw"}],
    "disk_space_total": 1152,
    "nics": [{"mac": "aa"}],
    "required_nodes": 2,
    "hypervisor": "xen-pvm",
}


def test_allocate_drbd_picks_two_nodes_of_one_group() -> None:
    answer = answer_dict(template_cluster(ALLOC))
    assert answer.success and "Selected group" in answer.info
    first, second = answer.result
    assert first != second and first[0] == second[0]


def test_allocate_too_big_fails_with_fail_mode() -> None:
    answer = answer_dict(template_cluster(dict(ALLOC, memory=60000)))
    assert not answer.success and "FailMem" in answer.info


def test_multi_allocate_places_each() -> None:
    plain = dict(ALLOC, disk_template="plain", required_nodes=1, disk_space_total=1024)
    request = {
        "type": "multi-allocate",
        "instances": [dict(plain, name="a"), dict(plain, name="b")],
    }
    placed, failed = answer_dict(template_cluster(request)).result
    assert [p[0] for p in placed] == ["a", "b"] and failed == []


def test_relocate_drbd_secondary() -> None:
    raw = template_cluster(
        {
            "type": "relocate",
            "name": "i-drbd",
            "relocate_from": ["n2"],
            "required_nodes": 1,
            "disk_space_total": 1152,
        }
    )
    answer = answer_dict(raw)
    assert answer.success and answer.result[0] in {"n3", "n4"}


def test_allocate_secondary_returns_a_node_name() -> None:
    answer = answer_dict(template_cluster({"type": "allocate-secondary", "name": "i-plain"}))
    assert answer.result in {"n2", "n3", "n4"}


def test_unknown_target_group_is_malformed() -> None:
    raw = template_cluster(
        {"type": "change-group", "instances": ["i-drbd"], "target_groups": ["nope"]}
    )
    with pytest.raises(MalformedRequest, match="nope"):
        answer_dict(raw)


def test_target_group_by_name_or_uuid() -> None:
    for target in ("g2", "name-g2"):
        raw = template_cluster(
            {"type": "change-group", "instances": ["i-rbd"], "target_groups": [target]}
        )
        assert answer_dict(raw).result[0][0][1] == "name-g2"


def test_explain_rows_cover_every_instance() -> None:
    raw = template_cluster(
        {"type": "change-group", "instances": ["i-drbd", "i-plain"], "target_groups": []}
    )
    _, rows = explain(raw)
    assert {r.instance for r in rows} == {"i-drbd", "i-plain"}
    assert any(r.outcome.startswith("failed") for r in rows)


def test_cli_check_and_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = tmp_path / "req.json"
    request.write_text(
        json.dumps(
            cluster(
                {"g1": ["a", "b", "c"], "g2": ["d", "e", "f"]},
                {"x": instance("drbd", ["a", "b"])},
                {"type": "change-group", "instances": ["x"], "target_groups": []},
            )
        )
    )
    assert run_iallocator([str(request)]) == 0
    answer = tmp_path / "ans.json"
    answer.write_text(capsys.readouterr().out)
    assert run_iallocator(["check", str(request), str(answer)]) == 0
    assert "valid" in capsys.readouterr().out
    broken = json.loads(answer.read_text())
    broken["result"][0] = []
    answer.write_text(json.dumps(broken))
    assert run_iallocator(["check", str(request), str(answer)]) == 1
    assert run_iallocator(["explain", str(request)]) == 0
    assert "x" in capsys.readouterr().out


ALLOWED = {"herd.types", "herd.json_types", "herd.errors", "numpy", "numpy.typing"}
FORBIDDEN = {"time", "random", "datetime", "os", "sys", "io", "socket", "subprocess", "pathlib"}


def test_planner_layering() -> None:
    package = Path(herd.planner.__file__).parent
    for module in package.glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                assert root not in FORBIDDEN, (module.name, name)
                if root == "herd":
                    assert name.startswith("herd.planner") or name in ALLOWED, (module.name, name)
                elif root not in {
                    "__future__",
                    "collections",
                    "copy",
                    "dataclasses",
                    "enum",
                    "json",
                    "typing",
                    "itertools",
                }:
                    assert name in ALLOWED, (module.name, name)
