"""S7: NODE_DELETE of a member: the policy copies its values, the node is the candidate."""

from __future__ import annotations

import pytest
from tests.functional.conformance.conftest import Api, V, deletion_data, deletion_spec


def delete_node(api: Api, node_id: str) -> dict[str, object]:
    r = api.client.delete(f"/v1/nodes/{node_id}", headers=V)
    assert r.status_code == 202, r.text
    return api.wait(r.headers["Location"].rsplit("/", 1)[1])


@pytest.mark.parametrize(("version", "reduce"), [("1.0", True), ("1.1", False)])
def test_s7_node_delete_writes_the_node_as_the_only_candidate(
    api: Api, version: str, reduce: bool
) -> None:
    cluster = api.cluster(3)
    n = api.member_ids(cluster)
    api.attach(
        cluster,
        deletion_spec(
            version, criteria="OLDEST_FIRST", grace_period=0, reduce_desired_capacity=reduce
        ),
    )
    # The youngest is deleted although the criterion would pick the oldest.
    action = delete_node(api, n[2])
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[2]], reduce=reduce),
    }
    assert api.node(n[2]) is None
    assert api.member_ids(cluster) == n[:2]
    got = api.get_cluster(cluster)
    assert got["desired_capacity"] == (2 if reduce else 3)
    assert got["status"] == ("ACTIVE" if reduce else "WARNING")
    assert any(
        e["action"] == "NODE_DELETE" and e["status"] == "SUCCEEDED" for e in api.events(oid=n[2])
    )


def test_s7_with_destroy_after_deletion_false_the_node_leaves_and_lives(api: Api) -> None:
    """S7 copies destroy_after_deletion into the action's data; S1's rule then applies."""
    cluster = api.cluster(3)
    n = api.member_ids(cluster)
    api.attach(cluster, deletion_spec("1.1", destroy_after_deletion=False))
    action = delete_node(api, n[1])
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    data = action["data"]
    assert isinstance(data, dict) and data["deletion"]["destroy_after_deletion"] is False
    kept = api.node(n[1])
    assert kept is not None  # not destroyed: an orphan node now, serving nothing for the cluster
    assert (kept["cluster_id"], kept["index"], kept["status"]) == ("", -1, "ACTIVE")
    assert kept["physical_id"]
    assert api.member_ids(cluster) == [n[0], n[2]]
    # No tombstone is left behind: the node can be deleted (destroyed) later as an orphan.
    again = delete_node(api, n[1])
    assert again["status"] == "SUCCEEDED", again["status_reason"]
    assert api.node(n[1]) is None
