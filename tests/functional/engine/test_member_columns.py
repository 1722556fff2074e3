"""The column-wise member read gives the same members as snapshots built from ORM rows."""

from __future__ import annotations

from sqlalchemy import select
from tests.functional.engine.harness import Harness

from herd.policies.columns import NodeColumns
from herd.policies.members import MemberTable, member_labels
from herd.policies.ranking import rank_victims, rank_victims_by_group
from herd.store.models import ClusterRow, NodeRow, ProfileRow
from herd.store.snapshots import load_cluster_snapshot, node_snapshot
from herd.types import ClusterStatus, Criteria


def test_member_table_matches_row_snapshots(harness: Harness) -> None:
    cluster = harness.cluster(6)
    nodes = harness.nodes(cluster)
    harness.set_node(nodes[0].id, status="ERROR")
    harness.set_node(nodes[1].id, meta_data={"protected": "true", "deletion_cost": "3"})
    harness.set_node(nodes[2].id, meta_data={"deletion_cost": 2.5}, tainted=True)
    harness.set_node(nodes[3].id, data={"placement": {"zone": "AZ1", "region_name": "R1"}})
    harness.set_node(nodes[4].id, created_at=None, health="CHECK_FAILED")
    with harness.db.read() as session:
        rows = session.scalars(
            select(NodeRow).where(NodeRow.cluster_id == cluster).order_by(NodeRow.index)
        ).all()
        profile = session.get(ProfileRow, rows[0].profile_id)
        assert profile is not None
        expected = [node_snapshot(row, profile.created_at) for row in rows]
        snapshot = load_cluster_snapshot(session, cluster)
    assert snapshot is not None
    assert list(snapshot.nodes) == expected
    assert snapshot.nodes == expected
    assert snapshot.nodes[-1] == expected[-1] and snapshot.nodes[1:3] == expected[1:3]
    assert snapshot.node(expected[3].id) == expected[3]
    for criteria in Criteria:
        assert rank_victims(snapshot.nodes, 4, criteria, 7) == rank_victims(
            expected, 4, criteria, 7
        )
        zones = {"AZ1": 1, "": 2}
        assert rank_victims_by_group(
            snapshot.nodes, zones, "zone", criteria, 7
        ) == rank_victims_by_group(expected, zones, "zone", criteria, 7)
    for key in ("zone", "region"):
        assert member_labels(snapshot.nodes, key) == member_labels(expected, key)
    assert member_labels(expected, "zone") == [None, None, None, "AZ1", None, None]
    assert isinstance(snapshot.nodes, MemberTable)
    assert NodeColumns.from_nodes(expected).ids == snapshot.nodes.columns.ids


def test_member_table_of_an_empty_cluster(harness: Harness) -> None:
    cluster = harness.cluster(0)
    with harness.db.read() as session:
        snapshot = load_cluster_snapshot(session, cluster)
    assert snapshot is not None and len(snapshot.nodes) == 0 and list(snapshot.nodes) == []


def test_cluster_snapshot_read_from_the_driver_equals_the_orm_read(harness: Harness) -> None:
    cluster = harness.cluster(3)
    config = {"node.name.format": "n-$3I", "nested": {"a": [1, 2]}}
    with harness.db.write() as session:
        row = session.get(ClusterRow, cluster)
        assert row is not None
        row.config, row.desired_capacity, row.status = config, 3, ClusterStatus.WARNING
    with harness.db.read() as session:
        fast = load_cluster_snapshot(session, cluster)  # a fresh session: the driver's row
        assert fast is not None and not session.identity_map  # no ORM row was built
        assert load_cluster_snapshot(session, "no-such-cluster") is None
    with harness.db.read() as session:
        row = session.get(ClusterRow, cluster)  # the session holds the row: the ORM path
        orm = load_cluster_snapshot(session, cluster)
    assert orm is not None and fast == orm
    assert fast.config == config and fast.status is ClusterStatus.WARNING
    assert (fast.name, fast.desired_capacity, len(fast.nodes)) == ("c", 3, 3)
    with harness.db.write() as session:
        row = session.get(ClusterRow, cluster)
        assert row is not None
        row.desired_capacity = 1  # not flushed: the transaction's own view is snapshotted
        mine = load_cluster_snapshot(session, cluster)
        session.rollback()
    assert mine is not None and mine.desired_capacity == 1
