"""kill -9 of ``herd serve`` in the middle of a scale-out: nothing is lost, nothing is orphaned."""

from __future__ import annotations

import time

import pytest
from tests.e2e.sdk import connect, node_processes, process_profile_spec, wait_action
from tests.e2e.server import HerdServer

pytestmark = pytest.mark.e2e


def _wait_some_nodes(c: object, cluster_id: str, at_least: int, timeout: float = 30) -> None:
    end = time.time() + timeout
    while time.time() < end:
        active = [n for n in c.nodes(cluster_id=cluster_id) if n.status == "ACTIVE"]  # type: ignore[attr-defined]
        if len(active) >= at_least:
            return
        time.sleep(0.05)
    raise AssertionError("scale-out did not start")


def test_kill9_during_scale_out_resumes_without_orphans(herd_server: HerdServer) -> None:
    c = connect(herd_server.url)
    spec = process_profile_spec()
    # Nodes become healthy at spread-out times (0.3 s to 4 s, a fixed spread by index, so
    # every run is the same plan), and the kill lands in the middle of the plan.
    spec["properties"]["args"] = [
        "-c",
        "import runpy, sys, time; time.sleep(0.3 + ({index} * 37 % 20) * 0.185); "
        "sys.argv = ['testserver', '--port', '{port}']; "
        "runpy.run_module('herd.drivers.testserver', run_name='__main__')",
    ]
    profile = c.create_profile(name="slow", spec=spec)
    cluster = c.create_cluster(name="big", profile_id=profile.id, desired_capacity=1)
    create = next(a for a in c.actions() if a.action == "CLUSTER_CREATE")
    assert wait_action(c, create.id).status == "SUCCEEDED"

    answer = c.scale_out_cluster(cluster, 20)
    _wait_some_nodes(c, cluster.id, 4)
    herd_server.kill9()

    herd_server.start()
    c = connect(herd_server.url)
    action = wait_action(c, answer, timeout=120)
    assert action.status in ("SUCCEEDED", "FAILED")
    assert action.status_reason
    # Asked once: the resumed run must not count the nodes the first run planned again.
    assert c.get_cluster(cluster.id).desired_capacity == 21
    if action.status == "SUCCEEDED":
        assert len(list(c.nodes(cluster_id=cluster.id))) == 21

    rows = {n.id: n for n in c.nodes()}
    running = node_processes(herd_server.data_dir)
    # Every process has its row and every row that claims a process has it running.
    assert set(running) <= set(rows), f"orphan processes: {set(running) - set(rows)}"
    for node in rows.values():
        if node.status == "ACTIVE":
            assert node.id in running, f"node {node.name} has no process"
            assert int(node.physical_id.split(":")[0]) == running[node.id]
        else:
            assert node.id not in running
    assert all(a.status in ("SUCCEEDED", "FAILED", "CANCELLED") for a in c.actions())
    assert any(e.status == "RESUMED" for e in c.events(cluster_id=cluster.id))

    c.delete_cluster(cluster)
    c.wait_for_delete(cluster, wait=60)
    assert node_processes(herd_server.data_dir) == {}
