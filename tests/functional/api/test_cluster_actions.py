"""``POST /v1/clusters/<id>/actions``: inputs stored for the engine, and every 400/409 text."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    assert_error,
    finish_actions,
    make_cluster,
    make_node,
    make_policy,
    make_profile,
    mv,
    services,
    set_row,
)

from herd.store.models import ActionRow, ClusterLockRow, NodeRow
from herd.types import ActionStatus


@pytest.fixture
def cluster(client: TestClient) -> str:
    cid = make_cluster(client, make_profile(client, "prof"), "c1", desired_capacity=2, max_size=10)
    finish_actions(client)
    return cid


def act(client: TestClient, cid: str, body: Any, version: str = "1.14") -> Any:
    return client.post(f"/v1/clusters/{cid}/actions", json=body, headers=mv(version))


def inputs_of(client: TestClient, response: Any) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    action_id = response.json()["action"]
    assert response.headers["Location"] == f"/v1/actions/{action_id}"
    action = client.get(f"/v1/actions/{action_id}").json()["action"]
    finish_actions(client)
    return {"action": action["action"], **action["inputs"]}


def test_action_body_errors(client: TestClient, cluster: str) -> None:
    assert_error(act(client, cluster, {}), 400, "No action specified")
    assert_error(
        act(client, cluster, {"scale_in": {}, "scale_out": {}}), 400, "Multiple actions specified"
    )
    assert_error(
        act(client, cluster, {"explode": {}}), 400, "Unrecognized action 'explode' specified"
    )
    assert_error(act(client, cluster, [1]), 400, "The data provided is not a map")
    assert_error(act(client, "nope", {"check": {}}), 404, "The cluster 'nope' could not be found.")


def test_scale_out_and_in(client: TestClient, cluster: str) -> None:
    assert inputs_of(client, act(client, cluster, {"scale_out": {"count": 3}})) == {
        "action": "CLUSTER_SCALE_OUT",
        "count": 3,
    }
    assert inputs_of(client, act(client, cluster, {"scale_out": {}})) == {
        "action": "CLUSTER_SCALE_OUT"
    }
    assert inputs_of(client, act(client, cluster, {"scale_in": {"count": "1"}})) == {
        "action": "CLUSTER_SCALE_IN",
        "count": 1,
    }
    assert_error(
        act(client, cluster, {"scale_in": {"count": 0}}),
        400,
        "Count for scale-in request cannot be 0.",
    )
    assert_error(
        act(client, cluster, {"scale_out": {"count": 0}}),
        400,
        "Count for scale-out request cannot be 0.",
    )
    assert_error(
        act(client, cluster, {"scale_out": {"count": -1}}),
        400,
        "Value must be >= 0 for field 'count'.",
    )
    assert_error(
        act(client, cluster, {"scale_out": {"count": "two"}}),
        400,
        "The value for count must be an integer: 'two'.",
    )
    assert_error(
        act(client, cluster, {"scale_out": {"count": 200_000}}),
        400,
        "The target capacity (200002) is greater than the maximum number of nodes "
        "allowed per cluster (1000).",
    )


def test_resize(client: TestClient, cluster: str) -> None:
    got = inputs_of(
        client,
        act(
            client,
            cluster,
            {
                "resize": {
                    "adjustment_type": "CHANGE_IN_PERCENTAGE",
                    "number": 50,
                    "min_step": 1,
                    "strict": False,
                }
            },
        ),
    )
    assert got == {
        "action": "CLUSTER_RESIZE",
        "adjustment_type": "CHANGE_IN_PERCENTAGE",
        "number": 50.0,
        "min_size": None,
        "max_size": None,
        "min_step": 1,
        "strict": False,
    }
    got = inputs_of(client, act(client, cluster, {"resize": {"max_size": 4}}))
    assert got["max_size"] == 4 and got["adjustment_type"] is None
    assert_error(
        act(client, cluster, {"resize": {"strict": True}}),
        400,
        "Not enough parameters to do resize action.",
    )
    assert_error(
        act(client, cluster, {"resize": {"adjustment_type": "EXACT_CAPACITY"}}),
        400,
        "Missing number value for size adjustment.",
    )
    assert_error(
        act(client, cluster, {"resize": {"number": 3}}),
        400,
        "Missing adjustment_type value for size adjustment.",
    )
    assert_error(
        act(client, cluster, {"resize": {"adjustment_type": "BOGUS", "number": 1}}),
        400,
        "Value 'BOGUS' is not acceptable for field 'adjustment_type'.",
    )
    assert_error(
        act(client, cluster, {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 11}}),
        400,
        "The target capacity (11) is greater than the cluster's max_size (10).",
    )
    assert_error(
        act(client, cluster, {"resize": {"min_size": 5, "max_size": 3}}),
        400,
        "The specified min_size (5) is greater than the specified max_size (3).",
    )
    assert_error(
        act(client, cluster, {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": -1}}),
        400,
        "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'.",
    )


def test_add_and_del_nodes(client: TestClient, cluster: str) -> None:
    profile = client.get(f"/v1/clusters/{cluster}").json()["cluster"]["profile_id"]
    orphan = make_node(client, profile, "orphan")
    member = make_node(client, profile, "member", cluster_id=cluster)
    finish_actions(client)
    assert_error(
        act(client, cluster, {"add_nodes": {"nodes": [orphan, "ghost"]}}),
        400,
        f"Nodes are not ACTIVE: ['{orphan}'].\nNodes not found: ['ghost'].",
    )
    set_row(client, NodeRow, orphan, status="ACTIVE")
    set_row(client, NodeRow, member, status="ACTIVE")
    assert inputs_of(client, act(client, cluster, {"add_nodes": {"nodes": ["orphan"]}})) == {
        "action": "CLUSTER_ADD_NODES",
        "nodes": [orphan],
    }
    # Senlin answers 400 (BadRequest) here, not NodeNotOrphan's 409: senlin-tempest-plugin's
    # test_cluster_add_nodes_node_not_orphan
    assert_error(
        act(client, cluster, {"add_nodes": {"nodes": [member]}}),
        400,
        f"Nodes ['{member}'] already owned by some cluster.",
    )
    assert_error(
        act(client, cluster, {"add_nodes": {"nodes": []}}),
        400,
        "Value for 'nodes' must have at least 1 item(s).",
    )

    got = inputs_of(client, act(client, cluster, {"del_nodes": {"nodes": ["member"]}}, "1.3"))
    assert got == {
        "action": "CLUSTER_DEL_NODES",
        "candidates": [member],
        "count": 1,
        "destroy_after_deletion": False,
    }
    got = inputs_of(
        client,
        act(client, cluster, {"del_nodes": {"nodes": [member], "destroy_after_deletion": True}}),
    )
    assert got["destroy_after_deletion"] is True
    assert_error(
        act(client, cluster, {"del_nodes": {"nodes": [orphan, "ghost"]}}),
        400,
        f"Nodes not found: ['ghost'].\nNodes not members of specified cluster: ['{orphan}'].",
    )
    assert_error(
        act(client, cluster, {"del_nodes": {"nodes": [member, member]}}),
        400,
        "Items for 'nodes' must be unique",
    )
    assert_error(
        act(client, cluster, {"del_nodes": {"nodes": []}}),
        400,
        "Value for 'nodes' must have at least 1 item(s).",
    )


def test_replace_nodes(client: TestClient, cluster: str) -> None:
    profile = client.get(f"/v1/clusters/{cluster}").json()["cluster"]["profile_id"]
    member = make_node(client, profile, "member", cluster_id=cluster)
    spare = make_node(client, profile, "spare")
    finish_actions(client)
    set_row(client, NodeRow, spare, status="ACTIVE")
    body = {"replace_nodes": {"nodes": {member: spare}}}
    assert_error(
        act(client, cluster, body, "1.2"), 400, "API version '1.2' is not supported on this method."
    )
    assert inputs_of(client, act(client, cluster, body)) == {
        "action": "CLUSTER_REPLACE_NODES",
        "candidates": {member: spare},
    }
    assert_error(
        act(client, cluster, {"replace_nodes": {"nodes": {"ghost": spare}}}),
        400,
        "Original nodes not found: ['ghost'].",
    )


def test_check_recover(client: TestClient, cluster: str) -> None:
    assert inputs_of(client, act(client, cluster, {"check": {}})) == {"action": "CLUSTER_CHECK"}
    got = inputs_of(
        client,
        act(
            client,
            cluster,
            {"recover": {"operation": "recreate", "check": True, "check_capacity": False}},
        ),
    )
    assert got == {
        "action": "CLUSTER_RECOVER",
        "operation": "RECREATE",
        "check": True,
        "check_capacity": False,
    }
    assert_error(
        act(client, cluster, {"recover": {"operation": "dance"}}),
        400,
        "Operation value 'dance' has to be one of the following: REBOOT, REBUILD, RECREATE.",
    )


def test_policy_attach_detach_update(client: TestClient, cluster: str) -> None:
    policy = make_policy(client, "dp")
    assert inputs_of(client, act(client, cluster, {"policy_attach": {"policy_id": "dp"}})) == {
        "action": "CLUSTER_ATTACH_POLICY",
        "policy_id": policy,
        "enabled": True,
    }
    assert_error(
        act(client, cluster, {"policy_attach": {"policy_id": "nope"}}),
        400,
        "The specified policy 'nope' could not be found.",
    )
    assert_error(
        act(client, cluster, {"policy_attach": {"policy_id": "dp", "enabled": "maybe"}}),
        400,
        "Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', "
        "'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
    )
    assert_error(
        act(client, cluster, {"policy_detach": {"policy_id": "dp"}}),
        400,
        f"The policy 'dp' is not attached to the specified cluster '{cluster}'.",
    )
    assert_error(
        act(client, cluster, {"policy_update": {"policy_id": "dp", "enabled": False}}),
        400,
        f"The policy 'dp' is not attached to the specified cluster '{cluster}'.",
    )
    from herd.store.models import BindingRow

    with services(client).database.write() as session:
        session.add(
            BindingRow(
                id="b" * 36,
                cluster_id=cluster,
                policy_id=policy,
                enabled=True,
                priority=400,
                data={},
            )
        )
    assert inputs_of(
        client, act(client, cluster, {"policy_update": {"policy_id": "dp", "enabled": False}})
    ) == {"action": "CLUSTER_UPDATE_POLICY", "policy_id": policy, "enabled": False}
    assert inputs_of(client, act(client, cluster, {"policy_detach": {"policy_id": policy}})) == {
        "action": "CLUSTER_DETACH_POLICY",
        "policy_id": policy,
    }


def test_fail_fast_lock_and_conflict(client: TestClient, cluster: str) -> None:
    first = act(client, cluster, {"scale_out": {"count": 1}}).json()["action"]
    assert_error(
        act(client, cluster, {"scale_in": {"count": 1}}),
        409,
        f"The CLUSTER_SCALE_IN action for target {cluster} conflicts with the "
        f"following action(s): {first}",
        "ActionConflict",
    )
    finish_actions(client)
    # A lock held by a RUNNING action of a live engine: 409 ResourceIsLocked.
    from herd.store.models import EngineRow

    svc = services(client)
    now = svc.now()
    with svc.database.write() as session:
        session.add(EngineRow(id="e" * 36, host="h", pid=1, started_at=now, heartbeat_at=now))
        holder = session.get(ActionRow, first)
        assert holder is not None
        holder.status, holder.owner = ActionStatus.RUNNING, "e" * 36
        session.add(
            ClusterLockRow(cluster_id=cluster, action_ids=[first], semaphore=-1, updated_at=now)
        )
    assert_error(
        act(client, cluster, {"check": {}}),
        409,
        f"CLUSTER_CHECK for cluster '{cluster}' cannot be completed because it is already locked.",
        "ResourceIsLocked",
    )
    # ... but the lock of a dead engine does not count.
    with svc.database.write() as session:
        engine = session.get(EngineRow, "e" * 36)
        assert engine is not None
        engine.heartbeat_at = now - 3600
        holder = session.get(ActionRow, first)
        assert holder is not None
        holder.status = ActionStatus.SUCCEEDED
    assert act(client, cluster, {"check": {}}).status_code == 202
    # CLUSTER_DELETE bypasses both checks.
    assert client.delete(f"/v1/clusters/{cluster}").status_code == 202
