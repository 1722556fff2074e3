"""RECREATE, REBOOT and REBUILD through CLUSTER_RECOVER's NODE_RECOVER children and NODE_RECOVER.

A real engine (the recovery path is the action machinery's), the sim driver and
real processes for the process driver.
"""

from __future__ import annotations

import os
import sys

from tests.functional.engine.harness import Harness
from tests.functional.health.helpers import check_row, health_spec, sim

from herd.drivers.base import ResourceRef
from herd.drivers.procfs import read_proc
from herd.types import ActionName


def _break(h: Harness, cluster: str, count: int) -> list[str]:
    nodes = h.nodes(cluster)[:count]
    for node in nodes:
        assert node.physical_id is not None
        sim(h).break_node(node.physical_id, "disk on fire")
    return [n.id for n in nodes]


def test_cluster_recover_runs_node_recover_children_and_reboot(harness: Harness) -> None:
    cluster = harness.cluster(3)
    broken = _break(harness, cluster, 2)
    before = {n.id: n.physical_id for n in harness.nodes(cluster)}
    action = harness.run(
        ActionName.CLUSTER_RECOVER, cluster, {"check": True, "operation": "REBOOT"}
    )
    assert action.status == "SUCCEEDED", action.status_reason
    assert sorted(action.outputs["nodes_recovered"]) == sorted(broken)
    children = harness.children(action.id)
    assert sorted(c.target for c in children) == sorted(broken)
    assert {(c.action, c.status, c.cause) for c in children} == {
        ("NODE_RECOVER", "SUCCEEDED", "Derived Action")
    }
    assert all(c.inputs["operation"] == "REBOOT" for c in children)
    for node_id in broken:
        node = harness.node(node_id)
        assert node is not None and node.status == "ACTIVE" and node.health == "CHECK_COMPLETE"
        assert node.physical_id == before[node_id]  # rebooted in place
        assert sim(harness).restarts(str(node.physical_id)) == (1, 0)
        reasons = [e.status_reason for e in harness.events(node_id)]
        assert f"Recovery succeeded: REBOOT: {before[node_id]} restarted" in reasons
        check = check_row(harness, node_id)
        assert check is not None and check.last_recovery_result.startswith("SUCCEEDED: REBOOT")
    cluster_row = harness.get_cluster(cluster)
    assert cluster_row is not None and cluster_row.status == "ACTIVE"


def test_rebuild_and_recreate_on_sim(harness: Harness) -> None:
    cluster = harness.cluster(2)
    first, second = harness.nodes(cluster)
    (broken,) = _break(harness, cluster, 1)
    action = harness.run(ActionName.NODE_RECOVER, broken, {"operation": "REBUILD"})
    assert action.status == "SUCCEEDED", action.status_reason
    rebuilt = harness.node(broken)
    assert rebuilt is not None and rebuilt.physical_id == first.physical_id
    assert sim(harness).restarts(str(first.physical_id)) == (0, 1)

    action = harness.run(ActionName.NODE_RECOVER, second.id, {"operation": "RECREATE"})
    assert action.status == "SUCCEEDED", action.status_reason
    recreated = harness.node(second.id)
    assert recreated is not None and recreated.physical_id != second.physical_id
    assert (recreated.name, recreated.index) == (second.name, second.index)
    gone = sim(harness).check(ResourceRef(second.id, second.physical_id, {}, {}))
    assert "does not exist" in gone.reason  # the old server went


def test_policy_recovery_action_and_fencing_are_used(harness: Harness) -> None:
    cluster = harness.cluster(2)
    spec = health_spec(
        [{"type": "NODE_STATUS_POLLING"}], interval=3600, action="REBOOT", fencing=["COMPUTE"]
    )
    harness.attach(cluster, spec)
    (broken,) = _break(harness, cluster, 1)
    action = harness.run(ActionName.CLUSTER_RECOVER, cluster, {"check": True})
    assert action.status == "SUCCEEDED", action.status_reason
    (child,) = harness.children(action.id)
    assert child.inputs["operation"] == "REBOOT" and child.inputs["fencing"] == ["COMPUTE"]
    statuses = {(e.status, e.status_reason) for e in harness.events(broken)}
    assert (
        "FENCE_SKIPPED",
        "Fencing COMPUTE skipped: herd nodes have no compute host to fence (a no-op).",
    ) in statuses


def test_node_delete_timeout_and_force_recreate(harness: Harness) -> None:
    slow = harness.profile({"delete_latency": 2})
    cluster = harness.cluster(2, profile=slow)
    first, second = harness.nodes(cluster)
    action = harness.run(ActionName.NODE_RECOVER, first.id, {"delete_timeout": 0.5})
    assert action.status == "FAILED"
    assert action.status_reason == (
        f"Recovery failed: RECREATE could not delete {first.physical_id}: "
        "deletion did not finish within 0.5s"
    )
    failed = harness.node(first.id)
    assert failed is not None and failed.status == "ERROR"
    assert failed.physical_id == first.physical_id  # nothing replaced it

    action = harness.run(
        ActionName.NODE_RECOVER, second.id, {"delete_timeout": 0.5, "force_recreate": True}
    )
    assert action.status == "SUCCEEDED", action.status_reason
    forced = harness.node(second.id)
    assert forced is not None and forced.status == "ACTIVE"
    assert forced.physical_id != second.physical_id
    reasons = [e.status_reason for e in harness.events(second.id)]
    assert any("node_force_recreate" in r and "did not finish within 0.5s" in r for r in reasons)


PROCESS = {
    "command": sys.executable,
    "args": ["-m", "herd.drivers.testserver", "--port", "{port}"],
    "health_url": "http://127.0.0.1:{port}/health",
    "stop_timeout": 5,
}


def _pid(physical_id: str | None) -> int:
    assert physical_id is not None
    return int(physical_id.split(":")[0])


def _running(pid: int) -> bool:
    info = read_proc(pid)
    return info is not None and not info.zombie


def test_process_reboot_recreate_and_rebuild_refused(harness: Harness) -> None:
    profile = harness.profile(PROCESS, type_="herd.process")
    cluster = harness.cluster(3, profile=profile)
    first, second, third = harness.nodes(cluster)
    try:
        rebooted = harness.run(ActionName.NODE_RECOVER, first.id, {"operation": "REBOOT"})
        assert rebooted.status == "SUCCEEDED", rebooted.status_reason
        node = harness.node(first.id)
        assert node is not None and node.data["port"] == first.data["port"]  # same address
        assert _running(_pid(node.physical_id)) and not _running(_pid(first.physical_id))

        recreated = harness.run(ActionName.NODE_RECOVER, second.id, {"operation": "RECREATE"})
        assert recreated.status == "SUCCEEDED", recreated.status_reason
        node = harness.node(second.id)
        assert node is not None and (node.name, node.index) == (second.name, second.index)
        assert _running(_pid(node.physical_id)) and not _running(_pid(second.physical_id))

        refused = harness.run(ActionName.CLUSTER_RECOVER, cluster, {"operation": "REBUILD"})
        # Nothing was broken: nothing to recover, so nothing is refused either.
        assert refused.status == "SUCCEEDED" and refused.outputs["nodes_recovered"] == []
        os.kill(_pid(third.physical_id), 9)
        refused = harness.run(
            ActionName.CLUSTER_RECOVER, cluster, {"check": True, "operation": "REBUILD"}
        )
        assert refused.status == "FAILED"
        reason = (
            "Recovery failed: recovery action REBUILD is not supported by profile type "
            "herd.process (use RECREATE)"
        )
        assert refused.status_reason == f"Failed in recovering nodes: {third.id[:8]}: {reason}"
        node = harness.node(third.id)
        assert node is not None and node.status == "ERROR" and node.status_reason == reason
    finally:
        harness.run(ActionName.CLUSTER_DELETE, cluster)
