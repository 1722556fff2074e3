"""The bulk paths leave the same rows as the row-by-row ORM code they replaced.

The same actions run twice on one database (SQLite and PostgreSQL), once with
the per-node oracle (``per_node.py``: the previous code, one ORM row, event and
driver call at a time) patched in and once with the engine as it is; nodes,
child actions, dependencies, events, locks and the cluster's sizes must match
once ids and times are taken out.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import or_, select
from tests.functional.engine import per_node
from tests.functional.engine.harness import Harness

from herd.engine import nodeops
from herd.engine.node_results import NodeResultWriter
from herd.engine.nodeops import NodeOperations
from herd.store.models import ActionRow, ClusterRow, DependencyRow, EventRow, NodeLockRow, NodeRow
from herd.types import ActionName, ActionStatus


def _scenario(harness: Harness) -> tuple[str, str, list[ActionStatus]]:
    """Grow, shrink (destroy and release), resize and fail; return the clusters and outcomes."""
    cluster = harness.cluster(0, name="c")
    outcomes = [harness.run(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": 6}).status]
    by_index = {n.index: n.id for n in harness.nodes(cluster)}
    harness.set_node(by_index[2], status="ERROR")
    harness.set_node(by_index[5], health="CHECK_FAILED")
    outcomes.append(harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 2}).status)
    leave = {"candidates": [by_index[1]], "destroy_after_deletion": False}
    outcomes.append(harness.run(ActionName.CLUSTER_DEL_NODES, cluster, leave).status)
    exact = {"adjustment_type": "EXACT_CAPACITY", "number": 5}
    outcomes.append(harness.run(ActionName.CLUSTER_RESIZE, cluster, exact).status)
    destroy = {"candidates": [by_index[3]], "destroy_after_deletion": True}
    outcomes.append(harness.run(ActionName.CLUSTER_DEL_NODES, cluster, destroy).status)
    failing = harness.cluster(0, name="f", profile=harness.profile({"failure_rate": 1.0}))
    outcomes.append(harness.run(ActionName.CLUSTER_SCALE_OUT, failing, {"count": 3}).status)
    return cluster, failing, outcomes


def _rows(harness: Harness, cluster_id: str) -> dict[str, Any]:
    """Everything the cluster's actions wrote, without ids and times."""
    with harness.db.read() as session:
        cluster = session.get(ClusterRow, cluster_id)
        assert cluster is not None
        parents = session.scalars(
            select(ActionRow).where(ActionRow.target == cluster_id).order_by(ActionRow.created_at)
        ).all()
        parent_verb = {p.id: p.action for p in parents}
        children = session.scalars(
            select(ActionRow).where(ActionRow.parent_id.in_(list(parent_verb)))
        ).all()
        node_ids = {c.target for c in children}
        nodes = session.scalars(select(NodeRow).where(NodeRow.id.in_(node_ids))).all()
        index = {n.id: n.index for n in nodes}
        # A node that left keeps index -1: name it by its name instead.
        label = {n.id: (n.name if n.index < 0 else f"#{n.index}") for n in nodes}

        def name_of(node_id: str) -> str:
            return label.get(node_id, "gone")

        def scrub(text: str) -> str:
            """Reasons name nodes by id, listed in id order: name them by label, sorted."""
            for node_id in node_ids:
                text = text.replace(node_id, name_of(node_id))
                text = text.replace(node_id[:8], name_of(node_id))
            head, colon, rest = text.partition("nodes: ")
            if not colon:
                head, rest = "", text
            return head + colon + "; ".join(sorted(rest.split("; ")))

        dependencies = session.execute(
            select(DependencyRow.depended, DependencyRow.dependent).where(
                DependencyRow.dependent.in_(list(parent_verb))
            )
        ).all()
        child_of = {c.id: c for c in children}
        events = session.scalars(
            select(EventRow).where(
                or_(EventRow.cluster_id == cluster_id, EventRow.oid.in_(node_ids | {cluster_id}))
            )
        ).all()
        locks = session.scalars(select(NodeLockRow).where(NodeLockRow.node_id.in_(node_ids))).all()
        return {
            "cluster": (
                cluster.desired_capacity,
                cluster.min_size,
                cluster.max_size,
                cluster.status,
                cluster.status_reason,
                cluster.next_index,
            ),
            "parents": [(p.action, p.status, scrub(p.status_reason)) for p in parents],
            "nodes": sorted(
                (
                    n.name,
                    n.index,
                    n.cluster_id == cluster_id,
                    n.status,
                    scrub(n.status_reason),
                    n.health,
                    n.role,
                    n.physical_id is not None,
                    sorted(n.data),
                    (n.data or {}).get("placement"),
                    n.meta_data,
                    n.tainted,
                    n.created_at is not None,
                    (n.user, n.project, n.domain, n.dependents),
                )
                for n in nodes
            ),
            "children": sorted(
                (
                    parent_verb[c.parent_id or ""],
                    c.name.replace(c.target[:8], name_of(c.target)),
                    c.action,
                    c.cause,
                    c.status,
                    scrub(c.status_reason),
                    c.owner is not None,
                    c.cluster_id == cluster_id,
                    c.inputs,
                    c.outputs,
                    c.data,
                    c.timeout,
                    c.interval,
                    c.end_time is not None,
                    (c.user, c.project, c.domain),
                )
                for c in children
            ),
            "dependencies": sorted(
                (parent_verb[dependent], name_of(child_of[depended].target))
                for depended, dependent in dependencies
            ),
            "events": sorted(
                (
                    e.otype,
                    e.oname if e.otype == "NODE" else "cluster",
                    e.cluster_id is not None,
                    e.action,
                    e.status,
                    scrub(e.status_reason),
                    e.level,
                    e.user,
                    e.project,
                    e.meta_data,
                )
                for e in events
                if e.otype == "NODE" or e.oid == cluster_id
            ),
            "locks": len(locks),
            "indexes": sorted(i for i in index.values() if i >= 0),
        }


@pytest.fixture
def per_node_engine(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Patch the previous row-by-row code into the engine (undone by the test)."""
    monkeypatch.setattr(NodeOperations, "plan_create", per_node.PerNodeOperations.plan_create)
    monkeypatch.setattr(NodeOperations, "plan_removal", per_node.PerNodeOperations.plan_removal)
    monkeypatch.setattr(
        NodeResultWriter, "_flush_simple", per_node.PerNodeResultWriter._flush_simple
    )
    monkeypatch.setattr(
        NodeResultWriter,
        "_apply_success",
        per_node.PerNodeResultWriter._apply_success,
        raising=False,
    )
    monkeypatch.setattr(nodeops, "call_many", per_node.per_node_calls)
    return monkeypatch


def test_bulk_paths_write_the_rows_the_per_node_path_wrote(
    harness: Harness, per_node_engine: pytest.MonkeyPatch
) -> None:
    old_cluster, old_failing, old_outcomes = _scenario(harness)
    per_node_engine.undo()
    new_cluster, new_failing, new_outcomes = _scenario(harness)
    assert (
        old_outcomes
        == new_outcomes
        == [
            "SUCCEEDED",
            "SUCCEEDED",
            "SUCCEEDED",
            "SUCCEEDED",
            "SUCCEEDED",
            "FAILED",
        ]
    )
    old, new = _rows(harness, old_cluster), _rows(harness, new_cluster)
    assert len(old["nodes"]) == 5 and len(old["children"]) == 12 and old["events"]
    for key in old:
        assert new[key] == old[key], key
    old, new = _rows(harness, old_failing), _rows(harness, new_failing)
    for key in old:
        assert new[key] == old[key], key
