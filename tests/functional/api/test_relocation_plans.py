"""``POST /v1/relocation-plans``: numbers past 2^53 where the iallocator schema declares a
number, and CPU counts that are negative or not whole, are a 400 naming the key (the
planner's arithmetic overflowed on such numbers: 500s the fuzz found); unknown keys, which
the parser ignores, are not looked at; a tiny but positive total (5e-268 MiB of disk) plans."""

from __future__ import annotations

import copy

from fastapi.testclient import TestClient
from tests.unit.planner.factory import template_cluster

from herd.planner.request_schema import LIMIT

MV = {"OpenStack-API-Version": "clustering 1.14"}
EVACUATE = {"type": "node-evacuate", "evac_mode": "all", "instances": ["i-drbd"]}


def test_a_ganeti_message_is_planned(client: TestClient) -> None:
    r = client.post("/v1/relocation-plans", json=template_cluster(EVACUATE), headers=MV)
    assert r.status_code == 200, r.text
    assert r.json()["plan"]["success"] is True


def test_a_number_past_the_limit_is_refused_naming_its_key(client: TestClient) -> None:
    message = copy.deepcopy(template_cluster(EVACUATE))
    message["nodes"]["n3"]["free_memory"] = 1e300
    r = client.post("/v1/relocation-plans", json=message, headers=MV)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["type"] == "MalformedIAllocatorRequest"
    assert error["message"].startswith("nodes.n3.free_memory: number out of range")
    message["nodes"]["n3"]["free_memory"] = LIMIT  # the limit itself is taken
    assert client.post("/v1/relocation-plans", json=message, headers=MV).status_code == 200


def test_unknown_keys_are_not_bounded(client: TestClient) -> None:
    message = {**template_cluster(EVACUATE), "herd-extra": [1e300, {"x": -(2**80)}]}
    r = client.post("/v1/relocation-plans", json=message, headers=MV)
    assert r.status_code == 200, r.text


def test_a_fraction_of_a_cpu_is_refused_and_a_tiny_disk_plans(client: TestClient) -> None:
    """The fuzz's second 500: total_memory near 2^53 beside total_cpus of 5e-268."""
    message = copy.deepcopy(template_cluster(EVACUATE))
    message["nodes"]["n3"].update({"total_memory": LIMIT - 1, "total_cpus": 5e-268})
    r = client.post("/v1/relocation-plans", json=message, headers=MV)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["type"] == "MalformedIAllocatorRequest"
    assert error["message"] == (
        "nodes.n3.total_cpus: a count of CPUs, a whole number from 0 to 2^53 (got 5e-268)"
    )
    message["nodes"]["n3"].update({"total_cpus": 4, "total_disk": 5e-268})
    r = client.post("/v1/relocation-plans", json=message, headers=MV)
    assert r.status_code == 200, r.text
    plan = r.json()["plan"]
    assert plan["success"] is True
    assert all(isinstance(plan["check"][k], float) for k in ("score_before", "score_after"))
