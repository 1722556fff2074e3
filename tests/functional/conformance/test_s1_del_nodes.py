"""S1: CLUSTER_DEL_NODES. The request names the victims; the policy says how they go."""

from __future__ import annotations

from tests.functional.conformance.conftest import Api, deletion_data, deletion_spec


def test_s1_destroy_reduce_v1_0(api: Api) -> None:
    cluster = api.cluster(4)
    n = api.member_ids(cluster)
    api.attach(
        cluster,
        deletion_spec(
            "1.0",
            criteria="OLDEST_FIRST",
            destroy_after_deletion=True,
            grace_period=0,
            reduce_desired_capacity=True,
        ),
    )
    # The request's own destroy_after_deletion (false) loses to the policy, as in Senlin.
    action = api.act(cluster, {"del_nodes": {"nodes": [n[3], n[1]]}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    # Explicit candidates are taken verbatim, in request order, whatever the criteria.
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[3], n[1]], destroy=True, reduce=True),
    }
    assert action["outputs"]["nodes_removed"] == sorted([n[1], n[3]])
    assert api.member_ids(cluster) == [n[0], n[2]]
    assert api.node(n[1]) is None and api.node(n[3]) is None
    got = api.get_cluster(cluster)
    assert got["desired_capacity"] == 2 and got["status"] == "ACTIVE"
    for victim in (n[1], n[3]):
        assert ("DELETED", "Node deleted successfully.") in api.node_events(
            victim, "CLUSTER_DEL_NODES"
        )
    ends = [
        (e["status"], e["status_reason"])
        for e in api.events(oid=cluster, action="CLUSTER_DEL_NODES")
    ]
    assert ("SUCCEEDED", "Completed deleting nodes.") in ends


def test_s1_orphans_keep_running_and_capacity_kept_v1_1(api: Api) -> None:
    cluster = api.cluster(3)
    n = api.member_ids(cluster)
    api.attach(
        cluster,
        deletion_spec(
            "1.1",
            criteria="YOUNGEST_FIRST",
            destroy_after_deletion=False,
            grace_period=0,
            reduce_desired_capacity=False,
        ),
    )
    # A protected member named explicitly is still removed: protection is for scale-in.
    api.set_metadata(n[0], {"protected": True})
    action = api.act(cluster, {"del_nodes": {"nodes": [n[0]], "destroy_after_deletion": True}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[0]], destroy=False, reduce=False),
    }
    orphan = api.node(n[0])
    assert orphan is not None
    assert not orphan["cluster_id"] and orphan["index"] == -1
    assert orphan["status"] == "ACTIVE" and orphan["physical_id"]
    assert api.member_ids(cluster) == [n[1], n[2]]
    got = api.get_cluster(cluster)
    # reduce_desired_capacity false: the cluster still wants 3 and is short of one.
    assert got["desired_capacity"] == 3
    assert got["status"] == "WARNING"
    assert ("ACTIVE", "Node left cluster") in api.node_events(n[0], "CLUSTER_DEL_NODES")
    orphans = [x for x in api.client.get("/v1/nodes").json()["nodes"] if not x["cluster_id"]]
    assert [x["id"] for x in orphans] == [n[0]]
