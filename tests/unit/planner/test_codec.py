"""Codec errors name what is wrong; answers are serialised as hail does."""

from __future__ import annotations

import json

import pytest

from herd.planner import MalformedRequest, answer_dict, format_answer, load_json, parse_request

from .factory import template_cluster


def test_invalid_json() -> None:
    with pytest.raises(MalformedRequest, match="Invalid JSON"):
        load_json("")
    with pytest.raises(MalformedRequest, match="Unable to read JSObject"):
        load_json("[]")


def test_missing_request() -> None:
    with pytest.raises(MalformedRequest, match="key 'request' not found"):
        parse_request({})
    with pytest.raises(MalformedRequest, match="key 'request'"):
        parse_request({"request": 0})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda r: r["request"].update(evac_mode="everything"),
            "Invalid string value for type EvacMode",
        ),
        (
            lambda r: r["request"].update(instances=["zzz"]),
            "Wrong number of elems found with name zzz",
        ),
        (lambda r: r["request"].update(type="multi-evacuate"), "Invalid request type"),
        (lambda r: r["nodes"]["n1"].pop("group"), "key 'group' not found"),
        (lambda r: r["instances"]["i-drbd"].update(memory="lots"), "memory: Unable to read Int"),
        (lambda r: r["instances"]["i-drbd"].update(disk_template="tape"), "unknown disk template"),
        (lambda r: r["nodegroups"]["g1"].update(alloc_policy="maybe"), "alloc_policy"),
    ],
)
def test_errors_name_the_problem(change: object, message: str) -> None:
    raw = template_cluster({"type": "node-evacuate", "instances": ["i-drbd"], "evac_mode": "all"})
    change(raw)  # type: ignore[operator]
    with pytest.raises(MalformedRequest, match=message):
        answer_dict(raw)


def test_answer_envelope_is_compact_and_ordered() -> None:
    text = format_answer(True, "ok", [1])
    assert text == '{"success":true,"info":"Request successful: ok","result":[1]}'
    assert json.loads(format_answer(False, "no", [1]))["result"] == []


def test_offline_nodes_need_no_dynamic_data() -> None:
    raw = template_cluster({"type": "node-evacuate", "instances": ["i-drbd"], "evac_mode": "all"})
    for key in ("total_memory", "free_memory", "free_disk", "total_disk", "reserved_memory"):
        raw["nodes"]["n4"].pop(key)
    raw["nodes"]["n4"]["offline"] = True
    assert answer_dict(raw).success


@pytest.mark.parametrize("key", ["total_memory", "free_disk", "total_cpus", "reserved_cpus"])
@pytest.mark.parametrize("unqueried", ["offline", "not vm-capable"])
def test_an_unqueried_nodes_figures_are_still_held_to_their_type(key: str, unqueried: str) -> None:
    """Ganeti sends no figures for a node it does not query; one sent anyway is not used but
    must be a number, as the schema says (hail takes anything there: docs/iallocator.md)."""
    raw = template_cluster({"type": "node-evacuate", "instances": ["i-drbd"], "evac_mode": "all"})
    node = raw["nodes"]["n4"]
    if unqueried == "offline":
        node["offline"] = True
    else:
        node["vm_capable"] = False
    node[key] = "lots"
    with pytest.raises(MalformedRequest, match=rf"nodes\['n4'\]\.{key}: Unable to read number"):
        answer_dict(raw)
    node[key] = 1
    assert answer_dict(raw).success
