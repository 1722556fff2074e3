"""The deletion policy applied by the engine: victims, orphans, desired capacity, hooks."""

from __future__ import annotations

from typing import Any

from tests.functional.engine.harness import Harness
from tests.webhook_receiver import Receiver

from herd.types import ActionName, ActionStatus


def deletion_spec(**properties: Any) -> dict[str, Any]:
    return {"type": "senlin.policy.deletion", "version": "1.1", "properties": properties}


def test_scale_in_oldest_first_writes_candidates_as_the_spec_shows(harness: Harness) -> None:
    cluster = harness.cluster(4)
    nodes = harness.nodes(cluster)
    for age, node in enumerate(nodes):  # node 3 is the oldest, then node 2
        harness.set_node(node.id, created_at=1000.0 - age)
    harness.attach(
        cluster,
        deletion_spec(criteria="OLDEST_FIRST", grace_period=0, reduce_desired_capacity=False),
    )
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 2})
    assert action.status == "SUCCEEDED", action.status_reason
    assert action.data["status"] == "OK"
    assert action.data["reason"] == "Candidates generated"
    assert action.data["deletion"] == {
        "count": 2,
        "candidates": [nodes[3].id, nodes[2].id],
        "destroy_after_deletion": True,
        "grace_period": 0,
        "reduce_desired_capacity": False,
    }
    assert [n.id for n in harness.nodes(cluster)] == [nodes[0].id, nodes[1].id]


def test_policy_orphans_victims_when_destroy_is_false(harness: Harness) -> None:
    cluster = harness.cluster(3)
    harness.attach(cluster, deletion_spec(criteria="YOUNGEST_FIRST", destroy_after_deletion=False))
    for age, node in enumerate(harness.nodes(cluster)):
        harness.set_node(node.id, created_at=1000.0 + age)
    youngest = harness.nodes(cluster)[-1]
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1})
    assert action.status == "SUCCEEDED", action.status_reason
    orphan = harness.node(youngest.id)
    assert orphan is not None and orphan.cluster_id is None and orphan.status == "ACTIVE"


def test_protected_members_are_never_victims_and_shortfall_fails(harness: Harness) -> None:
    cluster = harness.cluster(3)
    nodes = harness.nodes(cluster)
    for node in nodes[:2]:
        harness.set_node(node.id, meta_data={"protected": True})
    harness.attach(cluster, deletion_spec(criteria="OLDEST_FIRST"))
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 2})
    assert action.status == "FAILED"
    assert action.status_reason.startswith("Policy check failure: Failed policy 'pol':")
    assert "unprotected" in action.status_reason
    assert len(harness.nodes(cluster)) == 3
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1})
    assert action.status == "SUCCEEDED", action.status_reason
    assert action.outputs["nodes_removed"] == [nodes[2].id]


def test_node_delete_is_checked_by_the_deletion_policy(harness: Harness) -> None:
    cluster = harness.cluster(3)
    harness.attach(cluster, deletion_spec(reduce_desired_capacity=False))
    victim = harness.nodes(cluster)[1]
    action = harness.run(ActionName.NODE_DELETE, victim.id)
    assert action.status == "SUCCEEDED", action.status_reason
    assert action.data["deletion"]["candidates"] == [victim.id]
    assert harness.node(victim.id) is None
    row = harness.get_cluster(cluster)
    assert row is not None and row.desired_capacity == 3 and row.status == "WARNING"


def _complete(harness: Harness, token: str, result: str = "CONTINUE") -> None:
    from herd.store.models import ActionRow

    with harness.db.write() as session:
        row = session.get(ActionRow, token)
        assert row is not None and row.status == ActionStatus.WAITING_LIFECYCLE_COMPLETION
        row.status = ActionStatus.READY
        row.data = {**row.data, "lifecycle_result": result}


def test_webhook_hook_waits_for_completion_and_abandon_keeps_node(
    harness: Harness, receiver: Receiver
) -> None:
    cluster = harness.cluster(4)
    harness.attach(
        cluster,
        deletion_spec(
            criteria="OLDEST_FIRST",
            hooks={"type": "webhook", "params": {"url": receiver.url}, "timeout": 30},
        ),
    )
    action_id = harness.submit(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 2})
    tokens = receiver.wait(2)
    assert {m["lifecycle_transition_type"] for m in receiver.messages} == {"termination"}
    assert {m["cluster_id"] for m in receiver.messages} == {cluster}
    first, second = sorted(tokens)
    _complete(harness, tokens[first])
    _complete(harness, tokens[second], "ABANDON")
    action = harness.wait(action_id)
    assert action.status == "SUCCEEDED", action.status_reason
    assert action.outputs["nodes_removed"] == [first]
    assert action.outputs["nodes_kept_by_hook"] == [second]
    assert harness.node(first) is None and harness.node(second) is not None


def test_hook_timeout_continues_and_undeliverable_hook_does_not_hang(harness: Harness) -> None:
    cluster = harness.cluster(2)
    harness.attach(
        cluster,
        deletion_spec(
            hooks={
                "type": "webhook",
                "params": {"url": "http://127.0.0.1:9/nowhere"},
                "timeout": 60,
            }
        ),
    )
    # The hook's timeout (60 s) is longer than harness.run waits (30 s): the action can only
    # end here because an undeliverable message resolves at once instead of waiting.
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1}, timeout=30)
    assert action.status == "SUCCEEDED", action.status_reason
    child = harness.children(action.id)[0]
    assert child.data["lifecycle_resolution"].startswith("Lifecycle hook not delivered")
    assert len(harness.nodes(cluster)) == 1
    warnings = [
        e
        for n in [action.outputs["nodes_removed"][0]]
        for e in harness.events(n)
        if e.action == "LIFECYCLE_HOOK"
    ]
    assert warnings and warnings[0].status == "FAILED"
