"""S6: deletion across availability zones (zone placement policy, then the deletion policy)."""

from __future__ import annotations

import pytest
from tests.functional.conformance.conftest import Api, deletion_data, deletion_spec
from tests.functional.conformance.placement_helpers import spread_cluster

KEY = "zones"


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_s6_zones_per_zone_counts_and_criteria(api: Api, version: str) -> None:
    cluster, groups = spread_cluster(api, KEY)
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
        "deletion": deletion_data(expected, **{KEY: {"G-1": 2, "G-2": 1}}),
    }
    left = set(api.member_ids(cluster))
    assert left == {groups["G-1"][2], groups["G-1"][3], groups["G-2"][1]}
    assert api.get_cluster(cluster)["desired_capacity"] == 3
    for victim in expected:
        assert api.node(victim) is None
        assert ("DELETED", "Node deleted successfully.") in api.node_events(
            victim, "CLUSTER_SCALE_IN"
        )


def test_s6_zones_short_group_is_clamped_and_redistributed(api: Api) -> None:
    cluster, groups = spread_cluster(api, KEY)
    for member in groups["G-2"]:
        api.set_metadata(member, {"protected": True})
    api.attach(cluster, deletion_spec(criteria="YOUNGEST_FIRST", destroy_after_deletion=False))
    action = api.act(cluster, {"scale_in": {"count": 3}})
    # Senlin crashed here (IndexError); herd takes G-2's share from G-1.
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    youngest = list(reversed(groups["G-1"]))[:3]
    assert action["data"]["deletion"] == deletion_data(
        youngest, destroy=False, **{KEY: {"G-1": 2, "G-2": 1}}
    )
    assert set(api.member_ids(cluster)) == {groups["G-1"][0], *groups["G-2"]}
    for orphan in youngest:
        node = api.node(orphan)
        assert node is not None and not node["cluster_id"] and node["status"] == "ACTIVE"
