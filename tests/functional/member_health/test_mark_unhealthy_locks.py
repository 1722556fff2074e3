"""409 while an action holds the cluster lock; a member being deleted is left alone."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.conformance.conftest import Api, V, deletion_spec
from tests.functional.conformance.test_hooks import complete, hooks
from tests.functional.member_health.conftest import engine_settings
from tests.functional.member_health.test_mark_unhealthy_api import error, mark_events, patch
from tests.webhook_receiver import Receiver

from herd.api.app import create_app


def test_409_while_an_action_holds_the_cluster_lock(api: Api, receiver: Receiver) -> None:
    # A scale-in waiting for its lifecycle hook holds the cluster lock until the test
    # completes the hook: the window is the test's to close, not a timer's.
    cluster = api.cluster(2, name="slow")
    node, victim = api.member_ids(cluster)
    api.set_metadata(node, {"protected": True})
    api.attach(cluster, deletion_spec(hooks=hooks(receiver.url, 600)))
    before = api.node(node)
    r = api.client.post(f"/v1/clusters/{cluster}/actions", json={"scale_in": {"count": 1}})
    action_id = r.json()["action"]
    token = receiver.wait(1)[victim]
    for body in ({"mark_unhealthy": True}, {"mark_unhealthy": False}):
        error(
            patch(api, cluster, node, body),
            409,
            "Cluster slow already has an action (CLUSTER_SCALE_IN) in progress.",
            "ActionInProgress",
        )
    assert complete(api, cluster, token).status_code == 202
    assert api.wait(action_id)["status"] == "SUCCEEDED"
    after = api.node(node)
    assert after is not None and before is not None
    assert (after["health"], after["health_reason"]) == (before["health"], before["health_reason"])
    assert mark_events(api, node) == []
    # Once the lock is released the same call works.
    assert patch(api, cluster, node, {"mark_unhealthy": True}).status_code == 200


def test_a_member_being_deleted_is_not_changed(
    api_client: ApiClientFactory, tmp_path: Path, db_url: str
) -> None:
    settings = engine_settings(tmp_path, db_url)
    with TestClient(create_app(settings, start_engine=True)) as builder:
        cluster = Api(builder).cluster(2, one_by_one=False)
    # The engine is off now: a NODE_DELETE stays queued, holding no lock yet.
    api = Api(api_client(settings, start_engine=False))
    node = api.member_ids(cluster)[0]
    r = api.client.delete(f"/v1/nodes/{node}", headers=V)
    assert r.status_code == 202, r.text
    r = patch(api, cluster, node, {"mark_unhealthy": True})
    assert r.status_code == 200, r.text
    assert r.json()["changed"] is False
    assert r.json()["message"] == "The node is being deleted; its health was not changed."
    assert r.json()["node"]["health"] != "CHECK_FAILED"
    assert api.node(node)["health"] != "CHECK_FAILED"  # type: ignore[index]
    assert mark_events(api, node) == []
