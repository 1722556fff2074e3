"""``herd receiver``: bodies sent, URLs printed whole, trigger and --wait."""

from __future__ import annotations

from typing import Any

from tests.unit.cli.fakeapi import Answer, FakeApi

RID = "3f1c2b4a-0000-4000-8000-00000000000a"
SECRET = "s3cr3t-Q2VjcmV0LXdpdGgtZW5vdWdoLWJ5dGVzLWZvci10ZXN0"


def receiver(**fields: Any) -> dict[str, Any]:
    secret = SECRET
    return {
        "id": RID,
        "name": "grow",
        "type": "webhook",
        "cluster_id": "c0ffee00-0000-4000-8000-000000000001",
        "action": "CLUSTER_SCALE_OUT",
        "actor": {},
        "params": {"count": 2},
        "channel": {
            "alarm_url": f"http://127.0.0.1:8778/v1/webhooks/{RID}/trigger?V=2&secret={secret}",
            "alertmanager_url": f"http://127.0.0.1:8778/v1/webhooks/{RID}/alertmanager?"
            f"secret={secret}",
        },
        "user": "admin",
        "project": "default",
        "domain": "",
        "created_at": "2026-11-23T10:00:00Z",
        "updated_at": None,
        **fields,
    }


def test_create_sends_senlins_body_and_prints_the_urls_whole(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/receivers", Answer(201, {"receiver": receiver()}))
    run = herd(
        "receiver", "create", "grow", "--cluster", "web", "--action", "CLUSTER_SCALE_OUT",
        "-p", "count=2", "-p", 'nodes=["a", "b"]', "-p", "note=not json",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert api.sent("POST")[0].body == {
        "receiver": {
            "name": "grow",
            "type": "webhook",
            "cluster_id": "web",
            "action": "CLUSTER_SCALE_OUT",
            "params": {"count": 2, "nodes": ["a", "b"], "note": "not json"},
        }
    }
    lines = run.stdout.splitlines()
    assert (
        f"alarm_url: http://127.0.0.1:8778/v1/webhooks/{RID}/trigger?V=2&secret={SECRET}" in lines
    )


def test_create_json_and_bad_param(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/receivers", Answer(201, {"receiver": receiver()}))
    run = herd("--json", "receiver", "create", "g", "-c", "web", "-a", "CLUSTER_SCALE_IN")
    assert run.json()["receiver"]["id"] == RID
    assert "params" not in api.sent("POST")[0].body["receiver"]
    run = herd("receiver", "create", "g", "-c", "web", "-a", "CLUSTER_SCALE_IN", "-p", "count")
    assert run.exit_code == 1 and "--param must be KEY=VALUE" in run.stderr


def test_list_show_delete(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/receivers", Answer(200, {"receivers": [receiver()]}))
    api.on("GET", "/v1/receivers/grow", Answer(200, {"receiver": receiver()}))
    api.on("DELETE", "/v1/receivers/grow", Answer(204))
    run = herd(
        "receiver", "list", "--cluster", "c1", "--action", "CLUSTER_SCALE_OUT",
        "--global-project", "--sort", "name", "--limit", "5",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert "grow" in run.stdout and "CLUSTER_SCALE_OUT" in run.stdout
    assert api.sent("GET")[0].query == {
        "cluster_id": ["c1"],
        "action": ["CLUSTER_SCALE_OUT"],
        "global_project": ["true"],
        "sort": ["name"],
        "limit": ["5"],
    }
    shown = herd("receiver", "show", "grow")
    assert shown.exit_code == 0
    assert (
        f"alertmanager_url: http://127.0.0.1:8778/v1/webhooks/{RID}/alertmanager?secret={SECRET}"
        in shown.stdout.splitlines()
    )
    assert "deleted" in herd("receiver", "delete", "grow").stdout


def test_update(api: FakeApi, herd: Any) -> None:
    api.on("PATCH", "/v1/receivers/grow", Answer(200, {"receiver": receiver()}))
    assert herd("receiver", "update", "grow", "--name", "up", "-p", "count=3").exit_code == 0
    assert herd("receiver", "update", "grow", "--rotate-secret").exit_code == 0
    assert herd("receiver", "update", "grow", "--clear-params").exit_code == 0
    bodies = [r.body for r in api.sent("PATCH")]
    assert bodies == [
        {"receiver": {"name": "up", "params": {"count": 3}}},
        {"receiver": {"rotate_secret": True}},
        {"receiver": {"params": {}}},
    ]
    run = herd("receiver", "update", "grow")
    assert run.exit_code == 1 and "nothing to update" in run.stderr


def test_trigger_posts_to_the_url_and_waits(api: FakeApi, herd: Any) -> None:
    action_id = "a1b2c3d4-0000-4000-8000-000000000009"
    api.on(
        "POST",
        f"/v1/webhooks/{RID}/trigger",
        Answer(202, {"action": action_id}, {"Location": f"/v1/actions/{action_id}"}),
    )
    api.on(
        "GET",
        f"/v1/actions/{action_id}",
        Answer(200, {"action": {"id": action_id, "status": "RUNNING"}}),
        Answer(200, {"action": {"id": action_id, "status": "SUCCEEDED", "status_reason": "ok"}}),
    )
    url = f"{api.url}/v1/webhooks/{RID}/trigger?V=2&secret={SECRET}"
    run = herd("receiver", "trigger", url, "-p", "count=1", "--wait")
    assert run.exit_code == 0, run.stderr
    post = api.sent("POST")[0]
    assert post.query == {"V": ["2"], "secret": [SECRET]}
    assert post.body == {"params": {"count": 1}}
    assert f"Action {action_id} SUCCEEDED" in run.stdout
    run = herd("receiver", "trigger", f"{api.url}/v1/clusters")
    assert run.exit_code == 1 and "not a receiver URL" in run.stderr


def test_trigger_reports_a_failed_action(api: FakeApi, herd: Any) -> None:
    action_id = "a1b2c3d4-0000-4000-8000-00000000000f"
    api.on("POST", f"/v1/webhooks/{RID}/trigger", Answer(202, {"action": action_id}))
    reason = "Policy check failure: Failed policy 'sp': Policy p1 cooldown is still in progress."
    api.on(
        "GET",
        f"/v1/actions/{action_id}",
        Answer(200, {"action": {"id": action_id, "status": "FAILED", "status_reason": reason}}),
    )
    run = herd("receiver", "trigger", f"{api.url}/v1/webhooks/{RID}/trigger?V=2&secret=x", "--wait")
    assert run.exit_code == 1
    assert "cooldown is still in progress" in run.stderr
