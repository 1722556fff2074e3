"""``POST /v1/webhooks/<id>/trigger`` and ``/alertmanager``: no token, the secret, params, texts."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    assert_error,
    finish_actions,
    make_cluster,
    make_profile,
    services,
)

from herd.store import tokens
from herd.store.models import ClusterRow, EventRow, ReceiverAlertRow


@pytest.fixture
def cluster(client: TestClient) -> str:
    cid = make_cluster(client, make_profile(client), "web", desired_capacity=2, max_size=10)
    finish_actions(client)
    return cid


def receiver(client: TestClient, cluster: str, **fields: Any) -> dict[str, Any]:
    data = {"name": "grow", "type": "webhook", "cluster_id": cluster, **fields}
    data.setdefault("action", "CLUSTER_SCALE_OUT")
    r = client.post("/v1/receivers", json={"receiver": data})
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()["receiver"]
    return created


def local(url: str) -> str:
    """The path and query of a URL the API handed out (the test client has no network)."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def action_of(client: TestClient, response: Any) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    action_id = response.json()["action"]
    assert response.headers["Location"] == f"/v1/actions/{action_id}"
    action: dict[str, Any] = client.get(f"/v1/actions/{action_id}").json()["action"]
    finish_actions(client)
    return action


def test_v2_merges_body_params_over_the_receivers(client: TestClient, cluster: str) -> None:
    created = receiver(client, cluster, params={"count": 2})
    url = local(created["channel"]["alarm_url"])
    action = action_of(client, client.post(url))
    assert (action["action"], action["inputs"], action["target"]) == (
        "CLUSTER_SCALE_OUT",
        {"count": 2},
        cluster,
    )
    assert action["name"] == f"webhook_{created['id'][:8]}"
    assert action["status"] == "READY"
    assert action_of(client, client.post(url, json={"params": {"count": 5}}))["inputs"] == {
        "count": 5
    }
    # Keys other than 'params' are the sender's own payload (an Aodh alarm, say): ignored.
    alarm = {"alarm_name": "cpu high", "current": "alarm", "reason": "cpu > 90"}
    assert action_of(client, client.post(url, json=alarm))["inputs"] == {"count": 2}
    # curl -d sends form-encoded JSON; it is read as JSON all the same.
    sent = client.post(url, content=b'{"params": {"count": 4}}')
    assert action_of(client, sent)["inputs"] == {"count": 4}
    with services(client).database.read() as session:
        reasons = [
            e.status_reason
            for e in session.query(EventRow).filter(EventRow.action == "RECEIVER_TRIGGER")
        ]
    assert len(reasons) == 4
    assert reasons[0].startswith("Webhook started CLUSTER_SCALE_OUT on cluster web: action ")


def test_v1_takes_query_parameters_as_senlin(client: TestClient, cluster: str) -> None:
    created = receiver(client, cluster, params={"count": 2})
    url = local(created["channel"]["alarm_url"]).replace("V=2", "V=1")
    assert action_of(client, client.post(url + "&count=3"))["inputs"] == {"count": 3}
    # V=2 ignores the query string, as Senlin.
    url2 = local(created["channel"]["alarm_url"])
    assert action_of(client, client.post(url2 + "&count=3"))["inputs"] == {"count": 2}


def test_request_errors(client: TestClient, cluster: str) -> None:
    created = receiver(client, cluster, params={"count": 2})
    url = local(created["channel"]["alarm_url"])
    no_v = url.replace("V=2&", "")
    assert_error(client.post(no_v), 400, "V query parameter is required in webhook trigger URL")
    assert_error(client.post(url, content=b"{nope"), 400, "The request body is not valid JSON.")
    assert_error(client.post(url, json=[1]), 400, "The data provided is not a map")
    assert_error(
        client.post(url, json={"params": "x"}),
        400,
        "The value (x) is not a valid JSON map for 'params'.",
    )
    # The merged params go through the actions endpoint's own validation.
    for params, message in (
        ({"count": 0}, "Count for scale-out request cannot be 0."),
        ({"count": "many"}, "The value for count must be an integer: 'many'."),
        ({"colour": "red"}, "Additional properties are not allowed ('colour' was unexpected)"),
        (
            {"count": 100_001},
            "The target capacity (100003) is greater than the maximum number of nodes "
            "allowed per cluster (1000).",
        ),
    ):
        assert_error(client.post(url, json={"params": params}), 400, message, "BadRequest")
    actions = client.get("/v1/actions").json()["actions"]
    assert [a["action"] for a in actions] == ["CLUSTER_CREATE"]  # nothing half-stored


def test_state_checks_run_when_the_webhook_fires(client: TestClient, cluster: str) -> None:
    created = receiver(client, cluster, action="CLUSTER_DEL_NODES")
    url = local(created["channel"]["alarm_url"])
    assert_error(client.post(url), 400, "Value for 'nodes' must have at least 1 item(s).")
    assert_error(
        client.post(url, json={"params": {"nodes": ["ghost"]}}),
        400,
        "Nodes not found: ['ghost'].",
    )
    strict = receiver(
        client,
        cluster,
        name="exact",
        action="CLUSTER_RESIZE",
        params={"adjustment_type": "EXACT_CAPACITY", "number": 11},
    )
    assert_error(
        client.post(local(strict["channel"]["alarm_url"])),
        400,
        "The target capacity (11) is greater than the cluster's max_size (10).",
    )


def test_wrong_or_missing_secret_is_404_like_an_unknown_id(
    client: TestClient, cluster: str
) -> None:
    created = receiver(client, cluster)
    rid = created["id"]
    url = local(created["channel"]["alarm_url"])
    secret = url.rsplit("secret=", 1)[1]
    expected = f"The receiver '{rid}' could not be found."
    for bad in (
        url.replace(secret, secret[:-1] + ("A" if secret[-1] != "A" else "B")),
        url.replace(f"&secret={secret}", ""),
        url.replace(secret, ""),
        url.replace(secret, "***"),
        local(created["channel"]["alertmanager_url"]).replace(secret, "x"),
    ):
        assert_error(client.post(bad), 404, expected, "ResourceNotFound")
    unknown = "00000000-0000-0000-0000-000000000000"
    assert_error(
        client.post(url.replace(rid, unknown)),
        404,
        f"The receiver '{unknown}' could not be found.",
    )
    # The URL names the receiver by its full id only.
    assert client.post(url.replace(rid, rid[:8])).status_code == 404
    assert client.post(url).status_code == 202


def test_conflicts_and_a_gone_cluster(client: TestClient, cluster: str) -> None:
    url = local(receiver(client, cluster)["channel"]["alarm_url"])
    first = client.post(url)
    assert first.status_code == 202
    # Another action on the cluster is active: the trigger is queued, not refused.
    second = client.post(url)
    assert second.status_code == 202, second.text
    queued = client.get(f"/v1/actions/{second.json()['action']}").json()["action"]
    assert (queued["status"], queued["data"]) == ("READY", {"wait_for_lock": True})
    with services(client).database.read() as session:
        event = (
            session.query(EventRow)
            .filter(EventRow.action == "RECEIVER_TRIGGER", EventRow.status == "QUEUED")
            .one()
        )
    assert event.status_reason == (
        f"Webhook queued CLUSTER_SCALE_OUT on cluster web behind the action(s) holding it: "
        f"action {second.json()['action']}."
    )
    finish_actions(client)
    assert client.delete(f"/v1/clusters/{cluster}").status_code == 202
    assert_error(
        client.post(url),
        409,
        f"The cluster '{cluster}' is being deleted: it cannot be used or changed.",
        "ResourceIsDeleting",
    )
    with services(client).database.write() as session:
        row = session.get(ClusterRow, cluster)
        session.delete(row)
    assert_error(client.post(url), 400, f"The referenced cluster '{cluster}' could not be found.")


# -- auth: token -----------------------------------------------------------------------------


def test_no_token_needed_and_the_action_runs_as_the_owner(token_client: TestClient) -> None:
    svc = services(token_client)
    with svc.database.write() as session:
        token, secret = tokens.create_token(session, "pa", "member", "alice", svc.now())
    alice = {"X-Auth-Token": secret}
    profile = token_client.post(
        "/v1/profiles",
        json={"profile": {"name": "p", "spec": {"type": "herd.sim", "version": "1.0"}}},
        headers=alice,
    ).json()["profile"]["id"]
    r = token_client.post(
        "/v1/clusters", json={"cluster": {"name": "web", "profile_id": profile}}, headers=alice
    )
    cluster = r.json()["cluster"]["id"]
    finish_actions(token_client)
    created = token_client.post(
        "/v1/receivers",
        json={
            "receiver": {
                "name": "grow",
                "type": "webhook",
                "cluster_id": cluster,
                "action": "CLUSTER_SCALE_OUT",
            }
        },
        headers=alice,
    ).json()["receiver"]
    assert token_client.get("/v1/clusters").status_code == 401
    r = token_client.post(local(created["channel"]["alarm_url"]))  # no X-Auth-Token
    assert r.status_code == 202, r.text
    action = token_client.get(f"/v1/actions/{r.json()['action']}", headers=alice).json()["action"]
    assert (action["user"], action["project"]) == (token.id, "pa")
    assert (created["user"], created["project"]) == (token.id, "pa")


# -- Alertmanager ----------------------------------------------------------------------------


def notification(status: str = "firing", *alerts: dict[str, Any], group: str = "g1") -> Any:
    return {
        "version": "4",
        "groupKey": group,
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "herd",
        "groupLabels": {"alertname": "HighLoad"},
        "commonLabels": {"alertname": "HighLoad"},
        "commonAnnotations": {},
        "externalURL": "http://127.0.0.1:9093",
        "alerts": list(alerts) or [alert(status)],
    }


def alert(
    status: str = "firing", starts: str = "2026-11-23T10:00:00Z", fingerprint: str = "f1"
) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": "HighLoad", "severity": "page"},
        "annotations": {"summary": "load is high"},
        "startsAt": starts,
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://127.0.0.1:9090/graph",
        "fingerprint": fingerprint,
    }


def test_alertmanager_firing_triggers_once_per_new_firing(client: TestClient, cluster: str) -> None:
    created = receiver(client, cluster, params={"count": 1})
    url = local(created["channel"]["alertmanager_url"])
    first = client.post(url, json=notification())
    action = action_of(client, first)
    assert (action["action"], action["inputs"]) == ("CLUSTER_SCALE_OUT", {"count": 1})
    assert first.json()["message"] == "1 new firing alert(s) of 1."
    # Alertmanager delivers the same notification again (retry, repeat_interval): ignored.
    again = client.post(url, json=notification())
    assert again.status_code == 200
    assert again.json() == {
        "action": None,
        "message": "Already handled: all 1 firing alert(s) were seen before.",
    }
    # Resolved: nothing to do.
    resolved = client.post(url, json=notification("resolved", alert("resolved")))
    assert resolved.json() == {"action": None, "message": "Resolved notification: nothing to do."}
    # A new alert joins the group: the notification triggers again.
    grown = notification("firing", alert(), alert(fingerprint="f2"))
    assert action_of(client, client.post(url, json=grown))["action"] == "CLUSTER_SCALE_OUT"
    # The same alert firing again later (new startsAt) is a new situation.
    later = notification("firing", alert(starts="2026-11-23T11:00:00Z"))
    assert client.post(url, json=later).status_code == 202
    finish_actions(client)
    # Another group with the same alert is another notification.
    assert client.post(url, json=notification(group="g2")).status_code == 202
    finish_actions(client)
    with services(client).database.read() as session:
        rows = session.query(ReceiverAlertRow).filter_by(receiver_id=created["id"]).all()
        noted = [
            (e.status, e.status_reason)
            for e in session.query(EventRow)
            .filter(EventRow.action == "RECEIVER_NOTIFICATION")
            .order_by(EventRow.timestamp)
        ]
    assert len(rows) == 4 and all(row.action_id for row in rows)
    # The repeated and the resolved notification each left an event.
    assert [status for status, _ in noted] == ["FIRING", "RESOLVED"]
    assert noted[0][1].startswith("Alertmanager notification (group g1): Already handled")
    assert noted[1][1].endswith("Resolved notification: nothing to do.")


def test_alertmanager_notifications_on_a_busy_cluster_are_queued(
    client: TestClient, cluster: str
) -> None:
    url = local(receiver(client, cluster)["channel"]["alertmanager_url"])
    busy = client.post(f"/v1/clusters/{cluster}/actions", json={"check": {}})
    assert busy.status_code == 202
    queued = client.post(url, json=notification())
    assert queued.status_code == 202  # queued behind the check, not refused
    finish_actions(client)
    # Its keys were kept: the next delivery of the same alert is a repeat.
    repeat = client.post(url, json=notification())
    assert repeat.status_code == 200 and repeat.json()["action"] is None


def changed(**fields: Any) -> dict[str, Any]:
    return {**notification(), **fields}


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in notification().items() if k != key}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            changed(version="3"),
            "Unsupported Alertmanager payload version '3': herd reads version 4.",
        ),
        (without("groupKey"), "'groupKey' is a required property"),
        (without("version"), "'version' is a required property"),
        (without("alerts"), "'alerts' is a required property"),
        (changed(status="burning"), "Value 'burning' is not acceptable for field 'status'."),
        (changed(status=None), "'status' is a required property"),
        (changed(alerts=[{"status": "firing"}]), "'startsAt' is a required property"),
        (changed(alerts=[{**alert(), "status": None}]), "'status' is a required property"),
        (
            changed(alerts=[{**alert(), "labels": [1]}]),
            "The value ([1]) is not a valid JSON map for 'labels'.",
        ),
        ([], "The data provided is not a map"),
    ],
)
def test_alertmanager_payload_errors(
    client: TestClient, cluster: str, payload: Any, message: str
) -> None:
    url = local(receiver(client, cluster)["channel"]["alertmanager_url"])
    assert_error(client.post(url, json=payload), 400, message, "BadRequest")


def test_trigger_echoes_the_negotiated_version(client: TestClient, cluster: str) -> None:
    """Like every route: the version asked for, else 1.0 (Senlin's default without a header)."""
    url = local(receiver(client, cluster)["channel"]["alarm_url"])
    asked = client.post(url, headers={"OpenStack-API-Version": "clustering 1.10"})
    assert asked.status_code == 202, asked.text
    assert asked.headers["OpenStack-API-Version"] == "clustering 1.10"
    latest = client.post(url, headers={"OpenStack-API-Version": "clustering latest"})
    assert latest.headers["OpenStack-API-Version"] == "clustering 1.14"
    plain = client.post(url)
    assert plain.headers["OpenStack-API-Version"] == "clustering 1.0"
    assert (
        plain.headers["OpenStack-API-Version"]
        == client.get("/v1/clusters").headers["OpenStack-API-Version"]
    )
