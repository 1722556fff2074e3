"""Helpers for the health manager's end-to-end tests: a real API over HTTP, real processes."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import httpx
from tests import clusters
from tests.waiting import wait_for, wait_for_action

V = {"OpenStack-API-Version": "clustering 1.14"}

#: every e2e health server runs the manager on a fast tick and a short back-off
HEALTH_ENV = {
    "HERD_HEALTH_TICK": "0.05",
    "HERD_HEALTH_BACKOFF_BASE": "1",
    "HERD_HEALTH_BACKOFF_MAX": "8",
    "HERD_HEALTH_BACKOFF_RESET": "120",
}


def act(client: httpx.Client, cluster: str, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post(f"/v1/clusters/{cluster}/actions", json=body)
    assert r.status_code == 202, r.text
    return wait_for_action(client, r.json()["action"])


def act_when_unlocked(
    client: httpx.Client, cluster: str, body: dict[str, Any], timeout: float = 90.0
) -> dict[str, Any]:
    """:func:`act`, asked again while the cluster is locked by another action: refused at
    the API (409 ResourceIsLocked), or accepted and then unable to take the lock."""

    def done() -> dict[str, Any] | None:
        r = client.post(f"/v1/clusters/{cluster}/actions", json=body)
        if r.status_code == 409 and r.json()["error"]["type"] == "ResourceIsLocked":
            return None
        assert r.status_code == 202, r.text
        action = wait_for_action(client, r.json()["action"])
        locked = action["status_reason"] == "Failed in locking cluster"
        return None if locked else action

    found: dict[str, Any] = wait_for(done, timeout, interval=0.2)
    return found


def create_cluster(
    client: httpx.Client, name: str, properties: dict[str, Any], size: int
) -> tuple[str, list[dict[str, Any]]]:
    spec = {"type": "herd.process", "version": "1.0", "properties": properties}
    cluster = clusters.create_cluster(client, size, name=name, spec=spec, profile_name=f"p-{name}")
    return cluster, members(client, cluster)


def members(client: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    r = client.get("/v1/nodes", params={"cluster_id": cluster, "sort": "index"})
    return list(r.json()["nodes"])


def node(client: httpx.Client, node_id: str) -> dict[str, Any] | None:
    r = client.get(f"/v1/nodes/{node_id}")
    return r.json()["node"] if r.status_code == 200 else None


def attach(client: httpx.Client, cluster: str, name: str, spec: dict[str, Any]) -> str:
    r = client.post("/v1/policies", json={"policy": {"name": name, "spec": spec}})
    assert r.status_code == 201, r.text
    policy = str(r.json()["policy"]["id"])
    action = act(client, cluster, {"policy_attach": {"policy_id": policy}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    return policy


def health_policy(
    modes: list[dict[str, Any]], *, interval: int = 60, **detection: Any
) -> dict[str, Any]:
    return {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {
                "detection_modes": modes,
                "interval": interval,
                "node_update_timeout": 0,
                **detection,
            },
            "recovery": {"actions": [{"name": "RECREATE"}]},
        },
    }


def health(client: httpx.Client, cluster: str) -> dict[str, Any]:
    r = client.get(f"/v1/clusters/{cluster}/health")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()["cluster_health"]
    return body


def leased(client: httpx.Client, cluster: str) -> bool:
    return health(client, cluster)["lease"] is not None


def pid_of(member: dict[str, Any]) -> int:
    return int(str(member["physical_id"]).split(":")[0])


def kill9(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


def replaced(client: httpx.Client, node_id: str, old_physical_id: str) -> dict[str, Any] | None:
    """The node once it runs a new resource (recovered), else None."""
    found = node(client, node_id)
    if found and found["status"] == "ACTIVE" and found["physical_id"] != old_physical_id:
        return found
    return None


def events(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    r = client.get("/v1/events", params={"limit": 1000, "sort": "timestamp:asc", **params})
    return list(r.json()["events"])


def sleeper(seconds: float = 3600) -> dict[str, Any]:
    """Profile properties of a node that just sleeps."""
    return {"command": sys.executable, "args": ["-c", f"import time; time.sleep({seconds})"]}
