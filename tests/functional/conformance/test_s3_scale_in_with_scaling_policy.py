"""S3: CLUSTER_SCALE_IN with a scaling policy: its ``deletion.count`` is the count."""

from __future__ import annotations

import pytest
from tests.functional.conformance.conftest import Api, deletion_data, deletion_spec


def scaling_spec(
    number: int, kind: str = "CHANGE_IN_CAPACITY", **extra: object
) -> dict[str, object]:
    return {
        "type": "senlin.policy.scaling",
        "version": "1.0",
        "properties": {
            "event": "CLUSTER_SCALE_IN",
            "adjustment": {"type": kind, "number": number, **extra},
        },
    }


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_s3_scaling_policy_count_feeds_the_deletion_policy(api: Api, version: str) -> None:
    cluster = api.cluster(5)
    n = api.member_ids(cluster)
    api.attach(cluster, scaling_spec(2), name="sp")
    api.attach(cluster, deletion_spec(version, criteria="OLDEST_FIRST", grace_period=0))
    action = api.act(cluster, {"scale_in": {}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[0], n[1]]),
    }
    assert api.member_ids(cluster) == n[2:]
    got = api.get_cluster(cluster)
    assert got["desired_capacity"] == 3 and got["status"] == "ACTIVE"
    for victim in n[:2]:
        assert ("DELETED", "Node deleted successfully.") in api.node_events(
            victim, "CLUSTER_SCALE_IN"
        )


def test_s3_request_count_wins_over_adjustment_and_percentages(api: Api) -> None:
    cluster = api.cluster(4)
    n = api.member_ids(cluster)
    api.attach(cluster, scaling_spec(50, "CHANGE_IN_PERCENTAGE"), name="sp")
    api.attach(cluster, deletion_spec(criteria="YOUNGEST_FIRST"))
    action = api.act(cluster, {"scale_in": {"count": 1}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["deletion"] == deletion_data([n[3]])
    # Without a count, 50% of 3 members is 1 (truncated, at least min_step 1).
    action = api.act(cluster, {"scale_in": {}})
    assert action["data"]["deletion"] == deletion_data([n[2]])
    assert api.member_ids(cluster) == n[:2]


def test_s3_scaling_policy_refusal_stops_before_the_deletion_policy(api: Api) -> None:
    cluster = api.cluster(2, min_size=1)
    n = api.member_ids(cluster)
    api.attach(cluster, scaling_spec(2), name="sp")
    api.attach(cluster, deletion_spec(criteria="OLDEST_FIRST"))
    action = api.act(cluster, {"scale_in": {}})
    assert action["status"] == "FAILED"
    assert action["status_reason"].startswith("Policy check failure: Failed policy 'sp': ")
    assert "candidates" not in (action["data"].get("deletion") or {})
    assert api.member_ids(cluster) == n
