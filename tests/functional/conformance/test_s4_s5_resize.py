"""S4 and S5: CLUSTER_RESIZE without and with a scaling policy."""

from __future__ import annotations

import pytest
from tests.functional.conformance.conftest import Api, deletion_data, deletion_spec
from tests.functional.conformance.test_s3_scale_in_with_scaling_policy import scaling_spec


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_s4_shrinking_resize_generates_the_count(api: Api, version: str) -> None:
    cluster = api.cluster(5)
    n = api.member_ids(cluster)
    api.attach(
        cluster, deletion_spec(version, criteria="OLDEST_FIRST", reduce_desired_capacity=False)
    )
    action = api.act(cluster, {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 3}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[0], n[1]], reduce=False),
    }
    assert api.member_ids(cluster) == n[2:]
    assert api.get_cluster(cluster)["desired_capacity"] == 3
    ends = [
        (e["status"], e["status_reason"]) for e in api.events(oid=cluster, action="CLUSTER_RESIZE")
    ]
    assert ("SUCCEEDED", "Cluster resize succeeded.") in ends

    # Percentages apply to the real member count: -50% of 3 is -1 (truncated).
    action = api.act(
        cluster, {"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -50}}
    )
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["deletion"] == deletion_data([n[2]], reduce=False)
    assert api.member_ids(cluster) == n[3:]


def test_s4_growing_resize_chooses_no_victim(api: Api) -> None:
    cluster = api.cluster(2)
    n = api.member_ids(cluster)
    api.attach(cluster, deletion_spec(criteria="OLDEST_FIRST"))
    action = api.act(cluster, {"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 1}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert "deletion" not in action["data"]
    assert action["data"]["creation"] == {"count": 1}
    members = api.member_ids(cluster)
    assert members[:2] == n and len(members) == 3


def test_s4_resize_error_fails_with_the_size_text(api: Api) -> None:
    cluster = api.cluster(3, min_size=2)
    api.attach(cluster, deletion_spec(criteria="OLDEST_FIRST"))
    action = api.act(
        cluster,
        {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 1, "strict": False}},
    )
    # Non-strict: truncated to min_size, so one victim, not two.
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["deletion"]["count"] == 1
    assert len(api.member_ids(cluster)) == 2


def test_s5_resize_with_a_scaling_policy_uses_the_resize_count(api: Api) -> None:
    cluster = api.cluster(5)
    n = api.member_ids(cluster)
    # The scaling policy targets CLUSTER_SCALE_IN only; a resize is sized by its own inputs.
    api.attach(cluster, scaling_spec(3), name="sp")
    api.attach(cluster, deletion_spec(criteria="YOUNGEST_FIRST", destroy_after_deletion=False))
    action = api.act(cluster, {"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -2}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[4], n[3]], destroy=False),
    }
    assert api.member_ids(cluster) == n[:3]
    for orphan in (n[3], n[4]):
        node = api.node(orphan)
        assert node is not None and not node["cluster_id"] and node["status"] == "ACTIVE"
    assert api.get_cluster(cluster)["desired_capacity"] == 3
