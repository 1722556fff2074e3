"""Region placement on the Nova bed's two regions: each node's server goes through its region.

The bed's RegionTwo is the same Nova behind a second nova-api (tests/nova_bed/regions.py says
why), so both regions list the same servers: what this test can and does check is that every
request about a node's server (its boot's polls, its delete) went to its own region's
endpoint, in the nova-api logs, and that the region split of herd's placement and deletion
policies holds on real servers. What it cannot check: two regions with different servers,
hosts or zones, or one region down while the other serves.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.e2e.nova.herd_api import (
    act,
    create_cluster,
    create_policy,
    create_profile,
    delete_cluster,
    members_of,
    nova_servers,
)
from tests.nova_bed.bed import BedInfo
from tests.nova_bed.fixture import NovaCloud
from tests.nova_bed.regions import API_SERVICE, REGIONS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

LOGS = {REGIONS[0]: "nova-api.log", REGIONS[1]: f"{API_SERVICE}.log"}


@pytest.fixture(scope="module")
def bed(nova_cloud: NovaCloud) -> BedInfo:
    """The bed, with its two regions (the module's ``herd`` is served against it)."""
    entry = json.loads(nova_cloud.clouds_yaml.read_text())["clouds"][nova_cloud.cloud_name]
    if len(entry.get("regions") or []) < 2:
        pytest.skip("this Nova bed has one region (started by a tree without regions.py)")
    return nova_cloud.info


@pytest.fixture(scope="module")
def cloud(nova_cloud: NovaCloud, bed: BedInfo) -> NovaCloud:
    return nova_cloud


def _asked_about(cloud: NovaCloud) -> dict[str, set[str]]:
    """region -> the server ids its nova-api logged a request about."""
    found = {}
    for region, log in LOGS.items():
        text = (Path(cloud.info.logs) / log).read_text(errors="replace")
        found[region] = set(re.findall(r'"[A-Z]+ /v2\.1/servers/([0-9a-f-]{36})', text))
    return found


def _regions_of(members: list[dict[str, Any]]) -> dict[str, str]:
    """server id -> the region herd placed its node in."""
    return {m["physical_id"]: m["data"]["placement"]["region_name"] for m in members}


def test_region_split_on_real_servers(herd: httpx.Client, cloud: NovaCloud) -> None:
    nova = cloud.connect()
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.tiny", "image": "cirros-0.4.0-x86_64-disk"},
    }
    profile = create_profile(herd, "regional", spec)
    cluster = create_cluster(herd, "regional", profile["id"], 0)["id"]
    regions = create_policy(
        herd,
        "regions",
        {
            "type": "senlin.policy.region_placement",
            "version": "1.0",
            "properties": {"regions": [{"name": name, "weight": 100} for name in REGIONS]},
        },
    )
    deletion = create_policy(
        herd,
        "deletion",
        {
            "type": "senlin.policy.deletion",
            "version": "1.1",
            "properties": {"criteria": "YOUNGEST_FIRST"},
        },
    )
    for policy in (regions, deletion):
        attached = act(herd, cluster, {"policy_attach": {"policy_id": policy}})
        assert attached["status"] == "SUCCEEDED", attached["status_reason"]

    action = act(herd, cluster, {"scale_out": {"count": 4}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    elders = {
        m["physical_id"]: m["data"]["placement"]["region_name"] for m in members_of(herd, cluster)
    }
    action = act(herd, cluster, {"scale_out": {"count": 2}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    members = members_of(herd, cluster)
    placed = _regions_of(members)
    assert Counter(placed.values()) == {REGIONS[0]: 3, REGIONS[1]: 3}
    in_nova = {s.id for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster}
    assert set(placed) == in_nova
    asked = _asked_about(cloud)
    for server_id, region in placed.items():  # every poll went to the node's own region
        other = REGIONS[1] if region == REGIONS[0] else REGIONS[0]
        assert server_id in asked[region] and server_id not in asked[other], (server_id, region)

    # scale-in by 2: one per region (the region policy), the youngest there (the deletion policy)
    action = act(herd, cluster, {"scale_in": {"count": 2}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    left = {
        m["physical_id"]: m["data"]["placement"]["region_name"] for m in members_of(herd, cluster)
    }
    assert left == elders and Counter(left.values()) == {REGIONS[0]: 2, REGIONS[1]: 2}
    assert {s.id for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster} == set(
        left
    )
    asked = _asked_about(cloud)
    for server_id in set(placed) - set(left):  # deleted through its own region
        other = REGIONS[1] if placed[server_id] == REGIONS[0] else REGIONS[0]
        assert server_id not in asked[other]

    for policy in (regions, deletion):
        detached = act(herd, cluster, {"policy_detach": {"policy_id": policy}})
        assert detached["status"] == "SUCCEEDED", detached["status_reason"]
    delete_cluster(herd, cluster)
    assert [s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster] == []


def test_profiles_name_regions_the_cloud_has(herd: httpx.Client) -> None:
    """``context.region_name`` is checked against clouds.yaml's regions at profile create."""

    def validate(region: str) -> httpx.Response:
        properties = {
            "flavor": "m1.tiny",
            "image": "cirros-0.4.0-x86_64-disk",
            "context": {"region_name": region},
        }
        spec = {"type": "os.nova.server", "version": "1.0", "properties": properties}
        return herd.post("/v1/profiles/validate", json={"profile": {"spec": spec}})

    assert validate(REGIONS[1]).status_code == 200
    refused = validate("RegionNine")
    assert refused.status_code == 400, refused.text
    assert "RegionNine" in refused.json()["error"]["message"]
