"""``GET /v1/clusters/<id>/health`` and the node view's check fields, with the engine running."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import assert_error, make_profile
from tests.waiting import wait_for, wait_for_action

from herd.config import Settings

HEALTH = {
    "type": "senlin.policy.health",
    "version": "1.1",
    "properties": {
        "detection": {
            "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
            "interval": 1,
            "node_update_timeout": 0,
        },
        "recovery": {"actions": [{"name": "REBOOT"}], "fencing": ["COMPUTE"]},
    },
}


def _client(api_client: ApiClientFactory, settings: Settings) -> TestClient:
    fast = settings.model_copy(update={"health_tick": 0.05, "engine_heartbeat_interval": 0.3})
    return api_client(fast, start_engine=True)


def _act(client: TestClient, cluster: str, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post(f"/v1/clusters/{cluster}/actions", json=body)
    assert r.status_code == 202, r.text
    return wait_for_action(client, r.json()["action"])


def test_cluster_health_and_node_check_fields(
    api_client: ApiClientFactory, settings: Settings
) -> None:
    client = _client(api_client, settings)
    assert_error(
        client.get("/v1/clusters/nope/health"), 404, "The cluster 'nope' could not be found."
    )
    r = client.post(
        "/v1/clusters",
        json={"cluster": {"name": "c", "profile_id": make_profile(client), "desired_capacity": 2}},
    )
    cluster = r.json()["cluster"]["id"]
    assert wait_for_action(client, r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"
    body = client.get("/v1/clusters/c/health").json()["cluster_health"]
    assert body["checking"] == "NO_POLICY" and body["policy"] is None and body["lease"] is None
    assert [m["last_check_result"] for m in body["members"]] == [None, None]
    node_id = body["members"][0]["id"]
    view = client.get(f"/v1/nodes/{node_id}").json()["node"]
    assert view["last_checked_at"] is None and view["last_check_mode"] is None

    policy = client.post("/v1/policies", json={"policy": {"name": "hp", "spec": HEALTH}})
    policy_id = policy.json()["policy"]["id"]
    assert _act(client, cluster, {"policy_attach": {"policy_id": policy_id}})["status"] == (
        "SUCCEEDED"
    )

    def all_healthy() -> dict[str, Any] | None:
        found: dict[str, Any] = client.get(f"/v1/clusters/{cluster}/health").json()
        members = found["cluster_health"]["members"]
        return found if all(m["last_check_result"] == "healthy" for m in members) else None

    body = wait_for(all_healthy)["cluster_health"]
    assert body["checking"] == "ACTIVE" and body["lease"]["engine_id"]
    assert body["policy"] == {
        "id": policy_id,
        "name": "hp",
        "enabled": True,
        "detection_modes": ["NODE_STATUS_POLLING"],
        "interval": 1.0,
        "node_update_timeout": 0.0,
        "recovery_conditional": "ANY_FAILED",
        "recovery_action": "REBOOT",
        "node_delete_timeout": 20.0,
        "node_force_recreate": False,
        "fencing": ["COMPUTE"],
    }
    assert body["summary"] == {"members": 2, "unhealthy": 0, "recoveries": 0, "in_backoff": 0}
    view = client.get(f"/v1/nodes/{node_id}").json()["node"]
    assert view["last_check_mode"] == "NODE_STATUS_POLLING"
    assert view["last_check_result"] == "healthy" and view["last_checked_at"]
    listed = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"]
    assert {n["last_check_result"] for n in listed} == {"healthy"}

    # The API's recover runs NODE_RECOVER children, with the policy's REBOOT by default.
    action = _act(client, cluster, {"recover": {}})
    assert action["status"] == "SUCCEEDED"
    nothing_broken = action["depends_on"] == [] and action["outputs"]["nodes_recovered"] == []
    assert nothing_broken
    r = client.post(f"/v1/nodes/{node_id}/actions", json={"recover": {}})
    node_action = wait_for_action(client, r.json()["action"])
    assert node_action["status"] == "SUCCEEDED", node_action["status_reason"]
    events = client.get("/v1/events", params={"oid": node_id, "action": "NODE_RECOVER"}).json()
    reasons = {e["status_reason"] for e in events["events"]}
    assert any(r.startswith("Recovery succeeded: REBOOT") for r in reasons)
    member = next(
        m
        for m in client.get(f"/v1/clusters/{cluster}/health").json()["cluster_health"]["members"]
        if m["id"] == node_id
    )
    assert member["last_recovery_result"].startswith("SUCCEEDED: REBOOT")

    disabled = {"policy_update": {"policy_id": policy_id, "enabled": False}}
    assert _act(client, cluster, disabled)["status"] == "SUCCEEDED"
    body = client.get(f"/v1/clusters/{cluster}/health").json()["cluster_health"]
    assert body["checking"] == "DISABLED"
    wait_for(
        lambda: (
            client.get(f"/v1/clusters/{cluster}/health").json()["cluster_health"]["lease"] is None
        )
    )
