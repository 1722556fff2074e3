from __future__ import annotations

from typing import Any

import pytest
from tests.unit.cli.fakeapi import Answer, FakeApi

ACCEPTED = Answer(202, {"action": "act-1"}, {"Location": "/v1/actions/act-1"})


@pytest.mark.parametrize(
    ("args", "body"),
    [
        (["resize", "web", "--capacity", "4"], {"adjustment_type": "EXACT_CAPACITY", "number": 4}),
        (
            ["resize", "web", "--adjustment", "-2", "--min-size", "1", "--strict"],
            {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -2, "min_size": 1, "strict": True},
        ),
        (
            ["resize", "web", "--percentage", "50", "--min-step", "2", "--no-strict"],
            {
                "adjustment_type": "CHANGE_IN_PERCENTAGE",
                "number": 50.0,
                "min_step": 2,
                "strict": False,
            },
        ),
        (["resize", "web", "--max-size", "10"], {"max_size": 10}),
    ],
)
def test_resize_bodies(api: FakeApi, herd: Any, args: list[str], body: dict[str, Any]) -> None:
    api.on("POST", "/v1/clusters/web/actions", ACCEPTED)
    run = herd("cluster", *args)
    assert run.exit_code == 0, run.stderr
    assert api.sent("POST")[0].body == {"resize": body}


def test_resize_rejects_two_size_changes(api: FakeApi, herd: Any) -> None:
    run = herd("cluster", "resize", "web", "--capacity", "3", "--adjustment", "1")
    assert run.exit_code == 1
    assert "only one of" in run.stderr
    assert api.sent() == []


@pytest.mark.parametrize(
    ("args", "body"),
    [
        (["add-nodes", "web", "n1", "n2"], {"add_nodes": {"nodes": ["n1", "n2"]}}),
        (
            ["del-nodes", "web", "n1", "--destroy-after-deletion"],
            {"del_nodes": {"nodes": ["n1"], "destroy_after_deletion": True}},
        ),
        (
            ["replace-nodes", "web", "old1=new1", "old2=new2"],
            {"replace_nodes": {"nodes": {"old1": "new1", "old2": "new2"}}},
        ),
        (["check", "web"], {"check": {}}),
        (["recover", "web", "--operation", "RECREATE"], {"recover": {"operation": "RECREATE"}}),
        (["replace-unhealthy", "web"], {"replace_unhealthy": {}}),
        (
            ["replace-unhealthy", "web", "--batch-size", "2"],
            {"replace_unhealthy": {"batch_size": 2}},
        ),
        (
            ["policy-attach", "web", "dp01", "--disabled"],
            {"policy_attach": {"policy_id": "dp01", "enabled": False}},
        ),
        (["policy-detach", "web", "dp01"], {"policy_detach": {"policy_id": "dp01"}}),
        (
            ["policy-update", "web", "dp01", "--enabled"],
            {"policy_update": {"policy_id": "dp01", "enabled": True}},
        ),
    ],
)
def test_action_bodies(api: FakeApi, herd: Any, args: list[str], body: dict[str, Any]) -> None:
    api.on("POST", "/v1/clusters/web/actions", ACCEPTED)
    run = herd("cluster", *args)
    assert run.exit_code == 0, run.stderr
    assert api.sent("POST")[0].body == body
    assert "act-1" in run.stdout


def test_policy_update_needs_a_choice(api: FakeApi, herd: Any) -> None:
    run = herd("cluster", "policy-update", "web", "dp01")
    assert run.exit_code == 1
    assert "--enabled or --disabled" in run.stderr


def test_bad_replacement_pair(api: FakeApi, herd: Any) -> None:
    run = herd("cluster", "replace-nodes", "web", "oops")
    assert run.exit_code == 1
    assert "OLD=NEW" in run.stderr


def test_lifecycle_calls(api: FakeApi, herd: Any) -> None:
    api.on("POST", "/v1/clusters/web/actions", Answer(202, {"action": "tok-1"}))
    run = herd("cluster", "complete-lifecycle", "web", "tok-1")
    assert run.exit_code == 0, run.stderr
    assert "tok-1 completed" in run.stdout
    run = herd("cluster", "lifecycle-heartbeat", "web", "tok-1")
    assert run.exit_code == 0
    run = herd("cluster", "complete-lifecycle", "web", "tok", "--result", "ABANDON")
    assert run.exit_code == 0, run.stderr
    assert "tok-1 completed (ABANDON)" in run.stdout  # the full id the API answered
    assert herd("cluster", "complete-lifecycle", "web", "tok", "--result", "MAYBE").exit_code == 2
    assert [r.body for r in api.sent("POST")] == [
        {"complete_lifecycle": {"lifecycle_action_token": "tok-1"}},
        {"lifecycle_heartbeat": {"lifecycle_action_token": "tok-1"}},
        {
            "complete_lifecycle": {
                "lifecycle_action_token": "tok",
                "lifecycle_action_result": "ABANDON",
            }
        },
    ]


def test_preview_scale_in_table(api: FakeApi, herd: Any) -> None:
    victims = [
        {"node_id": "n-unhealthy", "name": "web-3", "rule": "CHECK_FAILED", "zone": "az1"},
        {"node_id": "n-old", "name": "web-1", "rule": "OLDEST_FIRST", "zone": "az2"},
    ]
    api.on("POST", "/v1/clusters/web/actions", Answer(200, {"victims": victims}))
    run = herd("cluster", "preview-scale-in", "web", "--count", "2")
    assert run.exit_code == 0, run.stderr
    assert api.sent("POST")[0].body == {"preview_scale_in": {"count": 2}}
    lines = run.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "web-3" in line)
    second = next(i for i, line in enumerate(lines) if "web-1" in line)
    assert first < second
    assert "CHECK_FAILED" in lines[first] and "az1" in lines[first]
    assert "zone" in run.stdout and "rule" in run.stdout


def test_preview_names_its_seed_and_scale_in_takes_it(api: FakeApi, herd: Any) -> None:
    victims = [{"node_id": "n1", "name": "web-1", "rule": "RANDOM"}]
    api.on("POST", "/v1/clusters/web/actions", Answer(200, {"victims": victims, "seed": 77}))
    run = herd("cluster", "preview-scale-in", "web", "--count", "1")
    assert run.exit_code == 0, run.stderr
    assert "herd cluster scale-in web --count 1 --seed 77" in " ".join(run.stdout.split())
    api.on("POST", "/v1/clusters/web/actions", Answer(202, {"action": "a1"}))
    run = herd("cluster", "scale-in", "web", "--count", "1", "--seed", "77")
    assert run.exit_code == 0, run.stderr
    assert api.sent("POST")[-1].body == {"scale_in": {"count": 1, "seed": 77}}


def test_policy_list(api: FakeApi, herd: Any) -> None:
    api.on(
        "GET",
        "/v1/clusters/web/policies",
        Answer(
            200,
            {
                "cluster_policies": [
                    {
                        "policy_id": "p1",
                        "policy_name": "dp01",
                        "policy_type": "senlin.policy.deletion-1.1",
                        "enabled": True,
                    }
                ]
            },
        ),
    )
    run = herd("cluster", "policy-list", "web")
    assert run.exit_code == 0
    assert "dp01" in run.stdout and "senlin.policy.deletion-1.1" in run.stdout


def test_members_shows_health(api: FakeApi, herd: Any) -> None:
    node = {
        "id": "n1",
        "name": "web-1",
        "index": 1,
        "status": "ACTIVE",
        "health": "CHECK_FAILED",
        "health_reason": "process exited",
        "cluster_id": "c1",
        "physical_id": "pid-1",
    }
    api.on("GET", "/v1/nodes", Answer(200, {"nodes": [node]}))
    run = herd("cluster", "members", "web")
    assert run.exit_code == 0
    assert api.sent()[0].query == {"cluster_id": ["web"], "sort": ["index"]}  # index order
    assert "CHECK_FAILED (process exited)" in run.stdout
