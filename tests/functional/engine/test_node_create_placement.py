"""A node created straight into a cluster is placed by the cluster's placement policies."""

from __future__ import annotations

import time

from tests.functional.engine.harness import PROJECT, Harness

from herd.store import clusters
from herd.store import nodes as node_store
from herd.types import ActionName

ZONES = {
    "type": "senlin.policy.zone_placement",
    "version": "1.0",
    "properties": {"zones": [{"name": "az1"}, {"name": "az2"}]},
}


def test_node_create_gets_the_zone_the_policy_chose(harness: Harness) -> None:
    cluster_id = harness.cluster(0)
    harness.attach(cluster_id, ZONES, name="zones")
    with harness.db.write() as session:
        cluster = clusters.get(session, cluster_id)
        assert cluster is not None
        node = node_store.add_new(
            session,
            name="straight-in",
            profile_id=cluster.profile_id,
            cluster_id=cluster_id,
            index=clusters.take_index(session, cluster_id),
            user="u",
            project=PROJECT,
            now=time.time(),
        )
        node_id = node.id
    action = harness.run(ActionName.NODE_CREATE, node_id)
    assert action.status == "SUCCEEDED", action.status_reason
    assert action.data["creation"]["zones"] == {"az1": 1}
    row = harness.node(node_id)
    assert row is not None and row.status == "ACTIVE"
    assert row.data["placement"]["zone"] == "az1"
