"""Per disk template and evacuation mode behaviour (ganeti.md 3.1)."""

from __future__ import annotations

from typing import Any

import pytest

from herd.planner import answer_dict, check_answer, parse_request

from .factory import ALL_TEMPLATES, template_cluster

SHARED = ["sharedfile", "blockdev", "rbd", "ext", "gluster", "diskless"]


def _evac(mode: str, template: str) -> tuple[list[Any], list[Any], list[Any]]:
    raw = template_cluster(
        {"type": "node-evacuate", "instances": [f"i-{template}"], "evac_mode": mode}
    )
    answer = answer_dict(raw)
    assert answer.success
    report = check_answer(
        parse_request(raw),
        answer.result and {"success": True, "info": answer.info, "result": answer.result},
    )
    assert report.valid, report.errors
    moved, failed, jobs = answer.result
    return moved, failed, jobs


@pytest.mark.parametrize("template", ["plain", "file"])
@pytest.mark.parametrize("mode", ["primary-only", "secondary-only", "all"])
def test_local_templates_cannot_move(mode: str, template: str) -> None:
    moved, failed, jobs = _evac(mode, template)
    assert moved == [] and jobs == []
    assert failed == [[f"i-{template}", f"Instances of type {template} cannot be relocated"]]


@pytest.mark.parametrize("template", SHARED)
def test_shared_storage_secondary_only_fails(template: str) -> None:
    _, failed, _ = _evac("secondary-only", template)
    assert "can't execute change secondary" in failed[0][1]


@pytest.mark.parametrize("template", SHARED)
@pytest.mark.parametrize("mode", ["primary-only", "all"])
def test_shared_storage_migrates_with_target(mode: str, template: str) -> None:
    moved, failed, jobs = _evac(mode, template)
    assert failed == []
    (op,) = jobs[0]
    assert op["OP_ID"] == "OP_INSTANCE_MIGRATE"
    assert op["target_node"] in {"n2", "n3", "n4"}
    assert moved[0][1] == "name-g1"


def test_drbd_primary_only_is_a_failover() -> None:
    moved, _, jobs = _evac("primary-only", "drbd")
    assert moved == [["i-drbd", "name-g1", ["n2", "n1"]]]
    assert [op["OP_ID"] for op in jobs[0]] == ["OP_INSTANCE_MIGRATE"]
    assert "target_node" not in jobs[0][0]


def test_drbd_secondary_only_replaces_secondary() -> None:
    moved, _, jobs = _evac("secondary-only", "drbd")
    (op,) = jobs[0]
    assert op["OP_ID"] == "OP_INSTANCE_REPLACE_DISKS"
    assert op["mode"] == "replace_new_secondary"
    assert moved[0][2][0] == "n1" and moved[0][2][1] == op["remote_node"]


def test_drbd_all_is_three_steps() -> None:
    moved, _, jobs = _evac("all", "drbd")
    kinds = [op["OP_ID"] for op in jobs[0]]
    assert kinds == [
        "OP_INSTANCE_REPLACE_DISKS",
        "OP_INSTANCE_MIGRATE",
        "OP_INSTANCE_REPLACE_DISKS",
    ]
    primary, secondary = moved[0][2]
    assert jobs[0][0]["remote_node"] == primary and jobs[0][2]["remote_node"] == secondary
    assert {primary, secondary} <= {"n3", "n4"}


@pytest.mark.parametrize("template", ALL_TEMPLATES)
def test_change_group_every_template(template: str) -> None:
    raw = template_cluster(
        {"type": "change-group", "instances": [f"i-{template}"], "target_groups": []}
    )
    answer = answer_dict(raw)
    moved, failed, jobs = answer.result
    if template in ("plain", "file"):
        assert failed and not moved
        return
    assert moved[0][1] == "name-g2"
    assert all(node.startswith("m") for node in moved[0][2])
    if template == "drbd":
        assert len(jobs[0]) == 3
    else:
        assert jobs[0][0]["target_node"] == moved[0][2][0]
    report = check_answer(
        parse_request(raw), {"success": True, "info": "", "result": answer.result}
    )
    assert report.valid, report.errors


def test_change_group_offline_primary_adds_failover_first() -> None:
    raw = template_cluster({"type": "change-group", "instances": ["i-drbd"], "target_groups": []})
    raw["nodes"]["n1"]["offline"] = True
    answer = answer_dict(raw)
    kinds = [op["OP_ID"] for op in answer.result[2][0]]
    assert kinds[0] == "OP_INSTANCE_MIGRATE" and len(kinds) == 4


def test_forthcoming_uses_failover_opcode() -> None:
    raw = template_cluster(
        {"type": "node-evacuate", "instances": ["i-drbd"], "evac_mode": "primary-only"}
    )
    raw["instances"]["i-drbd"]["forthcoming"] = True
    op = answer_dict(raw).result[2][0][0]
    assert op["OP_ID"] == "OP_INSTANCE_FAILOVER" and op["shutdown_timeout"] == 120


def test_unallocable_targets_fail_and_last_resort_is_used() -> None:
    raw = template_cluster({"type": "change-group", "instances": ["i-rbd"], "target_groups": []})
    raw["nodegroups"]["g2"]["alloc_policy"] = "unallocable"
    assert answer_dict(raw).result[1]
    raw["nodegroups"]["g2"]["alloc_policy"] = "last_resort"
    assert answer_dict(raw).result[0][0][1] == "name-g2"


def test_exclusion_tags_fail_then_ignore_soft_errors() -> None:
    from herd.planner import PlannerOptions

    raw = template_cluster(
        {"type": "node-evacuate", "instances": ["i-rbd"], "evac_mode": "primary-only"}
    )
    raw["cluster_tags"] = ["htools:iextags:svc"]
    raw["instances"]["i-rbd"]["tags"] = ["svc:web"]
    for k, name in enumerate(["n2", "n3", "n4"]):
        raw["instances"][f"x{k}"] = dict(
            raw["instances"]["i-diskless"], nodes=[name], tags=["svc:web"]
        )
    failed = answer_dict(raw).result[1]
    assert "FailTags" in failed[0][1]
    moved = answer_dict(raw, PlannerOptions(ignore_soft_errors=True)).result[0]
    assert moved


def test_all_mode_only_replaces_the_evacuated_node() -> None:
    """herd difference: hail would move both nodes of each instance (two resyncs)."""
    from .factory import cluster, instance

    instances = {"a": instance("drbd", ["n1", "n2"]), "b": instance("drbd", ["n3", "n1"])}
    request = {"type": "node-evacuate", "instances": ["a", "b"], "evac_mode": "all"}
    raw = cluster({"g": ["n1", "n2", "n3", "n4", "n5"]}, instances, request)
    answer = answer_dict(raw)
    moved, failed, jobs = answer.result
    assert not failed
    assert [op["OP_ID"] for op in jobs[0]] == ["OP_INSTANCE_MIGRATE", "OP_INSTANCE_REPLACE_DISKS"]
    assert moved[0][2][0] == "n2" and moved[0][2][1] not in {"n1", "n2"}
    assert [op["OP_ID"] for op in jobs[1]] == ["OP_INSTANCE_REPLACE_DISKS"]
    assert moved[1][2][0] == "n3" and "n1" not in moved[1][2]
    body = {"success": True, "info": "", "result": answer.result}
    assert check_answer(parse_request(raw), body, max_resyncs_per_node=2).valid
