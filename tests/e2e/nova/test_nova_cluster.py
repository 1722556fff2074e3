"""Clusters of real Nova servers through herd's API (issue 23), against the Nova bed.

The run's shared Nova bed (``nova_cloud``) and one ``herd serve`` for the module. Every check
of what exists is made in Nova's own server list, through openstacksdk, never through herd;
the bed is shared with other tests, so each test counts only its own servers (by the
``cluster_id`` metadata herd writes, or by id).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
import yaml
from tests.e2e.nova.herd_api import (
    IMAGE,
    V,
    act,
    create_cluster,
    create_policy,
    create_profile,
    delete_cluster,
    herd_server,
    members_of,
    nova_servers,
)
from tests.nova_bed.bed import BedInfo
from tests.waiting import wait_for, wait_for_action

# the first Nova test may wait for the shared bed's whole start-up
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

# Senlin's documented sample spec (examples/profiles/nova_server/cirros_basic.yaml) minus its
# network 'private' (a stub Neutron without `make neutron-bed` has none; test_nova_network.py
# boots on it) and its key pair 'oskey'.
SENLIN_DOC_SPEC = """
type: os.nova.server
version: 1.0
properties:
  name: cirros_server
  flavor: 1
  image: "cirros-0.4.0-x86_64-disk"
  metadata:
    test_key: test_value
  user_data: |
    #!/bin/sh
    echo 'hello, world' > /tmp/test_file
"""


def test_profile_checks_against_the_cloud(herd: httpx.Client) -> None:
    def refused(properties: dict[str, Any]) -> str:
        spec = {"type": "os.nova.server", "version": "1.0", "properties": properties}
        r = herd.post("/v1/profiles/validate", json={"profile": {"spec": spec}})
        assert r.status_code == 400, r.text
        return str(r.json()["error"]["message"])

    base = {"flavor": "m1.tiny", "image": IMAGE}
    assert "The specified flavor 'm9' could not be found." in refused({**base, "flavor": "m9"})
    assert "The specified image 'nope' could not be found." in refused({**base, "image": "nope"})
    assert "availability_zone 'az9' could not be found" in refused(
        {**base, "availability_zone": "az9"}
    )
    assert "key_name 'oskey' could not be found" in refused({**base, "key_name": "oskey"})
    # a network the bed's Neutron does not have (it has 'private': test_nova_network.py)
    message = refused({**base, "networks": [{"network": "nonesuch"}]})
    assert message.startswith("properties.networks") and "nonesuch" in message
    spec = {"type": "os.nova.server", "version": "1.0", "properties": {**base, "flavor": "1"}}
    r = herd.post("/v1/profiles/validate", json={"profile": {"spec": spec}})
    assert r.status_code == 200, r.text  # the flavor by its id


def test_senlin_doc_spec_makes_a_server(herd: httpx.Client, nova: Any) -> None:
    profile = create_profile(herd, "senlin-doc", yaml.safe_load(SENLIN_DOC_SPEC))
    assert profile["type"] == "os.nova.server-1.0"
    r = herd.post("/v1/nodes", json={"node": {"name": "doc-node", "profile_id": profile["id"]}})
    assert r.status_code == 202, r.text
    action = wait_for_action(herd, r.headers["Location"].rsplit("/", 1)[1], timeout=240)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    node = herd.get(f"/v1/nodes/{r.json()['node']['id']}", params={"show_details": "true"})
    node = node.json()["node"]
    server = nova.compute.get_server(node["physical_id"])
    assert server.status == "ACTIVE" and server.name == "cirros_server"
    assert server.metadata["test_key"] == "test_value"
    assert server.metadata["cluster_node_id"] == node["id"]
    assert node["details"]["availability_zone"] == server.availability_zone
    assert node["data"]["placement"]["zone"] in ("az1", "az2")
    r = herd.delete(f"/v1/nodes/{node['id']}")
    assert r.status_code == 202
    wait_for(lambda: herd.get(f"/v1/nodes/{node['id']}").status_code == 404, timeout=120)
    assert all(s.id != server.id for s in nova_servers(nova))


def test_openstack_cluster_cli_takes_the_senlin_spec(herd: httpx.Client, tmp_path: Path) -> None:
    """The issue's first try, as a Senlin user would: ``openstack cluster profile create``."""
    spec_file = tmp_path / "server.yaml"
    spec_file.write_text(SENLIN_DOC_SPEC)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    auth = ["--os-auth-type", "none", "--os-endpoint", f"{herd.base_url}/v1"]
    openstack_cli = str(Path(sys.executable).parent / "openstack")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [openstack_cli, *auth, *args], capture_output=True, text=True, env=env, timeout=120
        )

    made = cli(
        "cluster", "profile", "create", "--spec-file", str(spec_file), "cli-server", "-f", "json"
    )
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["type"] == "os.nova.server-1.0"
    spec_file.write_text(SENLIN_DOC_SPEC.replace("flavor: 1", "flavor: m9.huge"))
    refused = cli("cluster", "profile", "create", "--spec-file", str(spec_file), "bad")
    assert refused.returncode != 0
    assert "The specified flavor 'm9.huge' could not be found." in refused.stdout + refused.stderr


def test_zone_cluster_of_20_scale_in_by_6_replace_and_delete(herd: httpx.Client, nova: Any) -> None:
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.tiny", "image": IMAGE},
    }
    profile = create_profile(herd, "tiny", spec)
    cluster = create_cluster(herd, "zoned", profile["id"], 0)["id"]
    zones = create_policy(
        herd,
        "zones",
        {
            "type": "senlin.policy.zone_placement",
            "version": "1.0",
            "properties": {
                "zones": [{"name": "az1", "weight": 100}, {"name": "az2", "weight": 100}]
            },
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
    for policy in (zones, deletion):
        assert act(herd, cluster, {"policy_attach": {"policy_id": policy}})["status"] == "SUCCEEDED"

    # 20 servers, the size: 14, then 6 younger ones (3 per zone)
    action = act(herd, cluster, {"scale_out": {"count": 14}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    elders = {m["physical_id"] for m in members_of(herd, cluster)}
    action = act(herd, cluster, {"scale_out": {"count": 6}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    members = members_of(herd, cluster)
    in_nova = {s.id: s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster}
    assert {m["physical_id"] for m in members} == set(in_nova)
    assert Counter(s.availability_zone for s in in_nova.values()) == {"az1": 10, "az2": 10}
    for m in members:  # the zone herd counts by is the one Nova reports
        assert m["data"]["placement"]["zone"] == in_nova[m["physical_id"]].availability_zone

    # scale-in by 6: the zone policy takes 3 per zone, the deletion policy the youngest there
    action = act(herd, cluster, {"scale_in": {"count": 6}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    in_nova = {s.id: s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster}
    assert Counter(s.availability_zone for s in in_nova.values()) == {"az1": 7, "az2": 7}
    assert set(in_nova) == elders
    assert {m["physical_id"] for m in members_of(herd, cluster)} == set(in_nova)

    # mark-unhealthy: replaced by a new server under the same node name
    old = members_of(herd, cluster)[0]
    r = herd.patch(f"/v1/clusters/{cluster}/nodes/{old['id']}", json={"mark_unhealthy": True})
    assert r.status_code == 200, r.text
    action = act(herd, cluster, {"replace_unhealthy": {}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    twin = next(m for m in members_of(herd, cluster) if m["index"] == old["index"])
    assert twin["name"] == old["name"] and twin["physical_id"] != old["physical_id"]
    servers = {s.id: s for s in nova_servers(nova)}
    assert old["physical_id"] not in servers
    assert servers[twin["physical_id"]].status == "ACTIVE"
    assert servers[twin["physical_id"]].name == old["name"]

    for policy in (zones, deletion):  # Senlin's rule: no cluster delete with policies attached
        assert act(herd, cluster, {"policy_detach": {"policy_id": policy}})["status"] == "SUCCEEDED"
    delete_cluster(herd, cluster)
    assert [s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster] == []


def test_server_deleted_in_nova_is_noticed_and_replaced(herd: httpx.Client, nova: Any) -> None:
    """LIFECYCLE_EVENTS: Nova's instance.delete.end reaches herd over the bus (no polling)."""
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "1", "image": IMAGE},
    }
    profile = create_profile(herd, "watched", spec)
    cluster = create_cluster(herd, "watched", profile["id"], 3)["id"]
    health = create_policy(
        herd,
        "events",
        {
            "type": "senlin.policy.health",
            "version": "1.1",
            "properties": {
                "detection": {
                    "detection_modes": [{"type": "LIFECYCLE_EVENTS"}],
                    "interval": 600,  # no polling would notice within the test
                    "node_update_timeout": 0,
                },
                "recovery": {"actions": [{"name": "RECREATE"}]},
            },
        },
    )
    assert act(herd, cluster, {"policy_attach": {"policy_id": health}})["status"] == "SUCCEEDED"

    def watched() -> bool:
        checks = herd.get(f"/v1/clusters/{cluster}/health").json()["cluster_health"]
        return checks["lease"] is not None

    wait_for(watched, timeout=60)
    time.sleep(2)  # the members are watched within a second of the lease
    victim = members_of(herd, cluster)[1]
    deleted = time.monotonic()
    nova.compute.delete_server(victim["physical_id"])

    def replaced() -> dict[str, Any] | None:
        node = herd.get(f"/v1/nodes/{victim['id']}").json()["node"]
        if node["status"] == "ACTIVE" and node["physical_id"] != victim["physical_id"]:
            return dict(node)
        return None

    found = wait_for(replaced, timeout=120, interval=0.1)
    print(f"\nNova delete to replaced (ACTIVE, new server): {time.monotonic() - deleted:.2f}s")
    assert found["name"] == victim["name"]
    r = herd.get("/v1/events", params={"oid": victim["id"], "limit": 100})
    reasons = [e["status_reason"] for e in r.json()["events"]]
    detected = f"server {victim['physical_id']} is being deleted (Nova: instance.delete.start)"
    assert any(detected in (reason or "") for reason in reasons), reasons
    servers = [s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster]
    assert sorted(s.id for s in servers) == sorted(
        m["physical_id"] for m in members_of(herd, cluster)
    )
    assert act(herd, cluster, {"policy_detach": {"policy_id": health}})["status"] == "SUCCEEDED"
    delete_cluster(herd, cluster)
    assert [s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster] == []


def test_operations_and_profile_updates_in_place(herd: httpx.Client, nova: Any) -> None:
    """Senlin's server operations, then new profiles: rename and metadata, resize, rebuild."""
    props = {"flavor": "m1.tiny", "image": IMAGE, "metadata": {"v": "1", "gone": "x"}}
    first = create_profile(
        herd, "v1", {"type": "os.nova.server", "version": "1.0", "properties": props}
    )
    r = herd.post("/v1/nodes", json={"node": {"name": "ops-node", "profile_id": first["id"]}})
    assert r.status_code == 202, r.text
    node_id = r.json()["node"]["id"]
    done = wait_for_action(herd, r.headers["Location"].rsplit("/", 1)[1], timeout=120)
    assert done["status"] == "SUCCEEDED", done["status_reason"]
    server_id = herd.get(f"/v1/nodes/{node_id}").json()["node"]["physical_id"]

    def run(body: dict[str, Any]) -> str:
        r = herd.post(f"/v1/nodes/{node_id}/ops", json=body)
        assert r.status_code == 202, r.text
        action = wait_for_action(herd, r.json()["action"], timeout=120)
        assert action["status"] == "SUCCEEDED", (body, action["status_reason"])
        return str(nova.compute.get_server(server_id).status)

    assert run({"stop": {}}) == "SHUTOFF"
    assert run({"start": {}}) == "ACTIVE"
    assert run({"pause": {}}) == "PAUSED"
    assert run({"unpause": {}}) == "ACTIVE"
    assert run({"suspend": {}}) == "SUSPENDED"
    assert run({"resume": {}}) == "ACTIVE"
    assert run({"lock": {}}) == "ACTIVE" and nova.compute.get_server(server_id).is_locked
    assert run({"unlock": {}}) == "ACTIVE" and not nova.compute.get_server(server_id).is_locked
    assert run({"reboot": {"type": "HARD"}}) == "ACTIVE"
    r = herd.post(f"/v1/nodes/{node_id}/ops", json={"reboot": {"kind": "HARD"}})
    assert r.status_code == 400 and "kind" in r.text  # named, nothing stored

    def update(name: str, properties: dict[str, Any]) -> Any:
        spec = {"type": "os.nova.server", "version": "1.0", "properties": properties}
        profile = create_profile(herd, name, spec)
        r = herd.patch(f"/v1/nodes/{node_id}", json={"node": {"profile_id": profile["id"]}})
        assert r.status_code == 202, r.text
        action = wait_for_action(herd, r.headers["Location"].rsplit("/", 1)[1], timeout=180)
        assert action["status"] == "SUCCEEDED", action["status_reason"]
        node = herd.get(f"/v1/nodes/{node_id}").json()["node"]
        assert node["physical_id"] == server_id  # in place: the same server
        return nova.compute.get_server(server_id)

    renamed = update("v2", {**props, "name": "renamed", "metadata": {"v": "2"}})
    assert renamed.name == "renamed" and renamed.metadata["v"] == "2"
    assert "gone" not in renamed.metadata and renamed.metadata["cluster_node_id"] == node_id
    resized = update(
        "v3", {**props, "name": "renamed", "metadata": {"v": "2"}, "flavor": "new_flavor"}
    )
    assert resized.flavor.original_name == "new_flavor" and resized.status == "ACTIVE"
    other = "cirros-0.6.2-x86_64-disk"
    rebuilt = update(
        "v4", {"name": "renamed", "metadata": {"v": "2"}, "flavor": "new_flavor", "image": other}
    )
    assert rebuilt.image.id == nova.image.find_image(other).id and rebuilt.status == "ACTIVE"
    r = herd.delete(f"/v1/nodes/{node_id}")
    assert r.status_code == 202
    wait_for(lambda: herd.get(f"/v1/nodes/{node_id}").status_code == 404, timeout=120)


def test_no_valid_host_is_node_error_with_nova_fault_and_nothing_leaks(
    herd: httpx.Client, nova: Any
) -> None:
    spec = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.toobig", "image": IMAGE},
    }
    profile = create_profile(herd, "toobig", spec)
    cluster = create_cluster(herd, "toobig", profile["id"], 2)
    assert cluster["action"]["status"] == "FAILED"
    members = members_of(herd, cluster["id"])
    assert len(members) == 2
    for member in members:
        assert member["status"] == "ERROR"
        assert "No valid host was found" in member["status_reason"], member["status_reason"]
    assert herd.get(f"/v1/clusters/{cluster['id']}").json()["cluster"]["status"] in (
        "ERROR",
        "WARNING",
    )
    # the servers Nova put in ERROR were deleted: none of this cluster is left
    assert [s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster["id"]] == []
    delete_cluster(herd, cluster["id"])


def test_kill_9_during_scale_out_creates_no_server_twice(
    bed: BedInfo, nova: Any, tmp_path: Path
) -> None:
    """herd dies with boots in flight; restarted, it finds them by their tag, boots the rest."""
    server = herd_server(bed, tmp_path / "data").start()
    try:
        with httpx.Client(base_url=server.url, headers=V, timeout=60) as client:
            spec = {
                "type": "os.nova.server",
                "version": "1.0",
                "properties": {"flavor": "1", "image": IMAGE},
            }
            profile = create_profile(client, "crash", spec)
            cluster = create_cluster(client, "crash", profile["id"], 0)["id"]
            # the size: a 20-server scale-out, killed with boots in flight
            r = client.post(f"/v1/clusters/{cluster}/actions", json={"scale_out": {"count": 20}})
            assert r.status_code == 202, r.text
            action = r.json()["action"]

            def booting() -> bool:
                return bool(
                    sum(s.metadata.get("cluster_id") == cluster for s in nova_servers(nova)) >= 2
                )

            wait_for(booting, timeout=120, interval=0.05)
            server.kill9()
            server.start()
            done = wait_for_action(client, action, timeout=300)
            assert done["status"] == "SUCCEEDED", done["status_reason"]
            members = members_of(client, cluster)
            assert len(members) == 20 and all(m["status"] == "ACTIVE" for m in members)
            servers = [s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster]
            per_node = Counter(s.metadata["cluster_node_id"] for s in servers)
            assert per_node == Counter({m["id"]: 1 for m in members})  # none twice, none missing
            assert {s.id for s in servers} == {m["physical_id"] for m in members}
            delete_cluster(client, cluster)
            assert [s for s in nova_servers(nova) if s.metadata.get("cluster_id") == cluster] == []
    finally:
        server.stop()


def test_adopt_an_existing_server(herd: httpx.Client, nova: Any, bed: BedInfo) -> None:
    flavor = nova.compute.find_flavor("m1.tiny")
    image = nova.image.find_image(IMAGE)
    made = nova.compute.create_server(
        name="made-elsewhere", flavor_id=flavor.id, image_id=image.id, networks="none",
        metadata={"owner": "ops"},
    )  # fmt: skip
    nova.compute.wait_for_server(made, wait=120)
    r = herd.post(
        "/v1/nodes/adopt-preview", json={"identity": made.id, "type": "os.nova.server-1.0"}
    )
    assert r.status_code == 200, r.text
    spec = r.json()["node_profile"]["node_preview"]
    assert spec["type"] == "os.nova.server" and spec["properties"]["image"] == image.id
    assert spec["properties"]["flavor"] == "m1.tiny"
    assert spec["properties"]["metadata"] == {"owner": "ops"}
    r = herd.post(
        "/v1/nodes/adopt",
        json={"identity": made.id, "type": "os.nova.server-1.0", "name": "adopted"},
    )
    assert r.status_code == 200, r.text
    node = r.json()["node"]
    assert node["physical_id"] == made.id and node["status"] == "ACTIVE"
    assert nova.compute.get_server(made.id).metadata["cluster_node_id"] == node["id"]
    r = herd.post(f"/v1/nodes/{node['id']}/actions", json={"check": {}})
    assert r.status_code == 202, r.text
    check = wait_for_action(herd, r.json()["action"], timeout=60)
    assert check["status"] == "SUCCEEDED" and check["status_reason"] == "Node check succeeded."
    r = herd.delete(f"/v1/nodes/{node['id']}")
    assert r.status_code == 202
    wait_for(lambda: herd.get(f"/v1/nodes/{node['id']}").status_code == 404, timeout=120)
    assert made.id not in {s.id for s in nova_servers(nova)}


def test_no_credentials_in_answers(herd: httpx.Client, bed: BedInfo) -> None:
    secret = urlparse(bed.transport_url).password
    for path in ("/v1/profiles", "/v1/nodes?show_details=true", "/v1/events", "/v1/actions"):
        text = herd.get(path).text
        assert bed.transport_url not in text
        assert not secret or secret not in text
