"""Lifecycle hooks of the deletion policy, through the API, with a real webhook receiver."""

from __future__ import annotations

import time
from typing import Any

from tests.functional.conformance.conftest import Api, deletion_data, deletion_spec
from tests.webhook_receiver import Receiver

V1_9 = {"OpenStack-API-Version": "clustering 1.9"}


def hooks(url: str, timeout: int, default_result: str = "CONTINUE") -> dict[str, Any]:
    return {
        "type": "webhook",
        "params": {"url": url},
        "timeout": timeout,
        "default_result": default_result,
    }


def complete(api: Api, cluster: str, token: str, result: str | None = None) -> Any:
    body: dict[str, Any] = {"lifecycle_action_token": token}
    if result:
        body["lifecycle_action_result"] = result
    return api.client.post(
        f"/v1/clusters/{cluster}/actions", json={"complete_lifecycle": body}, headers=V1_9
    )


def test_hooks_scale_in_waits_for_completion_and_abandon_keeps_the_node(
    api: Api, receiver: Receiver
) -> None:
    cluster = api.cluster(4)
    n = api.member_ids(cluster)
    api.attach(cluster, deletion_spec(criteria="OLDEST_FIRST", hooks=hooks(receiver.url, 30)))
    r = api.client.post(f"/v1/clusters/{cluster}/actions", json={"scale_in": {"count": 2}})
    action_id = r.json()["action"]
    tokens = receiver.wait(2)
    assert set(tokens) == {n[0], n[1]}
    for message in receiver.messages:
        assert message["cluster_id"] == cluster
        assert message["lifecycle_transition_type"] == "termination"
        assert message["resource_id"] == api.node(message["node_id"])["physical_id"]  # type: ignore[index]
    # The children wait; nothing is deleted before the hook is answered.
    child = api.client.get(f"/v1/actions/{tokens[n[0]]}").json()["action"]
    assert child["status"] == "WAITING_LIFECYCLE_COMPLETION"
    assert child["action"] == "NODE_DELETE"
    assert set(api.member_ids(cluster)) == set(n)

    ok = complete(api, cluster, tokens[n[0]])
    assert ok.status_code == 202, ok.text
    assert ok.json() == {"action": tokens[n[0]]}
    assert ok.headers["Location"].endswith(f"/v1/actions/{tokens[n[0]]}")
    # The short id the CLI's tables print works as a token too (herd addition).
    abandoned = complete(api, cluster, tokens[n[1]][:8], "ABANDON")
    assert abandoned.status_code == 202 and abandoned.json() == {"action": tokens[n[1]]}
    action = api.wait(action_id)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"] == {
        "status": "OK",
        "reason": "Candidates generated",
        "deletion": deletion_data([n[0], n[1]]),
        "hooks": {
            "type": "webhook",
            "params": {"queue": "", "url": receiver.url},
            "timeout": 30,
            "default_result": "CONTINUE",
        },
    }
    assert action["outputs"]["nodes_removed"] == [n[0]]
    assert action["outputs"]["nodes_kept_by_hook"] == [n[1]]
    assert api.node(n[0]) is None
    assert api.member_ids(cluster) == n[1:]
    # The abandoned member still counts towards the desired capacity.
    assert api.get_cluster(cluster)["desired_capacity"] == 3
    kept = api.client.get(f"/v1/actions/{tokens[n[1]]}").json()["action"]
    assert kept["status"] == "FAILED"
    assert kept["status_reason"] == "Lifecycle hook completed with ABANDON: node kept."
    sent = [s for s, _ in api.node_events(n[0], "LIFECYCLE_HOOK")]
    assert sent == ["SENT"]


def test_complete_lifecycle_errors(api: Api, receiver: Receiver) -> None:
    cluster = api.cluster(2)
    other = api.cluster(1, name="other")
    api.attach(cluster, deletion_spec(hooks=hooks(receiver.url, 30)))
    r = api.client.post(f"/v1/clusters/{cluster}/actions", json={"scale_in": {"count": 1}})
    (token,) = receiver.wait(1).values()
    old = api.client.post(
        f"/v1/clusters/{cluster}/actions",
        json={"complete_lifecycle": {"lifecycle_action_token": token}},
        headers={"OpenStack-API-Version": "clustering 1.8"},
    )
    assert old.status_code == 400, old.text
    assert old.json()["error"]["message"] == "API version '1.8' is not supported on this method."
    # Scoped to the cluster in the path (Senlin never checked it).
    wrong = complete(api, other, token)
    assert wrong.status_code == 404, wrong.text
    assert wrong.json()["error"]["message"] == f"The action '{token}' could not be found."
    bad = complete(api, cluster, token, "MAYBE")
    assert bad.status_code == 400
    assert bad.json()["error"]["message"] == (
        "'MAYBE' must be one of the allowed values: CONTINUE, ABANDON"
    )
    assert complete(api, cluster, token).status_code == 202
    assert api.wait(r.json()["action"])["status"] == "SUCCEEDED"
    again = complete(api, cluster, token)
    assert again.status_code == 409, again.text


def test_hooks_apply_to_del_nodes_and_timeout_uses_default_result(
    api: Api, receiver: Receiver
) -> None:
    cluster = api.cluster(3)
    n = api.member_ids(cluster)
    api.attach(cluster, deletion_spec(hooks=hooks(receiver.url, 1, "ABANDON")))
    started = time.monotonic()
    action = api.act(cluster, {"del_nodes": {"nodes": [n[2]]}})
    # Nobody answers: after the 1 s timeout ABANDON keeps the node.
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert time.monotonic() - started >= 1.0  # it waited the hook's timeout
    assert action["data"]["hooks"]["default_result"] == "ABANDON"
    assert action["outputs"]["nodes_kept_by_hook"] == [n[2]]
    assert api.member_ids(cluster) == n
    assert api.get_cluster(cluster)["desired_capacity"] == 3
    token = receiver.messages[0]["lifecycle_action_token"]
    child = api.client.get(f"/v1/actions/{token}").json()["action"]
    assert child["status"] == "FAILED"
    assert child["status_reason"] == "Lifecycle hook timeout; default_result ABANDON: node kept."
