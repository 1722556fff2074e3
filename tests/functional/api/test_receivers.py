"""``/v1/receivers``: create, list, show, update, delete, and every 400/404/409 text."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import (
    SIM_SPEC,
    assert_error,
    finish_actions,
    issue_token,
    make_cluster,
    make_profile,
    mv,
    services,
)

from herd.config import Settings
from herd.store.models import EventRow, ReceiverRow

NOT_FOR_RECEIVERS = (
    "Action name cannot be any of ['CLUSTER_CREATE', 'CLUSTER_DELETE', 'CLUSTER_OPERATION', "
    "'CLUSTER_UPDATE']."
)


@pytest.fixture
def cluster(client: TestClient) -> str:
    cid = make_cluster(client, make_profile(client), "web", desired_capacity=2, max_size=10)
    finish_actions(client)
    return cid


def body(**fields: Any) -> dict[str, Any]:
    receiver = {"name": "r1", "type": "webhook", "action": "CLUSTER_SCALE_OUT", **fields}
    return {"receiver": {k: v for k, v in receiver.items() if v is not None}}


def web(**fields: Any) -> dict[str, Any]:
    return body(cluster_id="web", **fields)


def create(client: TestClient, cluster: str, **fields: Any) -> dict[str, Any]:
    r = client.post("/v1/receivers", json=body(cluster_id=cluster, **fields))
    assert r.status_code == 201, r.text
    receiver: dict[str, Any] = r.json()["receiver"]
    return receiver


def test_create_answers_senlin_body_with_the_urls(client: TestClient, cluster: str) -> None:
    receiver = create(client, "web", params={"count": 2})
    assert set(receiver) == {
        "id",
        "name",
        "type",
        "cluster_id",
        "action",
        "actor",
        "params",
        "channel",
        "user",
        "project",
        "domain",
        "created_at",
        "updated_at",
    }
    assert receiver["cluster_id"] == cluster  # the name was resolved
    assert (receiver["type"], receiver["action"]) == ("webhook", "CLUSTER_SCALE_OUT")
    assert receiver["params"] == {"count": 2}
    assert (receiver["user"], receiver["project"]) == ("admin", "default")
    assert receiver["updated_at"] is None and receiver["created_at"].endswith("Z")
    rid = receiver["id"]
    alarm_url = receiver["channel"]["alarm_url"]
    prefix = f"http://testserver/v1/webhooks/{rid}/trigger?V=2&secret="
    assert alarm_url.startswith(prefix)
    secret = alarm_url[len(prefix) :]
    assert len(secret) >= 43
    assert receiver["channel"]["alertmanager_url"] == (
        f"http://testserver/v1/webhooks/{rid}/alertmanager?secret={secret}"
    )
    # Every later answer shows the same URLs to whoever may read the receiver (as Senlin
    # showed alarm_url; the CLI reads the receiver back after creating it).
    shown = client.get(f"/v1/receivers/{rid}").json()["receiver"]
    assert shown["channel"] == receiver["channel"]
    listed = client.get("/v1/receivers").json()["receivers"]
    assert [r["channel"] for r in listed if r["id"] == rid] == [receiver["channel"]]
    with services(client).database.read() as session:
        row = session.get(ReceiverRow, rid)
        assert row is not None
        # The database keeps the secret's digest, never the secret or a URL carrying it.
        assert row.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
        stored = session.execute(select(ReceiverRow.__table__).where(ReceiverRow.id == rid)).one()
        assert not [value for value in stored if secret in str(value)]
        events = [e.action for e in session.query(EventRow).filter(EventRow.oid == rid)]
        assert events == ["RECEIVER_CREATE"]


def test_webhook_base_url_setting(api_client: ApiClientFactory, settings: Settings) -> None:
    client = api_client(settings.model_copy(update={"webhook_base_url": "https://herd.example/"}))
    make_cluster(client, make_profile(client), "web")
    finish_actions(client)
    receiver = create(client, "web")
    assert receiver["channel"]["alarm_url"].startswith(
        f"https://herd.example/v1/webhooks/{receiver['id']}/trigger?V=2&secret="
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "Request body missing 'receiver' key."),
        ({"receiver": []}, "The data provided is not a map"),
        (body(color="red"), "Additional properties are not allowed ('color' was unexpected)"),
        (body(name=None), "'name' is a required property"),
        (body(name=" "), "The value for name must not be empty."),
        (body(type=None), "'type' is a required property"),
        (body(type="sms"), "Value 'sms' is not acceptable for field 'type'."),
        (body(), "Cluster identity is required for creating webhook receiver."),
        (web(action=None), "Action name is required for creating webhook receiver."),
        (web(action="EXPLODE"), "Value 'EXPLODE' is not acceptable for field 'action'."),
        (web(action="CLUSTER_CREATE"), NOT_FOR_RECEIVERS),
        (web(action="CLUSTER_DELETE"), NOT_FOR_RECEIVERS),
        (web(action="CLUSTER_OPERATION"), NOT_FOR_RECEIVERS),
        (web(action="NODE_CREATE"), "Value 'NODE_CREATE' is not acceptable for field 'action'."),
        (body(cluster_id="nope"), "The referenced cluster 'nope' could not be found."),
        (web(params=[1]), "The value ([1]) is not a valid JSON map for 'params'."),
        (web(actor="me"), "The value (me) is not a valid JSON map for 'actor'."),
        (
            web(params={"count": 1, "color": "red"}),
            "Additional properties are not allowed ('color' was unexpected)",
        ),
        (web(params={"count": "abc"}), "The value for count must be an integer: 'abc'."),
        (web(params={"count": 0}), "Count for scale-out request cannot be 0."),
        (web(params={"count": -1}), "Value must be >= 0 for field 'count'."),
        (
            web(action="CLUSTER_RESIZE", params={"adjustment_type": "MORE"}),
            "Value 'MORE' is not acceptable for field 'adjustment_type'.",
        ),
        (
            web(action="CLUSTER_RECOVER", params={"operation": "PRAY"}),
            "Operation value 'PRAY' has to be one of the following: REBOOT, REBUILD, RECREATE.",
        ),
        (
            web(action="CLUSTER_DEL_NODES", params={"nodes": []}),
            "Value for 'nodes' must have at least 1 item(s).",
        ),
    ],
)
def test_create_errors(client: TestClient, cluster: str, raw: Any, message: str) -> None:
    assert_error(client.post("/v1/receivers", json=raw), 400, message, "BadRequest")
    assert client.get("/v1/receivers").json()["receivers"] == []


def test_type_message_is_refused_with_the_reason(client: TestClient, cluster: str) -> None:
    r = client.post("/v1/receivers", json={"receiver": {"name": "m", "type": "message"}})
    assert_error(
        r,
        400,
        "Receivers of type 'message' are not supported by herd: they read a Zaqar queue, and "
        "herd has no Zaqar. Use type 'webhook' (its URL also accepts Alertmanager "
        "notifications).",
    )


def test_params_a_trigger_completes_are_accepted(client: TestClient, cluster: str) -> None:
    # del_nodes needs 'nodes', and a resize needs the cluster's size: both come when it fires.
    create(client, "web", name="remove", action="CLUSTER_DEL_NODES")
    create(
        client,
        "web",
        name="shrink",
        action="CLUSTER_RESIZE",
        params={"adjustment_type": "CHANGE_IN_CAPACITY", "number": -50},
    )
    names = {r["name"] for r in client.get("/v1/receivers").json()["receivers"]}
    assert names == {"remove", "shrink"}


def test_a_deleting_cluster_is_409(client: TestClient, cluster: str) -> None:
    assert client.delete(f"/v1/clusters/{cluster}").status_code == 202
    assert_error(
        client.post("/v1/receivers", json=body(cluster_id=cluster)),
        409,
        f"The cluster '{cluster}' is being deleted: it cannot be used or changed.",
        "ResourceIsDeleting",
    )


def test_list_filters_sort_and_paging(client: TestClient, cluster: str) -> None:
    other = make_cluster(client, make_profile(client, "p2"), "db")
    finish_actions(client)
    a = create(client, "web", name="b-out")
    b = create(client, "web", name="a-in", action="CLUSTER_SCALE_IN")
    c = create(client, "db", name="c-check", action="CLUSTER_CHECK")

    def names(query: str) -> list[str]:
        r = client.get(f"/v1/receivers{query}")
        assert r.status_code == 200, r.text
        return [item["name"] for item in r.json()["receivers"]]

    assert names("") == ["b-out", "a-in", "c-check"]  # created_at
    assert names("?sort=name") == ["a-in", "b-out", "c-check"]
    assert names("?sort=name:desc&limit=2") == ["c-check", "b-out"]
    assert names(f"?sort=name&marker={b['id']}") == ["b-out", "c-check"]
    assert names(f"?cluster_id={other}") == ["c-check"]
    assert names("?cluster_id=db") == names(f"?cluster_id={other[:8]}") == ["c-check"]
    assert names("?action=CLUSTER_SCALE_IN&action=CLUSTER_CHECK&sort=name") == ["a-in", "c-check"]
    assert names("?name=b-out") == ["b-out"]
    assert names("?type=webhook&user=admin") == ["b-out", "a-in", "c-check"]
    assert names("?user=somebody") == []
    assert names("?sort=action") == ["c-check", "a-in", "b-out"]
    assert {a["id"], c["id"]} <= {r["id"] for r in client.get("/v1/receivers").json()["receivers"]}
    assert_error(client.get("/v1/receivers?status=x"), 400, "Invalid parameter status")
    assert_error(
        client.get("/v1/receivers?sort=params"),
        400,
        "Unsupported sort key 'params' for 'sort'.",
    )
    assert_error(client.get("/v1/receivers?limit=-1"), 400, "Value must be >= 0 for field 'limit'.")
    assert_error(
        client.get("/v1/receivers?marker=nope"),
        400,
        "The value for marker is not a valid UUID: 'nope'.",
    )


def test_show_by_id_name_and_short_id(client: TestClient, cluster: str) -> None:
    receiver = create(client, "web", name="grow")
    rid = receiver["id"]
    for identity in (rid, "grow", rid[:8]):
        assert client.get(f"/v1/receivers/{identity}").json()["receiver"]["id"] == rid
    assert_error(
        client.get("/v1/receivers/nope"),
        404,
        "The receiver 'nope' could not be found.",
        "ResourceNotFound",
    )
    create(client, "web", name="grow")
    assert_error(
        client.get("/v1/receivers/grow"),
        400,
        "Multiple results found matching the query criteria 'grow'. Please be more specific.",
    )


def test_update(client: TestClient, cluster: str) -> None:
    created = create(client, "web", params={"count": 2})
    rid = created["id"]

    def patch(receiver: Any, version: str = "1.7") -> Any:
        return client.patch(
            f"/v1/receivers/{rid}", json={"receiver": receiver}, headers=mv(version)
        )

    assert_error(
        patch({"name": "x"}, "1.6"), 400, "API version '1.6' is not supported on this method."
    )
    assert_error(patch({"name": "r1"}), 400, "No property needs an update.")
    assert_error(patch({"params": {"count": 2}}), 400, "No property needs an update.")
    assert_error(
        patch({"type": "message"}),
        400,
        "Additional properties are not allowed ('type' was unexpected)",
    )
    assert_error(patch({"action": "CLUSTER_DELETE"}), 400, NOT_FOR_RECEIVERS)
    # A new action is checked against the stored params, and new params against the action.
    assert_error(
        patch({"action": "CLUSTER_CHECK_ALL"}),
        400,
        "Value 'CLUSTER_CHECK_ALL' is not acceptable for field 'action'.",
    )
    assert_error(
        patch({"action": "CLUSTER_RECOVER"}),
        400,
        "Additional properties are not allowed ('count' was unexpected)",
    )
    assert_error(
        patch({"params": {"count": "x"}}), 400, "The value for count must be an integer: 'x'."
    )
    r = patch({"name": "grow", "params": {"count": 3}})
    assert r.status_code == 200, r.text
    updated = r.json()["receiver"]
    assert (updated["name"], updated["params"]) == ("grow", {"count": 3})
    assert updated["updated_at"] is not None
    assert updated["channel"] == created["channel"]  # the secret is kept
    r = patch(
        {"action": "CLUSTER_RESIZE", "params": {"adjustment_type": "EXACT_CAPACITY", "number": 4}}
    )
    assert r.status_code == 200, r.text
    assert r.json()["receiver"]["action"] == "CLUSTER_RESIZE"
    assert_error(
        client.patch("/v1/receivers/nope", json={"receiver": {"name": "x"}}, headers=mv("1.7")),
        404,
        "The receiver 'nope' could not be found.",
    )


def test_rotate_secret(client: TestClient, cluster: str) -> None:
    receiver = create(client, "web")
    old_url = receiver["channel"]["alarm_url"].replace("http://testserver", "")
    r = client.patch(
        f"/v1/receivers/{receiver['id']}",
        json={"receiver": {"rotate_secret": True}},
        headers=mv("1.7"),
    )
    assert r.status_code == 200, r.text
    new_url = r.json()["receiver"]["channel"]["alarm_url"].replace("http://testserver", "")
    assert new_url != old_url
    shown = client.get(f"/v1/receivers/{receiver['id']}").json()["receiver"]
    assert shown["channel"]["alarm_url"].replace("http://testserver", "") == new_url
    assert client.post(old_url).status_code == 404
    assert client.post(new_url).status_code == 202


def test_another_webhook_key_shows_no_urls_until_the_secret_is_rotated(
    client: TestClient, cluster: str
) -> None:
    # As after a restart with another HERD_WEBHOOK_KEY or a lost key file: the stored
    # digest still checks the URLs handed out before, but herd cannot show them again.
    receiver = create(client, "web")
    old_url = receiver["channel"]["alarm_url"].replace("http://testserver", "")
    services(client).webhook_key = b"another key"
    shown = client.get(f"/v1/receivers/{receiver['id']}").json()["receiver"]
    assert shown["channel"] == {}
    assert client.post(old_url).status_code == 202
    finish_actions(client)
    r = client.patch(
        f"/v1/receivers/{receiver['id']}",
        json={"receiver": {"rotate_secret": True}},
        headers=mv("1.7"),
    )
    assert r.status_code == 200, r.text
    new_url = r.json()["receiver"]["channel"]["alarm_url"].replace("http://testserver", "")
    assert (
        client.get(f"/v1/receivers/{receiver['id']}").json()["receiver"]["channel"]
        == (r.json()["receiver"]["channel"])
    )
    assert client.post(old_url).status_code == 404
    assert client.post(new_url).status_code == 202


def test_delete(client: TestClient, cluster: str) -> None:
    receiver = create(client, "web")
    url = receiver["channel"]["alarm_url"].replace("http://testserver", "")
    assert client.delete(f"/v1/receivers/{receiver['name']}").status_code == 204
    assert_error(
        client.get(f"/v1/receivers/{receiver['id']}"),
        404,
        f"The receiver '{receiver['id']}' could not be found.",
    )
    assert client.post(url).status_code == 404
    assert_error(
        client.delete("/v1/receivers/nope"), 404, "The receiver 'nope' could not be found."
    )
    with services(client).database.read() as session:
        done = [e.action for e in session.query(EventRow).filter(EventRow.oid == receiver["id"])]
    assert done == ["RECEIVER_CREATE", "RECEIVER_DELETE"]


# -- projects --------------------------------------------------------------------------------


def test_projects(token_client: TestClient) -> None:
    alice = issue_token(token_client, "pa", "member")
    bob = issue_token(token_client, "pb", "member")
    admin = issue_token(token_client, "ops", "admin")
    profile = {"name": "p", "spec": SIM_SPEC}
    r = token_client.post("/v1/profiles", json={"profile": profile}, headers=alice)
    cid = make_cluster_as(token_client, alice, r.json()["profile"]["id"])
    # Another project's cluster is unknown to bob, by id or by name.
    for identity in (cid, "web"):
        assert_error(
            token_client.post("/v1/receivers", json=body(cluster_id=identity), headers=bob),
            400,
            f"The referenced cluster '{identity}' could not be found.",
        )
    receiver = token_client.post("/v1/receivers", json=body(cluster_id=cid), headers=alice).json()[
        "receiver"
    ]
    assert receiver["project"] == "pa"
    rid = receiver["id"]
    assert token_client.get("/v1/receivers", headers=alice).json()["receivers"][0]["id"] == rid
    assert token_client.get("/v1/receivers", headers=bob).json()["receivers"] == []
    assert token_client.get(f"/v1/receivers/{rid}", headers=bob).status_code == 404
    assert token_client.delete(f"/v1/receivers/{rid}", headers=bob).status_code == 404
    assert_error(
        token_client.get("/v1/receivers?global_project=true", headers=bob),
        403,
        "You are not authorized to complete this operation.",
    )
    listed = token_client.get("/v1/receivers?global_project=true", headers=admin).json()[
        "receivers"
    ]
    assert [r["id"] for r in listed] == [rid]
    assert token_client.get(f"/v1/receivers/{rid}", headers=admin).status_code == 200
    assert token_client.get("/v1/receivers").status_code == 401


def make_cluster_as(client: TestClient, headers: dict[str, str], profile: str) -> str:
    r = client.post(
        "/v1/clusters", json={"cluster": {"name": "web", "profile_id": profile}}, headers=headers
    )
    assert r.status_code == 202, r.text
    finish_actions(client)
    return str(r.json()["cluster"]["id"])
