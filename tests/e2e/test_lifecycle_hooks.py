"""Lifecycle hooks end to end: a real ``herd serve`` and a real webhook receiver on 127.0.0.1.

One scale-in of four victims: one hook is completed (CONTINUE), one is completed
with ABANDON (the node stays), one is heartbeated (its wait outlives the original
deadline and it is completed afterwards), one is left to time out (CONTINUE).
An undeliverable hook URL ends the wait at once instead of hanging the action.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from tests.clusters import create_cluster
from tests.conftest import free_port
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e

V = {"OpenStack-API-Version": "clustering 1.9"}
TIMEOUT = 4  # seconds a hook waits


def _cluster(client: httpx.Client, size: int, hook_url: str) -> tuple[str, list[str]]:
    cluster = create_cluster(client, size)
    policy = client.post(
        "/v1/policies",
        json={
            "policy": {
                "name": "dp",
                "spec": {
                    "type": "senlin.policy.deletion",
                    "version": "1.1",
                    "properties": {
                        "criteria": "OLDEST_FIRST",
                        "hooks": {
                            "type": "webhook",
                            "params": {"url": hook_url},
                            "timeout": TIMEOUT,
                        },
                    },
                },
            }
        },
    ).json()["policy"]["id"]
    r = client.post(
        f"/v1/clusters/{cluster}/actions", json={"policy_attach": {"policy_id": policy}}
    )
    assert wait_for_action(client, r.json()["action"])["status"] == "SUCCEEDED"
    nodes = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"]
    return cluster, [n["id"] for n in nodes]


def _post(client: httpx.Client, cluster: str, key: str, body: dict[str, Any]) -> httpx.Response:
    return client.post(f"/v1/clusters/{cluster}/actions", json={key: body})


def test_complete_abandon_heartbeat_and_timeout(herd_server: HerdServer) -> None:
    receiver = Receiver()
    try:
        with httpx.Client(base_url=herd_server.url, headers=V, timeout=30) as client:
            cluster, nodes = _cluster(client, 6, receiver.url)
            action_id = _post(client, cluster, "scale_in", {"count": 4}).json()["action"]
            tokens = receiver.wait(4)
            sent, sent_wall = time.monotonic(), time.time()
            assert set(tokens) <= set(nodes) and len(tokens) == 4
            done, abandon, beat, late = sorted(tokens)

            r = _post(
                client, cluster, "complete_lifecycle", {"lifecycle_action_token": tokens[done]}
            )
            assert r.status_code == 202 and r.json() == {"action": tokens[done]}
            r = _post(
                client,
                cluster,
                "complete_lifecycle",
                {"lifecycle_action_token": tokens[abandon], "lifecycle_action_result": "ABANDON"},
            )
            assert r.status_code == 202, r.text
            time.sleep(max(0.0, sent + TIMEOUT / 2 - time.monotonic()))
            asked = time.time()
            r = _post(
                client, cluster, "lifecycle_heartbeat", {"lifecycle_action_token": tokens[beat]}
            )
            assert r.status_code == 200, r.text
            assert r.json()["action"] == tokens[beat]
            # The new deadline is the hook timeout from now: past the original one.
            assert r.json()["deadline"] >= asked + TIMEOUT - 0.5
            assert r.json()["deadline"] > sent_wall + TIMEOUT
            heartbeat_at = time.monotonic()

            # After the original deadline: the untouched hook timed out, the heartbeated one waits.
            time.sleep(max(0.0, sent + TIMEOUT + 1.0 - time.monotonic()))
            assert time.monotonic() < heartbeat_at + TIMEOUT - 0.5
            waiting = client.get(f"/v1/actions/{tokens[beat]}").json()["action"]
            assert waiting["status"] == "WAITING_LIFECYCLE_COMPLETION"
            timed_out = client.get(f"/v1/actions/{tokens[late]}").json()["action"]
            assert timed_out["status"] in ("RUNNING", "SUCCEEDED"), timed_out
            assert client.get(f"/v1/actions/{action_id}").json()["action"]["status"] == "RUNNING"

            r = _post(
                client, cluster, "complete_lifecycle", {"lifecycle_action_token": tokens[beat]}
            )
            assert r.status_code == 202, r.text
            action = wait_for_action(client, action_id)
            assert action["status"] == "SUCCEEDED", action["status_reason"]
            assert action["outputs"]["nodes_removed"] == sorted([done, beat, late])
            assert action["outputs"]["nodes_kept_by_hook"] == [abandon]
            left = {
                n["id"]
                for n in client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"]
            }
            assert left == set(nodes) - {done, beat, late}
            assert client.get(f"/v1/clusters/{cluster}").json()["cluster"]["desired_capacity"] == 3
            kept = client.get(f"/v1/actions/{tokens[abandon]}").json()["action"]
            assert kept["status"] == "FAILED"
            assert kept["status_reason"] == "Lifecycle hook completed with ABANDON: node kept."
            late_child = client.get(f"/v1/actions/{tokens[late]}").json()["action"]
            assert late_child["status"] == "SUCCEEDED"
            assert late_child["data"]["lifecycle_resolution"] == "Lifecycle hook timeout; CONTINUE"
    finally:
        receiver.server.shutdown()


def test_undeliverable_hook_does_not_hang(herd_server: HerdServer) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/hook"  # nothing listens there
    with httpx.Client(base_url=herd_server.url, headers=V, timeout=30) as client:
        cluster, _ = _cluster(client, 2, nowhere)
        action = wait_for_action(
            client, _post(client, cluster, "scale_in", {"count": 1}).json()["action"]
        )
        assert action["status"] == "SUCCEEDED", action["status_reason"]
        (victim,) = action["outputs"]["nodes_removed"]
        # Resolved because the message could not be delivered, not by the hook's timeout.
        children = client.get("/v1/actions", params={"target": victim}).json()["actions"]
        (child,) = [a for a in children if a["action"] == "NODE_DELETE"]
        resolution = child["data"]["lifecycle_resolution"]
        assert resolution.startswith("Lifecycle hook not delivered ("), resolution
        events = client.get("/v1/events", params={"oid": victim, "action": "LIFECYCLE_HOOK"}).json()
        (event,) = events["events"]
        assert event["status"] == "FAILED" and event["level"] == "WARNING"
        assert event["status_reason"].startswith(f"Lifecycle hook delivery to {nowhere} failed")
