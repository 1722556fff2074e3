from __future__ import annotations

from typing import Any

from tests.unit.cli.fakeapi import Answer, FakeApi

NODE = {
    "id": "5e6f7a8b-0000-0000-0000-000000000001",
    "name": "web-2",
    "index": 2,
    "status": "ACTIVE",
    "health": "CHECK_FAILED",
    "health_reason": "marked by operator",
    "cluster_id": "0b1c2d3e-1111-2222-3333-444455556666",
    "physical_id": "pid:4242",
}


def test_node_list_columns_and_cluster_filter(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/nodes", Answer(200, {"nodes": [NODE]}))
    run = herd("node", "list", "--cluster", "web", "--status", "ACTIVE")
    assert run.exit_code == 0, run.stderr
    assert api.sent()[0].query == {"cluster_id": ["web"], "status": ["ACTIVE"]}
    header = next(line for line in run.stdout.splitlines() if "physical_id" in line)
    for column in ("id", "name", "index", "status", "health", "cluster", "physical_id"):
        assert column in header
    assert "CHECK_FAILED (marked by operator)" in run.stdout
    assert "5e6f7a8b" in run.stdout and "0b1c2d3e" in run.stdout


def test_mark_unhealthy(api: FakeApi, herd: Any) -> None:
    api.on("PATCH", "/v1/clusters/web/nodes/web-2", Answer(200, {"node": NODE}))
    run = herd("node", "mark-unhealthy", "web", "web-2", "--reason", "disk full")
    assert run.exit_code == 0, run.stderr
    request = api.sent("PATCH")[0]
    assert request.body == {"mark_unhealthy": True, "resource_status_reason": "disk full"}
    assert "CHECK_FAILED" in run.stdout and "health_reason" in run.stdout


def test_mark_unhealthy_reset(api: FakeApi, herd: Any) -> None:
    healthy = {**NODE, "health": "HEALTHY", "health_reason": None}
    api.on("PATCH", "/v1/clusters/web/nodes/web-2", Answer(200, {"node": healthy}))
    run = herd("--json", "node", "mark-unhealthy", "web", "web-2", "--reset")
    assert run.exit_code == 0
    assert api.sent("PATCH")[0].body == {"mark_unhealthy": False}
    assert run.json()["node"]["health"] == "HEALTHY"


def test_mark_unhealthy_conflict(api: FakeApi, herd: Any) -> None:
    error = {
        "code": 409,
        "title": "Conflict",
        "explanation": "",
        "error": {
            "code": 409,
            "message": "The cluster 'web' is locked by action 'abc'.",
            "type": "ActionInProgress",
        },
    }
    api.on("PATCH", "/v1/clusters/web/nodes/web-2", Answer(409, error))
    run = herd("node", "mark-unhealthy", "web", "web-2")
    assert run.exit_code == 1
    assert "locked by action" in run.stderr and "409 ActionInProgress" in run.stderr


def test_node_update_check_recover(api: FakeApi, herd: Any) -> None:
    accepted = Answer(202, {"node": NODE}, {"Location": "/v1/actions/act-9"})
    api.on("PATCH", "/v1/nodes/web-2", accepted)
    api.on("POST", "/v1/nodes/web-2/actions", Answer(202, {"action": "act-9"}))
    assert (
        herd("node", "update", "web-2", "--name", "w2", "--untainted", "-m", "a=b").exit_code == 0
    )
    assert herd("node", "check", "web-2").exit_code == 0
    assert herd("node", "recover", "web-2", "--check").exit_code == 0
    assert api.sent("PATCH")[0].body == {
        "node": {"name": "w2", "tainted": False, "metadata": {"a": "b"}}
    }
    assert [r.body for r in api.sent("POST")] == [{"check": {}}, {"recover": {"check": True}}]


def test_bad_metadata(api: FakeApi, herd: Any) -> None:
    run = herd("node", "create", "n", "--profile", "p", "--metadata", "novalue")
    assert run.exit_code == 1
    assert "KEY=VALUE" in run.stderr
    assert api.sent() == []
