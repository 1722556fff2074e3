"""A run hands the node pool at most ``IN_FLIGHT`` driver calls that are not yet written.

Issue 28: quick sim calls finish far faster than their results are written, so a
100,000-node create used to leave every finished call waiting in memory (the
server's peak RSS). The window is counted from the run's own calls to the pool
and to the result writer, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from tests.functional.engine.harness import Harness

from herd.engine import nodeops
from herd.engine.node_results import NodeResultWriter
from herd.engine.nodeops import NodeOperations
from herd.types import ActionName, NodeStatus

WINDOW = 150
SIZE = 900


def test_calls_started_and_not_written_stay_within_the_window(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = harness.cluster(0)
    monkeypatch.setattr(nodeops, "IN_FLIGHT", WINDOW)
    started = written = 0
    outstanding: list[int] = []
    submit, flush = NodeOperations._submit, NodeResultWriter.flush

    def counting_submit(self: NodeOperations, calls: Sequence[Any]) -> Any:
        nonlocal started
        started += len(calls)
        outstanding.append(started - written)
        return submit(self, calls)

    def counting_flush(self: NodeResultWriter, ex: Any, done: list[Any], *args: Any) -> None:
        nonlocal written
        flush(self, ex, done, *args)
        written += len(done)

    monkeypatch.setattr(NodeOperations, "_submit", counting_submit)
    monkeypatch.setattr(NodeResultWriter, "flush", counting_flush)

    action = harness.run(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": SIZE}, timeout=120)

    assert action.status == "SUCCEEDED", action.status_reason
    nodes = harness.nodes(cluster)
    assert len(nodes) == SIZE
    assert {n.status for n in nodes} == {NodeStatus.ACTIVE}
    assert started == written == SIZE
    # A batch is started while fewer than WINDOW calls are out, so one batch may pass it.
    assert max(outstanding) <= WINDOW - 1 + nodeops.QUICK_BATCH
    assert len(outstanding) == SIZE // nodeops.QUICK_BATCH  # quick sim calls, 100 a task


def test_children_never_started_end_cancelled(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slow calls (one a pool task) wait in the backlog; a cancel never starts them."""
    count = 400
    cluster = harness.cluster(0, profile=harness.profile({"create_latency": 0.3}))
    monkeypatch.setattr(nodeops, "IN_FLIGHT", 40)
    started = 0
    submit = NodeOperations._submit

    def counting_submit(self: NodeOperations, calls: Sequence[Any]) -> Any:
        nonlocal started
        started += len(calls)
        return submit(self, calls)

    monkeypatch.setattr(NodeOperations, "_submit", counting_submit)
    action_id = harness.submit(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": count})
    action = harness.cancel_when(
        action_id, lambda: any(n.status == "ACTIVE" for n in harness.nodes(cluster))
    )

    assert action.status == "CANCELLED"
    children = harness.children(action_id)
    assert len(children) == count
    assert {c.status for c in children} <= {"SUCCEEDED", "CANCELLED"}
    succeeded = sum(c.status == "SUCCEEDED" for c in children)
    assert succeeded <= started < count  # the backlog's children were never started
