"""senlin.policy.affinity-1.0 on the real Nova bed: server groups made, used and deleted.

The bed has two compute hosts (compute1 in az1, compute2 in az2, Nova's fake virt driver), so
an anti-affinity group holds at most two servers: a third is refused by Nova's scheduler
(ServerGroupAntiAffinityFilter), which herd must report as the node's ERROR with Nova's text.
What exists is checked in Nova's own lists (servers, server groups), never through herd.
"""

from __future__ import annotations

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
from tests.functional.engine.harness import running_engine
from tests.nova_bed.fixture import NovaCloud
from tests.waiting import wait_for

from herd.types import ActionName

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

TINY_PROPERTIES = {"flavor": "m1.tiny", "image": "cirros-0.4.0-x86_64-disk"}
TINY: dict[str, Any] = {"type": "os.nova.server", "version": "1.0", "properties": TINY_PROPERTIES}


def _affinity(herd: httpx.Client, name: str, **properties: Any) -> str:
    spec = {"type": "senlin.policy.affinity", "version": "1.0", "properties": properties}
    return create_policy(herd, name, spec)


def _hosts(nova: Any, cluster: str) -> dict[str, str]:
    """server id -> compute host, for this cluster's servers in Nova."""
    return {
        s.id: s.compute_host for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster
    }


def test_anti_affinity_spreads_then_refuses_a_member_more_than_hosts(
    herd: httpx.Client, nova: Any
) -> None:
    profile = create_profile(herd, "anti", TINY)
    cluster = create_cluster(herd, "anti", profile["id"], 0)["id"]
    policy = _affinity(herd, "anti")  # Senlin's default: anti-affinity, a group herd names
    attach = act(herd, cluster, {"policy_attach": {"policy_id": policy}})
    assert attach["status"] == "SUCCEEDED", attach["status_reason"]
    group = nova.compute.find_server_group(f"server_group_{attach['id'][:8]}")
    assert group is not None and group.policy == "anti-affinity"

    # one boot at a time: two parallel boots into a strict anti-affinity group race inside Nova
    # (both scheduled to one host, the late check refuses one, its retry may find no host left;
    # docs/policies.md), which is Nova's behaviour, not what this test is about
    for _ in range(2):
        action = act(herd, cluster, {"scale_out": {"count": 1}})
        assert action["status"] == "SUCCEEDED", action["status_reason"]
    hosts = _hosts(nova, cluster)
    assert sorted(hosts.values()) == ["compute1", "compute2"]  # one per host
    assert set(nova.compute.get_server_group(group.id).member_ids) == set(hosts)
    for member in members_of(herd, cluster):
        assert member["data"]["placement"]["servergroup"] == group.id

    # a third member: no host is left that holds no member of the group
    action = act(herd, cluster, {"scale_out": {"count": 1}})
    assert action["status"] == "FAILED"
    failed = [m for m in members_of(herd, cluster) if m["status"] == "ERROR"]
    assert len(failed) == 1, members_of(herd, cluster)
    assert "No valid host was found" in failed[0]["status_reason"], failed[0]["status_reason"]
    assert herd.get(f"/v1/clusters/{cluster}").json()["cluster"]["status"] == "WARNING"
    assert _hosts(nova, cluster) == hosts  # the refused server was deleted, nothing leaked

    detach = act(herd, cluster, {"policy_detach": {"policy_id": policy}})
    assert detach["status"] == "SUCCEEDED", detach["status_reason"]
    assert nova.compute.find_server_group(group.id) is None  # herd made it, herd deleted it
    delete_cluster(herd, cluster)
    assert _hosts(nova, cluster) == {}


def test_affinity_with_an_existing_group_keeps_replacements_in_it(
    herd: httpx.Client, nova: Any
) -> None:
    group = nova.compute.create_server_group(name="ops-together", policy="affinity")
    try:
        profile = create_profile(herd, "together", TINY)
        cluster = create_cluster(herd, "together", profile["id"], 0)["id"]
        wrong = _affinity(
            herd, "wrong", servergroup={"name": "ops-together", "policies": "anti-affinity"}
        )
        refused = act(herd, cluster, {"policy_attach": {"policy_id": wrong}})
        assert refused["status"] == "FAILED"
        assert refused["status_reason"] == (
            "Policies specified (anti-affinity) doesn't match that of the existing servergroup "
            "(affinity)."
        )
        policy = _affinity(
            herd, "together", servergroup={"name": "ops-together", "policies": "affinity"}
        )
        attach = act(herd, cluster, {"policy_attach": {"policy_id": policy}})
        assert attach["status"] == "SUCCEEDED", attach["status_reason"]

        action = act(herd, cluster, {"scale_out": {"count": 3}})
        assert action["status"] == "SUCCEEDED", action["status_reason"]
        hosts = _hosts(nova, cluster)
        assert len(hosts) == 3 and len(set(hosts.values())) == 1  # all on one host
        assert set(nova.compute.get_server_group(group.id).member_ids) == set(hosts)

        # a replacement boots into the same group (the node keeps its placement)
        old = members_of(herd, cluster)[0]
        r = herd.patch(f"/v1/clusters/{cluster}/nodes/{old['id']}", json={"mark_unhealthy": True})
        assert r.status_code == 200, r.text
        action = act(herd, cluster, {"replace_unhealthy": {}})
        assert action["status"] == "SUCCEEDED", action["status_reason"]
        new = next(m for m in members_of(herd, cluster) if m["index"] == old["index"])
        assert new["physical_id"] != old["physical_id"]
        assert new["physical_id"] in nova.compute.get_server_group(group.id).member_ids

        def old_left() -> bool:  # Nova drops a deleted server from its group a moment later
            return old["physical_id"] not in nova.compute.get_server_group(group.id).member_ids

        wait_for(old_left, timeout=60)
        assert len(set(_hosts(nova, cluster).values())) == 1

        detach = act(herd, cluster, {"policy_detach": {"policy_id": policy}})
        assert detach["status"] == "SUCCEEDED", detach["status_reason"]
        assert nova.compute.find_server_group(group.id) is not None  # not herd's to delete
        delete_cluster(herd, cluster)
        assert _hosts(nova, cluster) == {}
    finally:
        nova.compute.delete_server_group(group.id, ignore_missing=True)


def test_a_cluster_deleted_with_the_binding_takes_the_group_with_it(
    nova_cloud: NovaCloud, nova: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's CLUSTER_DELETE with the policy still attached (the API refuses that, so
    the engine is driven directly, as tests/functional does): as Senlin detached every policy
    before deleting a cluster, the group herd made is deleted with the servers."""
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(nova_cloud.clouds_yaml))
    with running_engine(tmp_path, nova_cloud=nova_cloud.cloud_name, nova_timeout=120) as harness:
        profile = harness.profile(dict(TINY_PROPERTIES), type_="os.nova.server")
        cluster = harness.cluster(0, profile=profile)
        spec = {"type": "senlin.policy.affinity", "version": "1.0", "properties": {}}
        policy = harness.policy(spec, name="anti")
        attach = harness.run(
            ActionName.CLUSTER_ATTACH_POLICY, cluster, {"policy_id": policy, "enabled": True}
        )
        assert attach.status == "SUCCEEDED", attach.status_reason
        group = nova.compute.find_server_group(f"server_group_{attach.id[:8]}")
        assert group is not None
        grown = harness.run(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": 1}, timeout=240)
        assert grown.status == "SUCCEEDED", grown.status_reason
        assert len(nova.compute.get_server_group(group.id).member_ids) == 1  # the new one

        deleted = harness.run(ActionName.CLUSTER_DELETE, cluster, timeout=240)
        assert deleted.status == "SUCCEEDED", deleted.status_reason
        assert nova.compute.find_server_group(group.id) is None
        assert _hosts(nova, cluster) == {}
