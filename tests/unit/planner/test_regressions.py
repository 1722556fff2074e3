"""Deterministic cases taken from failures of the property tests."""

from __future__ import annotations

from typing import Any

from herd.planner import answer_dict, check_answer, parse_request

from .factory import cluster, instance


def _offline_primary_onto_a_full_secondary() -> dict[str, Any]:
    """test_check_accepts_herd_answers' failing example (hypothesis database).

    n1-0 has no free memory (i4 and i5 use all of it) and is the secondary of
    i0, whose primary n1-1 is offline. change-group of i0, i4, i5 to g0.
    """
    groups = {"g0": ["n0-0", "n0-1", "n0-2"], "g1": ["n1-0", "n1-1", "n1-2"]}
    small = {"memory": 512, "disk": 1024}
    instances = {
        "i0": instance("drbd", ["n1-1", "n1-0"], **small),
        "i1": instance("plain", ["n0-0"], **small),
        "i2": instance("drbd", ["n0-0", "n0-1"], **small),
        "i3": instance("plain", ["n0-0"], **small),
        "i4": instance("drbd", ["n1-0", "n1-1"], memory=8192, disk=1024),
        "i5": instance("drbd", ["n1-0", "n1-1"], memory=8192, disk=1024),
        "i6": instance("drbd", ["n0-0", "n0-1"], **small),
        "i7": instance("plain", ["n0-0"], **small),
        "i8": instance("plain", ["n0-0"], **small),
        "i9": instance("drbd", ["n0-0", "n0-1"], **small),
        "i10": instance("plain", ["n0-0"], **small),
        "i11": instance("plain", ["n0-0"], **small),
    }
    overrides: dict[str, dict[str, Any]] = {
        name: {"total_memory": 16384, "tags": [f"rack:{k % 2}"]}
        for names in groups.values()
        for k, name in enumerate(names)
    }
    overrides["n1-1"]["offline"] = True
    request = {"type": "change-group", "instances": ["i0", "i4", "i5"], "target_groups": []}
    raw = cluster(groups, instances, request, overrides)
    for node in raw["nodes"].values():
        node["free_memory"] = node["free_memory"] - 32768 + node["total_memory"]
    return raw


def test_failover_from_an_offline_primary_needs_memory_on_the_secondary() -> None:
    raw = _offline_primary_onto_a_full_secondary()
    assert raw["nodes"]["n1-0"]["free_memory"] == 0
    answer = answer_dict(raw)
    body = {"success": answer.success, "info": answer.info, "result": answer.result}
    report = check_answer(parse_request(raw), body, max_resyncs_per_node=2)
    assert report.valid, report.errors
    moved, failed, jobs = answer.result
    # hail 3.0.2 fails all three, for these steps (verified with the binary):
    # the forced failover of i0 still needs free memory on n1-0, and the
    # replace-disks of i4/i5 re-adds them to n1-0, which has none left.
    assert moved == [] and jobs == []
    reasons = dict(map(tuple, failed))
    assert reasons["i0"].endswith("last pair: Failing over to the secondary: FailMem")
    for name in ("i4", "i5"):
        assert reasons[name].endswith("last pair: Changing secondary to new primary: FailMem")


def test_check_rejects_the_old_answer_for_that_example() -> None:
    raw = _offline_primary_onto_a_full_secondary()
    migrate = {"OP_ID": "OP_INSTANCE_MIGRATE", "instance_name": "i0"}
    replace = {"OP_ID": "OP_INSTANCE_REPLACE_DISKS", "instance_name": "i0"}
    jobs = [
        [
            migrate,
            {**replace, "remote_node": "n0-2"},
            migrate,
            {**replace, "remote_node": "n0-1"},
        ]
    ]
    result = [[["i0", "name-g0", ["n0-2", "n0-1"]]], [["i4", "x"], ["i5", "x"]], jobs]
    report = check_answer(parse_request(raw), {"success": True, "info": "", "result": result})
    # Every step that touches the full n1-0 is refused, not only the first.
    assert report.errors == [
        "job 0 (i0, OP_INSTANCE_MIGRATE): Ganeti's model refuses n1-0 as the new primary: "
        "FailMem (hard limit)",
        "job 0 (i0, OP_INSTANCE_REPLACE_DISKS): Ganeti's model refuses re-adding the primary "
        "n1-0: FailMem (hard limit)",
        "job 0 (i0, OP_INSTANCE_MIGRATE): Ganeti's model refuses the old primary n1-0 taking "
        "the secondary back: FailMem (soft limit)",
    ]
