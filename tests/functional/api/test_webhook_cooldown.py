"""Webhooks with the engine running (sim driver): a scaling policy's cooldown holds a burst."""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import SIM_SPEC
from tests.waiting import wait_for_action

from herd.config import Settings

SCALING_SPEC = {
    "type": "senlin.policy.scaling",
    "version": "1.0",
    "properties": {
        "event": "CLUSTER_SCALE_OUT",
        "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": 1, "cooldown": 300},
    },
}


def members(client: TestClient, cluster: str) -> int:
    return len(client.get(f"/v1/clusters/{cluster}").json()["cluster"]["nodes"])


def test_triggers_inside_the_cooldown_do_not_scale_again(
    api_client: ApiClientFactory, settings: Settings
) -> None:
    client = api_client(settings, start_engine=True)
    profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}})
    r = client.post(
        "/v1/clusters",
        json={"cluster": {"name": "web", "profile_id": profile.json()["profile"]["id"]}},
    )
    cluster = r.json()["cluster"]["id"]
    assert wait_for_action(client, r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"
    policy = client.post("/v1/policies", json={"policy": {"name": "sp", "spec": SCALING_SPEC}})
    policy_id = policy.json()["policy"]["id"]
    r = client.post(
        f"/v1/clusters/{cluster}/actions", json={"policy_attach": {"policy_id": policy_id}}
    )
    assert wait_for_action(client, r.json()["action"])["status"] == "SUCCEEDED"
    created = client.post(
        "/v1/receivers",
        json={
            "receiver": {
                "name": "grow",
                "type": "webhook",
                "cluster_id": cluster,
                "action": "CLUSTER_SCALE_OUT",
            }
        },
    ).json()["receiver"]
    parts = urlsplit(created["channel"]["alarm_url"])
    url = f"{parts.path}?{parts.query}"

    first = client.post(url)
    assert first.status_code == 202
    assert wait_for_action(client, first.json()["action"])["status"] == "SUCCEEDED"
    assert members(client, cluster) == 1

    # A burst: each trigger is refused while another action is queued or running (409),
    # or accepted and then failed by the policy's BEFORE check (cooldown).
    answers = [client.post(url) for _ in range(5)]
    assert {a.status_code for a in answers} <= {202, 409}
    accepted = [
        wait_for_action(client, a.json()["action"]) for a in answers if a.status_code == 202
    ]
    assert accepted, "at least the first trigger of the burst is accepted"
    for action in accepted:
        assert action["status"] == "FAILED"
        assert action["status_reason"] == (
            f"Policy check failure: Failed policy 'sp': Policy {policy_id} cooldown is still "
            "in progress."
        )
    for refused in (a for a in answers if a.status_code == 409):
        assert refused.json()["error"]["type"] in ("ActionConflict", "ResourceIsLocked")
    assert members(client, cluster) == 1
    cluster_view = client.get(f"/v1/clusters/{cluster}").json()["cluster"]
    assert cluster_view["desired_capacity"] == 1
