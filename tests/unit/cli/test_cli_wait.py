from __future__ import annotations

from typing import Any

from tests.unit.cli.fakeapi import Answer, FakeApi

ACTION_ID = "a1b2c3d4-0000-0000-0000-000000000001"
LOCATION = {"Location": f"/v1/actions/{ACTION_ID}"}


def _action(status: str, reason: str = "", depends_on: list[str] | None = None) -> Answer:
    return Answer(
        200,
        {
            "action": {
                "id": ACTION_ID,
                "action": "CLUSTER_CREATE",
                "status": status,
                "status_reason": reason,
                "depends_on": depends_on or [],
            }
        },
    )


def test_create_without_wait_prints_the_cluster_and_action(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/clusters", Answer(202, {"cluster": {"id": "c1", "name": "web"}}, LOCATION))
    run = herd(
        "cluster",
        "create",
        "web",
        "--profile",
        "pserver",
        "--desired-capacity",
        "3",
        "--min-size",
        "1",
        "--max-size",
        "5",
        "--timeout",
        "60",
        "--metadata",
        "team=a",
        "-m",
        "tier=web",
    )
    assert run.exit_code == 0, run.stderr
    assert api.sent()[0].body == {
        "cluster": {
            "name": "web",
            "profile_id": "pserver",
            "desired_capacity": 3,
            "min_size": 1,
            "max_size": 5,
            "timeout": 60,
            "metadata": {"team": "a", "tier": "web"},
        }
    }
    assert ACTION_ID in run.stdout
    assert len(api.sent("GET")) == 0


def test_wait_polls_until_succeeded(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/clusters/web/actions", Answer(202, {"action": ACTION_ID}, LOCATION))
    api.on(
        "GET",
        f"/v1/actions/{ACTION_ID}",
        _action("READY"),
        _action("RUNNING", "Waiting for depended actions.", ["x", "y"]),
        _action("SUCCEEDED", "Action completed successfully."),
    )
    run = herd("cluster", "scale-out", "web", "--count", "2", "--wait")
    assert run.exit_code == 0, run.stderr
    assert api.sent("POST")[0].body == {"scale_out": {"count": 2}}
    assert len(api.sent("GET")) == 3
    assert "RUNNING" in run.stderr and "2 child actions" in run.stderr
    assert "SUCCEEDED: Action completed successfully." in run.stdout


def test_wait_fails_with_the_reason(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/clusters/web/actions", Answer(202, {"action": ACTION_ID}, LOCATION))
    api.on("GET", f"/v1/actions/{ACTION_ID}", _action("FAILED", "Driver error: boom"))
    run = herd("cluster", "scale-in", "web", "--wait")
    assert run.exit_code == 1
    assert api.sent("POST")[0].body == {"scale_in": {}}
    assert "FAILED: Driver error: boom" in run.stderr


def test_wait_cancelled_is_a_failure(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/clusters/web/actions", Answer(202, {"action": ACTION_ID}, LOCATION))
    api.on("GET", f"/v1/actions/{ACTION_ID}", _action("CANCELLED", "Action execution cancelled"))
    run = herd("cluster", "check", "web", "--wait")
    assert run.exit_code == 1
    assert "CANCELLED" in run.stderr


def test_wait_timeout(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/clusters/web/actions", Answer(202, {"action": ACTION_ID}, LOCATION))
    api.on("GET", f"/v1/actions/{ACTION_ID}", _action("RUNNING"))
    run = herd("cluster", "recover", "web", "--wait", "--wait-timeout", "0.3")
    assert run.exit_code == 3
    assert "still RUNNING" in run.stderr


def test_wait_in_json_mode_keeps_stdout_one_document(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/nodes", Answer(202, {"node": {"id": "n1", "name": "n"}}, LOCATION))
    api.on("GET", f"/v1/actions/{ACTION_ID}", _action("SUCCEEDED"))
    run = herd("--json", "node", "create", "n", "--profile", "p", "--cluster", "web", "--wait")
    assert run.exit_code == 0
    assert run.json() == {"node": {"id": "n1", "name": "n"}}
    assert api.sent("POST")[0].body == {
        "node": {"name": "n", "profile_id": "p", "cluster_id": "web"}
    }


def test_delete_force_and_wait(api: FakeApi, herd: Any) -> None:
    api.on("DELETE", "/v1/clusters/web", Answer(202, None, LOCATION))
    api.on("GET", f"/v1/actions/{ACTION_ID}", _action("SUCCEEDED"))
    run = herd("cluster", "delete", "web", "--force", "--wait")
    assert run.exit_code == 0, run.stderr
    assert api.sent("DELETE")[0].body == {"force": True}
    assert "Cluster web deleted." in run.stdout


def test_delete_already_in_progress_is_204(api: FakeApi, herd: Any) -> None:
    api.on("DELETE", "/v1/nodes/n1", Answer(204))
    run = herd("node", "delete", "n1", "--wait")
    assert run.exit_code == 0
    assert api.sent("DELETE")[0].body is None
    assert "already in progress" in run.stdout
