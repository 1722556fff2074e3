"""What the Nova e2e tests ask of herd's API and of Nova, written once for all of them (the
trust tests, ``tests/e2e/trusts.py``, use the calls on herd's API too).

The fixtures (the bed, openstacksdk on it, one ``herd serve`` per module) are in
``conftest.py``; these are the calls the tests make with them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from tests.e2e.server import HerdServer
from tests.nova_bed.bed import BedInfo
from tests.postgres import free_port
from tests.waiting import wait_for, wait_for_action

V = {"OpenStack-API-Version": "clustering 1.14"}
IMAGE = "cirros-0.4.0-x86_64-disk"


def herd_server(bed: BedInfo, data_dir: Path) -> HerdServer:
    """A ``herd serve`` (not started) whose Nova driver talks to the bed."""
    return HerdServer(
        data_dir,
        free_port(),
        OS_CLIENT_CONFIG_FILE=bed.clouds_yaml,
        HERD_NOVA_CLOUD=bed.cloud_name,
        HERD_NOVA_TIMEOUT="120",
        HERD_NOVA_NOTIFICATIONS_URL=bed.transport_url,
    )


def nova_servers(nova: Any) -> list[Any]:
    """Nova's servers. One whose deletion has finished can be listed as DELETED for a moment
    (Nova marks it before removing its row): it is gone."""
    return [s for s in nova.compute.servers(all_projects=True) if s.status != "DELETED"]


def create_profile(herd: httpx.Client, name: str, spec: Any) -> dict[str, Any]:
    r = herd.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}})
    assert r.status_code == 201, r.text
    return dict(r.json()["profile"])


def create_policy(herd: httpx.Client, name: str, spec: dict[str, Any]) -> str:
    r = herd.post("/v1/policies", json={"policy": {"name": name, "spec": spec}})
    assert r.status_code == 201, r.text
    return str(r.json()["policy"]["id"])


def act(
    herd: httpx.Client, cluster: str, body: dict[str, Any], timeout: float = 240.0
) -> dict[str, Any]:
    """Run a cluster action to its end; its final action record."""
    r = herd.post(f"/v1/clusters/{cluster}/actions", json=body)
    assert r.status_code == 202, r.text
    return wait_for_action(herd, r.json()["action"], timeout=timeout)


def create_cluster(herd: httpx.Client, name: str, profile: str, size: int) -> dict[str, Any]:
    """Create a cluster and wait for its action; the cluster with that action under ``action``."""
    body = {"cluster": {"name": name, "profile_id": profile, "desired_capacity": size}}
    r = herd.post("/v1/clusters", json=body)
    assert r.status_code == 202, r.text
    action = wait_for_action(herd, r.headers["Location"].rsplit("/", 1)[1], timeout=240)
    cluster = herd.get(f"/v1/clusters/{r.json()['cluster']['id']}").json()["cluster"]
    return {**cluster, "action": action}


def members_of(herd: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    r = herd.get("/v1/nodes", params={"cluster_id": cluster, "show_details": "true"})
    assert r.status_code == 200, r.text
    return list(r.json()["nodes"])


def delete_cluster(herd: httpx.Client, cluster: str) -> None:
    r = herd.delete(f"/v1/clusters/{cluster}")
    assert r.status_code == 202, r.text
    wait_for(lambda: herd.get(f"/v1/clusters/{cluster}").status_code == 404, timeout=240)
