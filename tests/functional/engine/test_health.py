"""Checks and replacement of unhealthy members on a real engine (sim driver)."""

from __future__ import annotations

from tests.functional.engine.harness import Harness

from herd.types import ActionName


def test_replace_unhealthy_keeps_name_and_index_and_destroys_old(harness: Harness) -> None:
    cluster = harness.cluster(4, min_size=4)
    nodes = harness.nodes(cluster)
    marked = [nodes[1], nodes[3]]
    for node in marked:
        harness.set_node(
            node.id,
            health="CHECK_FAILED",
            health_reason="app says broken",
            health_marked_by="tester",
        )
    action = harness.run(ActionName.CLUSTER_REPLACE_UNHEALTHY, cluster, {"batch_size": 1})
    assert action.status == "SUCCEEDED", action.status_reason
    assert sorted(action.outputs["nodes_replaced"]) == sorted(n.id for n in marked)
    after = harness.nodes(cluster)
    assert [(n.name, n.index) for n in after] == [(n.name, n.index) for n in nodes]
    assert all(harness.node(n.id) is None for n in marked)
    assert {n.status for n in after} == {"ACTIVE"}
    assert all(n.physical_id not in {m.physical_id for m in marked} for n in after)


def test_cluster_check_marks_broken_sim_nodes(harness: Harness) -> None:
    cluster = harness.cluster(3)
    nodes = harness.nodes(cluster)
    driver = harness.engine.ctx.drivers.get("herd.sim-1.0")
    assert nodes[0].physical_id is not None
    driver.break_node(nodes[0].physical_id, "disk on fire")  # type: ignore[attr-defined]
    action = harness.run(ActionName.CLUSTER_CHECK, cluster)
    assert action.status == "SUCCEEDED", action.status_reason
    broken = harness.node(nodes[0].id)
    assert broken is not None and broken.health == "CHECK_FAILED"
    assert "disk on fire" in broken.health_reason
    healthy = harness.node(nodes[1].id)
    assert healthy is not None and healthy.health == "CHECK_COMPLETE"
    cluster_row = harness.get_cluster(cluster)
    assert cluster_row is not None and cluster_row.status == "WARNING"
    action = harness.run(ActionName.CLUSTER_RECOVER, cluster)
    assert action.status == "SUCCEEDED", action.status_reason
    recovered = harness.node(nodes[0].id)
    assert recovered is not None and recovered.status == "ACTIVE"
    assert recovered.physical_id != nodes[0].physical_id
