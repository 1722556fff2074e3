from __future__ import annotations

from typing import Any

from tests.unit.cli.fakeapi import Answer, FakeApi

HEALTH = {
    "cluster_health": {
        "cluster_id": "0b1c2d3e-1111-2222-3333-444455556666",
        "cluster_name": "web",
        "status": "ACTIVE",
        "checking": "ACTIVE",
        "suspended_by": None,
        "policy": {
            "id": "p1",
            "name": "hp",
            "enabled": True,
            "detection_modes": ["LIFECYCLE_EVENTS", "NODE_STATUS_POLL_URL"],
            "interval": 5,
            "recovery_action": "RECREATE",
        },
        "lease": {"engine_id": "e-42", "renewed_at": "2026-11-23T10:00:00Z"},
        "summary": {"members": 2, "unhealthy": 1, "recoveries": 3, "in_backoff": 1},
        "members": [
            {
                "id": "5e6f7a8b-0000-0000-0000-000000000001",
                "name": "node-web-001",
                "index": 1,
                "status": "ACTIVE",
                "last_checked_at": "2026-11-23T10:00:01Z",
                "last_check_mode": "NODE_STATUS_POLL_URL",
                "last_check_result": "healthy",
                "last_check_reason": "http://127.0.0.1:4000/health: HTTP 200",
                "failures": 0,
                "recoveries": 0,
                "recoveries_in_a_row": 0,
                "last_recovery_result": None,
                "backoff_until": None,
            },
            {
                "id": "5e6f7a8b-0000-0000-0000-000000000002",
                "name": "node-web-002",
                "index": 2,
                "status": "ERROR",
                "last_checked_at": "2026-11-23T10:00:02Z",
                "last_check_mode": "LIFECYCLE_EVENTS",
                "last_check_result": "unhealthy",
                "last_check_reason": "LIFECYCLE_EVENTS: process 77 exited with code 3",
                "failures": 1,
                "recoveries": 3,
                "recoveries_in_a_row": 3,
                "last_recovery_result": "SUCCEEDED: RECREATE",
                "backoff_until": "2026-11-23T10:00:10Z",
            },
        ],
    }
}


def test_cluster_health_table(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/clusters/web/health", Answer(200, HEALTH))
    run = herd("cluster", "health", "web")
    assert run.exit_code == 0, run.stderr
    out = run.stdout
    for text in (
        "LIFECYCLE_EVENTS, NODE_STATUS_POLL_URL",
        "e-42",
        "node-web-002",
        "unhealthy (LIFECYCLE_EVENTS)",
        "healthy (NODE_STATUS_POLL_URL)",
        "process 77 exited",
        "3 (3 in a row)",
        "2026-11-23T10:00:10Z",
    ):
        assert text in out, text


def test_cluster_health_json(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/clusters/web/health", Answer(200, HEALTH))
    run = herd("--json", "cluster", "health", "web")
    assert run.exit_code == 0 and run.json() == HEALTH


def test_cluster_health_unknown_cluster(api: FakeApi, herd: Any) -> None:
    run = herd("cluster", "health", "nope")
    assert run.exit_code == 1 and "404" in run.stderr
