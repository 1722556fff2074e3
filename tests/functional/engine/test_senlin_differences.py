"""Behaviour that used to differ from Senlin without saying so (issue 25), now Senlin's."""

from __future__ import annotations

import time
import uuid

from sqlalchemy import select
from tests.functional.engine.harness import PROJECT, Harness

from herd.store.models import ActionRow, NodeRow
from herd.types import ActionName


def _orphan(harness: Harness, profile_id: str, physical_id: str = "") -> str:
    row = NodeRow(
        id=str(uuid.uuid4()),
        name="spare",
        profile_id=profile_id,
        cluster_id=None,
        physical_id=physical_id or None,
        index=-1,
        role="",
        status="ACTIVE",
        status_reason="",
        init_at=time.time(),
        created_at=time.time(),
        project=PROJECT,
        meta_data={},
        data={},
        dependents={},
    )
    with harness.db.write() as session:
        session.add(row)
    return row.id


def test_replace_nodes_leaves_the_original_as_an_orphan(harness: Harness) -> None:
    profile = harness.profile()
    cluster = harness.cluster(2, profile=profile)
    members = harness.nodes(cluster)
    spare = _orphan(harness, profile, "sim-spare")

    action = harness.run(
        ActionName.CLUSTER_REPLACE_NODES, cluster, {"candidates": {members[0].id: spare}}
    )

    assert action.status == "SUCCEEDED", action.status_reason
    original = harness.node(members[0].id)
    assert original is not None  # not destroyed
    assert (original.cluster_id, original.index, original.status) == (None, -1, "ACTIVE")
    assert original.physical_id == members[0].physical_id
    replacement = harness.node(spare)
    assert replacement is not None
    assert (replacement.cluster_id, replacement.index) == (cluster, 3)  # the next index
    assert [n.id for n in harness.nodes(cluster)] == [members[1].id, spare]
    verbs = {e.action for e in harness.events(members[0].id)} | {
        e.action for e in harness.events(spare)
    }
    assert {"NODE_LEAVE", "NODE_JOIN"} <= verbs


def test_zone_and_region_placement_both_apply(harness: Harness) -> None:
    cluster = harness.cluster(0)
    harness.attach(
        cluster,
        {
            "type": "senlin.policy.zone_placement",
            "version": "1.0",
            "properties": {"zones": [{"name": "az1"}, {"name": "az2"}]},
        },
        name="zones",
    )
    harness.attach(
        cluster,
        {
            "type": "senlin.policy.region_placement",
            "version": "1.0",
            "properties": {"regions": [{"name": "r1"}, {"name": "r2"}]},
        },
        name="regions",
    )
    action = harness.run(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": 4})
    assert action.status == "SUCCEEDED", action.status_reason
    placed = [(n.data or {}).get("placement") or {} for n in harness.nodes(cluster)]
    assert sorted(str(p.get("zone")) for p in placed) == ["az1", "az1", "az2", "az2"]
    assert sorted(str(p.get("region_name")) for p in placed) == ["r1", "r1", "r2", "r2"]


def test_finished_actions_keep_no_owner(harness: Harness) -> None:
    cluster = harness.cluster(2)
    harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1})
    with harness.db.read() as session:
        rows = session.scalars(select(ActionRow)).all()
        finished = [(r.action, r.status, r.owner) for r in rows]
    assert len(finished) >= 4  # parents and their node children
    assert all(status in ("SUCCEEDED", "FAILED") for _, status, _ in finished)
    assert [f for f in finished if f[2] is not None] == []
