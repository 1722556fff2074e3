"""Actions (list, show, filters, cancel) and events (list, show)."""

from __future__ import annotations

from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    assert_error,
    finish_actions,
    make_cluster,
    make_profile,
    mv,
    services,
    set_row,
)

from herd.store import events
from herd.store.models import ActionRow


def test_action_views_and_filters(client: TestClient) -> None:
    profile = make_profile(client)
    c1 = make_cluster(client, profile, "c1")
    c2 = make_cluster(client, profile, "c2")
    actions = client.get("/v1/actions").json()["actions"]
    assert [a["target"] for a in actions] == [c1, c2]
    action = actions[0]
    assert action["start_time"] is None and action["end_time"] is None
    assert action["depends_on"] == [] and action["depended_by"] == []
    assert "cluster_id" not in action
    r = client.get(f"/v1/actions/{action['id']}", headers=mv("1.14"))
    assert r.json()["action"]["cluster_id"] == c1
    assert [a["target"] for a in client.get(f"/v1/actions?target={c2}").json()["actions"]] == [c2]
    r = client.get(f"/v1/actions?cluster_id={c1}&action=CLUSTER_CREATE&status=READY")
    assert len(r.json()["actions"]) == 1
    r = client.get("/v1/actions?sort=target:desc")
    assert [a["target"] for a in r.json()["actions"]] == sorted([c1, c2], reverse=True)
    assert_error(
        client.get("/v1/actions?sort=owner"), 400, "Unsupported sort key 'owner' for 'sort'."
    )
    assert_error(client.get("/v1/actions/nope"), 404, "The action 'nope' could not be found.")


def test_action_cancel(client: TestClient) -> None:
    make_cluster(client, make_profile(client))
    action_id = client.get("/v1/actions").json()["actions"][0]["id"]
    body = {"action": {"status": "CANCELLED"}}
    assert_error(
        client.patch(f"/v1/actions/{action_id}", json=body),
        400,
        "API version '1.0' is not supported on this method.",
    )
    assert_error(
        client.patch(
            f"/v1/actions/{action_id}", json={"action": {"status": "DONE"}}, headers=mv("1.12")
        ),
        400,
        f"Unknown status DONE for action {action_id}",
    )
    r = client.patch(f"/v1/actions/{action_id}", json=body, headers=mv("1.12"))
    assert r.status_code == 202
    action = client.get(f"/v1/actions/{action_id}").json()["action"]
    assert action["status"] == "CANCELLED"
    assert action["status_reason"] == "Action execution cancelled"
    assert action["end_time"] is not None
    with services(client).database.read() as session:
        row = session.get(ActionRow, action_id)
        assert row is not None and row.control == "CANCEL"
    events = client.get(f"/v1/events?oid={action_id}").json()["events"]
    assert [e["status"] for e in events] == ["CANCELLED"]


def test_cancel_running_action_only_signals(client: TestClient) -> None:
    make_cluster(client, make_profile(client))
    action_id = client.get("/v1/actions").json()["actions"][0]["id"]
    set_row(client, ActionRow, action_id, status="RUNNING", owner="e" * 36)
    r = client.patch(
        f"/v1/actions/{action_id}", json={"action": {"status": "CANCELLED"}}, headers=mv("1.12")
    )
    assert r.status_code == 202
    assert client.get(f"/v1/actions/{action_id}").json()["action"]["status"] == "RUNNING"
    with services(client).database.read() as session:
        row = session.get(ActionRow, action_id)
        assert row is not None and row.control == "CANCEL"
    r = client.patch(
        f"/v1/actions/{action_id}?force=true",
        json={"action": {"status": "CANCELLED"}},
        headers=mv("1.12"),
    )
    assert client.get(f"/v1/actions/{action_id}").json()["action"]["status"] == "CANCELLED"


def test_events(client: TestClient) -> None:
    make_profile(client, "p1")
    make_profile(client, "p2")
    finish_actions(client)
    events = client.get("/v1/events").json()["events"]
    assert [(e["otype"], e["oname"], e["action"]) for e in events] == [
        ("PROFILE", "p1", "PROFILE_CREATE"),
        ("PROFILE", "p2", "PROFILE_CREATE"),
    ]
    event = events[0]
    assert event["timestamp"].endswith("Z")
    assert set(event) >= {
        "id",
        "oid",
        "cluster_id",
        "level",
        "user",
        "project",
        "status",
        "status_reason",
        "meta_data",
    }
    assert client.get(f"/v1/events/{event['id']}").json()["event"]["id"] == event["id"]
    assert client.get(f"/v1/events/{event['id'][:8]}").json()["event"]["id"] == event["id"]
    assert [e["oname"] for e in client.get("/v1/events?oname=p2").json()["events"]] == ["p2"]
    assert [
        e["oname"] for e in client.get("/v1/events?sort=oname:desc&limit=1").json()["events"]
    ] == ["p2"]
    assert_error(client.get("/v1/events/nope"), 404, "The event 'nope' could not be found.")


def test_cluster_and_target_filters_take_names_and_short_ids(client: TestClient) -> None:
    # Senlin resolves GET /v1/events?cluster_id= (id, name or short id); herd does the same
    # for the actions' cluster_id and target filters, so what the CLI's tables print works.
    profile = make_profile(client)
    web = make_cluster(client, profile, "web")
    other = make_cluster(client, profile, "other")
    finish_actions(client)
    with services(client).database.write() as session:
        for cluster_id, name in ((web, "web"), (other, "other")):
            events.record(
                session,
                otype="CLUSTER",
                oid=cluster_id,
                oname=name,
                project="default",
                action="CLUSTER_CREATE",
                status="ACTIVE",
                reason="made by the test",
                now=1.0,
                cluster_id=cluster_id,
            )
    for value in ("web", web[:8], web):
        actions = client.get(f"/v1/actions?cluster_id={value}").json()["actions"]
        assert actions and {a["target"] for a in actions} == {web}
        actions = client.get(f"/v1/actions?target={value}").json()["actions"]
        assert actions and {a["target"] for a in actions} == {web}
        found = client.get(f"/v1/events?cluster_id={value}").json()["events"]
        assert found and {e["cluster_id"] for e in found} == {web}
    both = client.get("/v1/events", params=[("cluster_id", "web"), ("cluster_id", "other")])
    assert {e["cluster_id"] for e in both.json()["events"]} == {web, other}
    # A value that names nothing visible is kept as given: it matches nothing here.
    assert client.get("/v1/events?cluster_id=nothing").json()["events"] == []
    assert client.get("/v1/actions?target=nothing").json()["actions"] == []
