"""Property: a preview with seed ``s`` names exactly what the action run with ``s`` removes.

Through the real API and engine (in process, sim driver): random clusters (unhealthy,
protected and costly members, zone placements), random policies (deletion with any
criterion, zone placement, scaling), random scale-in, resize and del-nodes requests.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.functional.conformance.conftest import Api, deletion_spec
from tests.functional.conformance.placement_helpers import placement_spec

CRITERIA = ("OLDEST_FIRST", "YOUNGEST_FIRST", "OLDEST_PROFILE_FIRST", "RANDOM")


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    size = draw(st.integers(2, 6))
    return {
        "size": size,
        "zones": draw(st.booleans()),
        "criteria": draw(st.none() | st.sampled_from(CRITERIA)),
        "scaling": draw(st.none() | st.integers(1, 3)),
        "unhealthy": draw(st.sets(st.integers(0, size - 1), max_size=2)),
        "protected": draw(st.sets(st.integers(0, size - 1), max_size=1)),
        "costly": draw(st.sets(st.integers(0, size - 1), max_size=2)),
        "action": draw(st.sampled_from(("scale_in", "resize", "del_nodes"))),
        "count": draw(st.none() | st.integers(1, size)),
        "picked": draw(st.sets(st.integers(0, size - 1), min_size=1, max_size=size - 1)),
        "seed": draw(st.integers(0, 2**31 - 1)),
    }


def _build(api: Api, case: dict[str, Any]) -> tuple[str, list[str]]:
    cluster = api.cluster(0)
    if case["zones"]:
        api.attach(cluster, placement_spec("zones", {"Z-1": 200, "Z-2": 100}), name="place")
    reply = api.act(cluster, {"scale_out": {"count": case["size"]}})
    assert reply["status"] == "SUCCEEDED", reply["status_reason"]
    members = api.member_ids(cluster)
    for i in case["unhealthy"]:
        r = api.client.patch(
            f"/v1/clusters/{cluster}/nodes/{members[i]}", json={"mark_unhealthy": True}
        )
        assert r.status_code == 200, r.text
    for i in case["protected"] | case["costly"]:
        metadata: dict[str, Any] = {}
        if i in case["protected"]:
            metadata["protected"] = True
        if i in case["costly"]:
            metadata["deletion_cost"] = 10
        api.set_metadata(members[i], metadata)
    if case["scaling"] is not None:
        scaling = {
            "type": "senlin.policy.scaling",
            "version": "1.0",
            "properties": {
                "event": "CLUSTER_SCALE_IN",
                "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": case["scaling"]},
            },
        }
        api.attach(cluster, scaling, name="scaling")
    if case["criteria"] is not None:
        api.attach(cluster, deletion_spec(criteria=case["criteria"]), name="deletion")
    return cluster, members


def _params(case: dict[str, Any], members: list[str]) -> dict[str, Any]:
    seed = case["seed"]
    if case["action"] == "scale_in":
        count = {} if case["count"] is None else {"count": case["count"]}
        return {**count, "seed": seed}
    if case["action"] == "resize":
        number = -(case["count"] or 1)
        return {"adjustment_type": "CHANGE_IN_CAPACITY", "number": number, "seed": seed}
    return {"nodes": [members[i] for i in sorted(case["picked"])], "seed": seed}


SETTINGS = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(case=scenarios())
def test_preview_equals_execution(api: Api, case: dict[str, Any]) -> None:
    cluster, members = _build(api, case)
    params = _params(case, members)
    key = case["action"]
    r = api.client.post(f"/v1/clusters/{cluster}/actions", json={f"preview_{key}": params})
    action_reply = api.client.post(f"/v1/clusters/{cluster}/actions", json={key: params})
    if r.status_code != 200:
        # The preview says the action would fail: it is refused or it fails.
        assert r.status_code in (400, 409), r.text
        if action_reply.status_code == 202:
            action = api.wait(action_reply.json()["action"])
            assert action["status"] == "FAILED", (r.json(), action)
        return
    assert action_reply.status_code == 202, action_reply.text
    preview = r.json()
    assert preview["seed"] == case["seed"]
    victims = [v["node_id"] for v in preview["victims"]]
    action = api.wait(action_reply.json()["action"])
    assert action["status"] == "SUCCEEDED", (case, preview, action["status_reason"])
    assert action["outputs"]["shrink"]["victims"] == victims
    assert action["outputs"]["shrink"]["rules"] == [v["rule"] for v in preview["victims"]]
    assert sorted(action["outputs"].get("nodes_removed", [])) == sorted(victims)
    assert set(api.member_ids(cluster)) == set(members) - set(victims)
