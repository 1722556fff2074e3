"""S6: deletion across availability zones or regions (a placement policy, then the deletion one).

Every scenario runs for zones and for regions: the two placement policies write the
same plan under ``zones`` or ``regions``.
"""

from __future__ import annotations

import pytest
from tests.functional.conformance.conftest import Api, deletion_data, deletion_spec
from tests.functional.conformance.placement_helpers import FIELD, spread_cluster

KEYS = pytest.mark.parametrize("key", ["zones", "regions"])


@KEYS
@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_s6_per_group_counts_and_criteria(api: Api, key: str, version: str) -> None:
    cluster, groups = spread_cluster(api, key)
    assert {g: len(m) for g, m in groups.items()} == {"G-1": 4, "G-2": 2}
    api.attach(cluster, deletion_spec(version, criteria="OLDEST_FIRST"))
    action = api.act(cluster, {"scale_in": {"count": 3}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    # Quotas after: floor(3*2/3)=2 and floor(3*1/3)=1, so G-1 gives 2 and G-2 gives 1;
    # groups in name order, the oldest of each first.
    expected = [groups["G-1"][0], groups["G-1"][1], groups["G-2"][0]]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data(expected) | {key: {"G-1": 2, "G-2": 1}},
    }
    left = set(api.member_ids(cluster))
    assert left == {groups["G-1"][2], groups["G-1"][3], groups["G-2"][1]}
    assert api.get_cluster(cluster)["desired_capacity"] == 3
    for victim in expected:
        assert api.node(victim) is None
        assert ("DELETED", "Node deleted successfully.") in api.node_events(
            victim, "CLUSTER_SCALE_IN"
        )


@KEYS
def test_s6_short_group_is_clamped_and_redistributed(api: Api, key: str) -> None:
    cluster, groups = spread_cluster(api, key)
    for member in groups["G-2"]:
        api.set_metadata(member, {"protected": True})
    api.attach(cluster, deletion_spec(criteria="YOUNGEST_FIRST", destroy_after_deletion=False))
    action = api.act(cluster, {"scale_in": {"count": 3}})
    # Senlin crashed here (IndexError); herd takes G-2's share from G-1.
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    youngest = list(reversed(groups["G-1"]))[:3]
    assert action["data"]["deletion"] == deletion_data(youngest, destroy=False) | {
        key: {"G-1": 2, "G-2": 1}
    }
    assert set(api.member_ids(cluster)) == {groups["G-1"][0], *groups["G-2"]}
    for orphan in youngest:
        node = api.node(orphan)
        assert node is not None and not node["cluster_id"] and node["status"] == "ACTIVE"


@KEYS
def test_s6_plan_is_honoured_without_a_deletion_policy(api: Api, key: str) -> None:
    """Regression: the engine used to ignore the placement plan without a deletion policy.

    The preview honoured it and said so; the engine ranked RANDOM over every member, so
    a scale-in could take all three from one group. Twenty seeds of RANDOM each keep
    the 2:1 split (random choice over all six would keep it with probability 0.6 each).
    """
    cluster, groups = spread_cluster(api, key)
    group_of = {node: name for name, members in groups.items() for node in members}
    for seed in range(20):
        r = api.client.post(
            f"/v1/clusters/{cluster}/actions",
            json={"preview_scale_in": {"count": 3, "seed": seed}},
        )
        assert r.status_code == 200, r.text
        split = sorted(group_of[v["node_id"]] for v in r.json()["victims"])
        assert split == ["G-1", "G-1", "G-2"], (seed, r.json())
    action = api.act(cluster, {"scale_in": {"count": 3, "seed": 7}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["deletion"] == {"count": 3, key: {"G-1": 2, "G-2": 1}}
    removed = action["outputs"]["nodes_removed"]
    assert sorted(group_of[node] for node in removed) == ["G-1", "G-1", "G-2"]
    left = api.members(cluster)
    assert sorted(n["data"]["placement"][FIELD[key]] for n in left) == ["G-1", "G-1", "G-2"]
