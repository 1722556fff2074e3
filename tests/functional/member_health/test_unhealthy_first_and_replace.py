"""What unhealthy means: first to go on every shrink, and replaced under the same name."""

from __future__ import annotations

import time

import pytest
from tests.functional.conformance.conftest import Api, deletion_spec
from tests.functional.member_health.test_mark_unhealthy_api import error, patch


def mark(api: Api, cluster: str, *nodes: str) -> None:
    for node in nodes:
        r = patch(api, cluster, node, {"mark_unhealthy": True, "resource_status_reason": "app"})
        assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    "criteria", ["OLDEST_FIRST", "YOUNGEST_FIRST", "OLDEST_PROFILE_FIRST", "RANDOM", None]
)
def test_check_failed_members_go_first_on_scale_in_and_resize(
    api: Api, criteria: str | None
) -> None:
    cluster = api.cluster(6)
    n = api.member_ids(cluster)
    if criteria:
        api.attach(cluster, deletion_spec(criteria=criteria))
    # Marked members sit in the middle of the age order, so no criterion picks them alone.
    mark(api, cluster, n[2], n[3])
    action = api.act(cluster, {"scale_in": {"count": 2}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert sorted(action["outputs"]["nodes_removed"]) == sorted([n[2], n[3]])
    if criteria:
        assert sorted(action["data"]["deletion"]["candidates"]) == sorted([n[2], n[3]])
    mark(api, cluster, n[4])
    action = api.act(cluster, {"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -1}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["outputs"]["nodes_removed"] == [n[4]]
    assert api.member_ids(cluster) == [n[0], n[1], n[5]]


def test_replace_unhealthy_keeps_name_and_index_and_never_drops_below_min_size(api: Api) -> None:
    profile = api.profile(create_latency=0.3, delete_latency=0.3)
    cluster = api.cluster(4, profile_id=profile, min_size=4, one_by_one=False)
    before = {n["id"]: n for n in api.members(cluster)}
    old = sorted(before)[:2]
    mark(api, cluster, *old)
    error(
        api.client.post(
            f"/v1/clusters/{cluster}/actions", json={"replace_unhealthy": {"batch_size": 0}}
        ),
        400,
        "The value for the batch_size field must be greater than or equal to 1.",
        "BadRequest",
    )
    r = api.client.post(f"/v1/clusters/{cluster}/actions", json={"replace_unhealthy": {}})
    assert r.status_code == 202, r.text
    action_id = r.json()["action"]
    seen_active: list[int] = []
    seen_total: list[int] = []
    while True:
        members = api.members(cluster)
        seen_active.append(sum(1 for m in members if m["status"] == "ACTIVE"))
        seen_total.append(len(members))
        status = api.client.get(f"/v1/actions/{action_id}").json()["action"]["status"]
        if status in ("SUCCEEDED", "FAILED", "CANCELLED"):
            break
        time.sleep(0.02)
    action = api.wait(action_id)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["outputs"]["nodes_replaced"] == old
    assert min(seen_active) >= 4, seen_active
    assert max(seen_total) == 5  # one at a time (batch_size 1): a replacement, then the old goes
    after = {n["id"]: n for n in api.members(cluster)}
    assert sorted((n["name"], n["index"]) for n in after.values()) == sorted(
        (n["name"], n["index"]) for n in before.values()
    )
    for gone in old:
        assert api.node(gone) is None
        twin = next(n for n in after.values() if n["index"] == before[gone]["index"])
        assert twin["id"] != gone and twin["name"] == before[gone]["name"]
        assert twin["status"] == "ACTIVE" and twin["health"] != "CHECK_FAILED"
    assert set(before) - set(old) <= set(after)
    got = api.get_cluster(cluster)
    assert got["desired_capacity"] == 4 and got["status"] == "ACTIVE"
