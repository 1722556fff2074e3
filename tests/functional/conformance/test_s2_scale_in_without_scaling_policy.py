"""S2: CLUSTER_SCALE_IN without a scaling policy: count from the request, default 1."""

from __future__ import annotations

import pytest
from tests.functional.conformance.conftest import Api, deletion_data, deletion_spec


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_s2_default_count_is_one_then_count_two(api: Api, version: str) -> None:
    cluster = api.cluster(5)
    n = api.member_ids(cluster)  # oldest first
    api.attach(
        cluster,
        deletion_spec(
            version, criteria="OLDEST_FIRST", grace_period=1, reduce_desired_capacity=False
        ),
    )
    action = api.act(cluster, {"scale_in": {}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[0]], grace=1, reduce=False),
    }
    # The grace period is waited before the deletion starts.
    assert action["end_time"] - action["start_time"] >= 1.0
    assert api.member_ids(cluster) == n[1:]
    assert api.node(n[0]) is None
    assert ("DELETED", "Node deleted successfully.") in api.node_events(n[0], "CLUSTER_SCALE_IN")

    action = api.act(cluster, {"scale_in": {"count": 2}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["deletion"] == deletion_data([n[1], n[2]], grace=1, reduce=False)
    assert api.member_ids(cluster) == [n[3], n[4]]
    # A scale-in always sets the desired capacity (reduce_desired_capacity is for deletions).
    got = api.get_cluster(cluster)
    assert got["desired_capacity"] == 2 and got["status"] == "ACTIVE"
    ends = [
        (e["status"], e["status_reason"])
        for e in api.events(oid=cluster, action="CLUSTER_SCALE_IN")
    ]
    assert ends.count(("SUCCEEDED", "Cluster scaling succeeded.")) == 2


def test_s2_youngest_first_skips_protected_and_orders_by_cost(api: Api) -> None:
    cluster = api.cluster(5)
    n = api.member_ids(cluster)
    api.attach(cluster, deletion_spec(criteria="YOUNGEST_FIRST", destroy_after_deletion=False))
    api.set_metadata(n[4], {"protected": True})  # the youngest is protected
    api.set_metadata(n[0], {"deletion_cost": -5})  # the oldest is the cheapest to lose
    action = api.act(cluster, {"scale_in": {"count": 2}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    # Lower deletion_cost first within the rank, then the criterion; never the protected one.
    assert action["data"]["deletion"] == deletion_data([n[0], n[3]], destroy=False)
    assert api.member_ids(cluster) == [n[1], n[2], n[4]]
    for orphan in (n[0], n[3]):
        node = api.node(orphan)
        assert node is not None and not node["cluster_id"] and node["status"] == "ACTIVE"
    assert api.get_cluster(cluster)["desired_capacity"] == 3


def test_s2_too_few_unprotected_members_fails_and_changes_nothing(api: Api) -> None:
    cluster = api.cluster(3)
    n = api.member_ids(cluster)
    api.attach(cluster, deletion_spec(criteria="OLDEST_FIRST"))
    api.set_metadata(n[0], {"protected": True})
    api.set_metadata(n[1], {"protected": "true"})
    action = api.act(cluster, {"scale_in": {"count": 2}})
    assert action["status"] == "FAILED"
    assert action["status_reason"] == (
        "Policy check failure: Failed policy 'pol': "
        "Cannot remove 2 nodes: only 1 unprotected member"
    )
    assert action["data"]["status"] == "ERROR"
    assert api.member_ids(cluster) == n
    assert api.get_cluster(cluster)["desired_capacity"] == 3
