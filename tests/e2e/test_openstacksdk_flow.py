"""The issue's end-to-end flow: openstacksdk drives a real ``herd serve`` of real processes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tests.e2e.sdk import connect, node_processes, process_profile_spec, wait_action
from tests.e2e.server import HerdServer

pytestmark = pytest.mark.e2e


def _members(clustering: Any, cluster_id: str) -> list[Any]:
    return list(clustering.nodes(cluster_id=cluster_id))


@pytest.mark.parametrize(
    "server_fixture",
    ["herd_server", pytest.param("herd_server_pg", marks=pytest.mark.postgres)],
    ids=["sqlite", "postgres"],
)
def test_cluster_lifecycle_with_real_processes(
    server_fixture: str, request: pytest.FixtureRequest
) -> None:
    herd_server: HerdServer = request.getfixturevalue(server_fixture)
    c = connect(herd_server.url)
    profile = c.create_profile(name="web", spec=process_profile_spec())
    assert profile.type == "herd.process-1.0"

    cluster = c.create_cluster(name="web", profile_id=profile.id, desired_capacity=5)
    create = [a for a in c.actions() if a.action == "CLUSTER_CREATE" and a.target_id == cluster.id]
    assert len(create) == 1
    assert wait_action(c, create[0].id).status == "SUCCEEDED"
    cluster = c.get_cluster(cluster.id)
    assert cluster.status == "ACTIVE" and len(cluster.node_ids) == 5

    def check_processes() -> None:
        members = _members(c, cluster.id)
        running = node_processes(herd_server.data_dir)
        assert set(running) == {n.id for n in members}
        for node in members:
            assert node.status == "ACTIVE"
            assert int(node.physical_id.split(":")[0]) == running[node.id]
            port = node.data["port"]
            assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200

    check_processes()
    assert wait_action(c, c.scale_out_cluster(cluster, 3)).status == "SUCCEEDED"
    assert len(_members(c, cluster.id)) == 8
    check_processes()

    assert wait_action(c, c.scale_in_cluster(cluster, 2)).status == "SUCCEEDED"
    assert len(_members(c, cluster.id)) == 6
    check_processes()

    resize = c.resize_cluster(cluster, adjustment_type="CHANGE_IN_PERCENTAGE", number=-34)
    action = wait_action(c, resize)
    assert action.status == "SUCCEEDED", action.status_reason
    assert len(_members(c, cluster.id)) == 4  # 6 * -34% = -2.04, truncated toward zero
    check_processes()

    # openstacksdk sends no microversion (1.0), where del_nodes leaves the node as an
    # orphan (destroy_after_deletion needs 1.4): the node leaves, its process keeps running.
    victim = _members(c, cluster.id)[0]
    action = wait_action(c, c.remove_nodes_from_cluster(cluster, [victim.name]))
    assert action.status == "SUCCEEDED", action.status_reason
    assert victim.id not in {n.id for n in _members(c, cluster.id)}
    orphan = c.get_node(victim.id)
    assert orphan.cluster_id == "" and orphan.status == "ACTIVE"
    assert victim.id in node_processes(herd_server.data_dir)
    cluster = c.get_cluster(cluster.id)
    assert cluster.desired_capacity == 3
    c.delete_node(orphan)
    c.wait_for_delete(orphan, wait=30)
    check_processes()

    names = {a.action for a in c.actions()}
    assert {
        "CLUSTER_CREATE",
        "CLUSTER_SCALE_OUT",
        "CLUSTER_SCALE_IN",
        "CLUSTER_RESIZE",
        "CLUSTER_DEL_NODES",
        "NODE_CREATE",
        "NODE_DELETE",
    } <= names
    event_actions = {e.action for e in c.events(cluster_id=cluster.id)}
    assert {"CLUSTER_CREATE", "CLUSTER_SCALE_IN"} <= event_actions

    c.delete_cluster(cluster)
    c.wait_for_delete(cluster, wait=60)
    assert node_processes(herd_server.data_dir) == {}
    assert list(c.nodes()) == []
