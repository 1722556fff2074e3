"""check accepts every herd answer on random clusters and rejects broken ones."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herd.planner import answer_dict, check_answer, parse_request

from .factory import cluster, instance

TEMPLATES = ["drbd", "drbd", "drbd", "plain", "rbd", "diskless"]


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    group_sizes = draw(st.lists(st.integers(2, 6), min_size=1, max_size=3))
    groups = {f"g{g}": [f"n{g}-{k}" for k in range(n)] for g, n in enumerate(group_sizes)}
    instances = {}
    for k in range(draw(st.integers(1, 14))):
        g = draw(st.integers(0, len(group_sizes) - 1))
        names = groups[f"g{g}"]
        template = draw(st.sampled_from(TEMPLATES))
        pri = draw(st.sampled_from(names))
        nodes = [pri]
        if template == "drbd":
            nodes.append(draw(st.sampled_from([n for n in names if n != pri])))
        instances[f"i{k}"] = instance(
            template,
            nodes,
            memory=draw(st.sampled_from([512, 2048, 8192])),
            disk=draw(st.sampled_from([1024, 50_000, 300_000])),
            admin_state=draw(st.sampled_from(["up", "up", "down"])),
        )
    overrides: dict[str, dict[str, Any]] = {
        name: {"total_memory": draw(st.sampled_from([16384, 32768]))}
        for names in groups.values()
        for name in names
    }
    source = instances[draw(st.sampled_from(sorted(instances)))]["nodes"][0]
    in_group = [
        n for n, i in instances.items() if i["nodes"][0].split("-")[0] == source.split("-")[0]
    ]
    if draw(st.booleans()) and len(group_sizes) > 1:
        request = {"type": "change-group", "instances": in_group, "target_groups": []}
    else:
        mode = draw(st.sampled_from(["primary-only", "secondary-only", "all"]))
        position = 1 if mode == "secondary-only" else 0
        chosen = [
            n
            for n, i in instances.items()
            if len(i["nodes"]) > position and i["nodes"][position] == source
        ] or in_group
        request = {"type": "node-evacuate", "instances": chosen, "evac_mode": mode}
    for name in draw(st.lists(st.sampled_from(sorted(overrides)), max_size=2, unique=True)):
        overrides[name][draw(st.sampled_from(["offline", "drained"]))] = True
    for names in groups.values():
        for k, name in enumerate(names):
            overrides[name]["tags"] = [f"rack:{k % 2}"]
    for inst in instances.values():
        inst["tags"] = draw(st.sampled_from([[], ["svc:a"], ["svc:b"]]))
    tags = ["htools:iextags:svc", "htools:nlocation:rack"] if draw(st.booleans()) else []
    raw = cluster(groups, instances, request, overrides, cluster_tags=tags)
    for node in raw["nodes"].values():
        node["free_memory"] = node["free_memory"] - 32768 + node["total_memory"]
    return raw


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(requests())
def test_check_accepts_herd_answers(raw: dict[str, Any]) -> None:
    answer = answer_dict(raw)
    body = {"success": answer.success, "info": answer.info, "result": answer.result}
    report = check_answer(parse_request(raw), body, max_resyncs_per_node=2)
    assert report.valid, report.errors


@SETTINGS
@given(requests(), st.integers(0, 4))
def test_check_rejects_broken_answers(raw: dict[str, Any], how: int) -> None:
    answer = answer_dict(raw)
    result = copy.deepcopy(answer.result)
    moved, failed, jobs = result
    if how == 0:
        (moved or failed).pop()
    elif how == 1:
        failed.append(["ghost", "nope"])
    elif how == 2 and moved:
        moved[0][2] = list(reversed(moved[0][2])) if len(moved[0][2]) > 1 else ["n0-0", "n0-1"]
    elif how == 3 and jobs:
        jobs[0][0]["OP_ID"] = "OP_INSTANCE_REMOVE"
    elif moved:
        moved.append(moved[0])
    else:
        failed.append(failed[0])
    report = check_answer(parse_request(raw), {"success": True, "info": "", "result": result})
    assert not report.valid
