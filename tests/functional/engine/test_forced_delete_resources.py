"""A forced delete that lands while a scale-out is still making resources leaves no orphan.

The forced CLUSTER_DELETE takes the scale-out's locks and deletes its CREATING node rows while
the scale-out's driver calls are still running; the resources those calls make afterwards
belong to no row and must be destroyed at once (docs/deletion.md), not at the next engine
start's orphan sweep. Nothing is restarted here: the engine that made them destroys them.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest
from sqlalchemy import select
from tests.functional.engine.harness import PROJECT, Harness
from tests.loopback import serving
from tests.waiting import wait_for

from herd.engine.execution import ActionExecution
from herd.engine.node_results import ChildResults, FinishedCall, NodeResultWriter
from herd.engine.unclaimed import REASON, MadeFor
from herd.store import actions as action_store
from herd.store.models import EventRow, NodeRow
from herd.types import ActionName

#: node processes a test leaves behind are killed after it (tests/functional/engine/conftest.py)
pytestmark = pytest.mark.usefixtures("no_process_left")


def _node_ids(harness: Harness) -> set[str]:
    with harness.db.read() as session:
        return set(session.scalars(select(NodeRow.id)).all())


def _unclaimed_events(harness: Harness) -> list[EventRow]:
    with harness.db.read() as session:
        query = select(EventRow).where(EventRow.status_reason.startswith(REASON))
        return list(session.scalars(query).all())


def _orphans(harness: Harness, profile_type: str) -> set[str]:
    """Node ids the driver holds a resource for that have no node row."""
    held = harness.engine.ctx.drivers.get(profile_type).discover()
    return set(held) - _node_ids(harness)


def _delete_during_scale_out(harness: Harness, profile: str, count: int) -> tuple[str, str, str]:
    """Start a scale-out, force-delete its cluster once its rows are CREATING; the ids of
    the cluster, the scale-out and the forced delete."""
    cluster = harness.cluster(0, profile=profile)
    scale = harness.submit(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": count})
    wait_for(lambda: any(n.status == "CREATING" for n in harness.nodes(cluster)))
    forced = harness.run(ActionName.CLUSTER_DELETE, cluster, {"force": True})
    assert forced.status == "SUCCEEDED", forced.status_reason
    assert harness.get_cluster(cluster) is None
    return cluster, scale, forced.id


def _assert_robbed(harness: Harness, scale: str, forced: str, timeout: float = 30.0) -> None:
    """The robbed scale-out ends CANCELLED, saying why, whichever driver made its nodes.

    With the process driver every create returned (the gate opened) before the scale-out's
    next cancel check, and it ended SUCCEEDED with ``control=FORCED_OUT`` on its row (the
    sim one ended CANCELLED or FAILED, by timing): the mark the forced delete wrote decides.
    """
    ended = harness.wait(scale, timeout)
    assert (ended.status, ended.status_reason) == (
        "CANCELLED",
        f"Cancelled: its cluster was deleted by force (action {forced[:8]}).",
    )


def test_sim_resources_made_for_deleted_rows_are_destroyed(harness: Harness) -> None:
    profile = harness.profile({"create_latency": 1.5})
    cluster, scale, forced = _delete_during_scale_out(harness, profile, 4)
    _assert_robbed(harness, scale, forced)
    # The creates were still running when the rows went: their results found no row.
    events = wait_for(lambda: _unclaimed_events(harness))
    assert {e.level for e in events} == {"WARNING"}
    assert {e.cluster_id for e in events} == {cluster}
    wait_for(lambda: not _orphans(harness, "herd.sim-1.0"))
    assert harness.engine.ctx.drivers.get("herd.sim-1.0").discover() == {}


class _Gate(BaseHTTPRequestHandler):
    """A health URL that answers 503 until the test opens the gate: a create that waits."""

    opened = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200 if self.opened.is_set() else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def gate() -> Iterator[tuple[str, threading.Event]]:
    """A loopback HTTP server on a free port; the URL and the event that opens it."""
    opened = threading.Event()
    handler = type("Gate", (_Gate,), {"opened": opened})
    with serving(handler) as url:
        try:
            yield f"{url}/health", opened
        finally:
            opened.set()  # a create still waiting returns before the server stops


def test_a_process_started_for_a_deleted_row_is_stopped(
    harness: Harness, gate: tuple[str, threading.Event]
) -> None:
    url, opened = gate
    profile = harness.profile(
        {
            "command": sys.executable,
            "args": ["-c", "import time; time.sleep(600)"],
            "health_url": url,
            "start_timeout": 60,
            "stop_timeout": 5,
        },
        type_="herd.process",
    )
    _cluster, scale, forced = _delete_during_scale_out(harness, profile, 2)
    # The processes run, waiting to be healthy, while their rows are already gone.
    wait_for(lambda: len(_orphans(harness, "herd.process-1.0")) == 2)
    opened.set()
    _assert_robbed(harness, scale, forced, timeout=60)
    wait_for(lambda: len(_unclaimed_events(harness)) == 2)
    wait_for(lambda: not harness.engine.ctx.drivers.get("herd.process-1.0").discover())


def _delete_result(harness: Harness, node: NodeRow, seen: str | None) -> None:
    """Write a NODE_DELETE child's result whose driver call read ``seen`` as the physical id."""
    ctx = harness.engine.ctx
    parent = action_store.new_action(
        action=ActionName.CLUSTER_DELETE,
        target=str(node.cluster_id),
        cluster_id=node.cluster_id,
        project=PROJECT,
        now=time.time(),
    )
    properties = ctx.drivers.get("herd.sim-1.0").validate_properties({})
    made = MadeFor("herd.sim-1.0", properties, node.name, node.cluster_id)
    child = str(uuid.uuid4())  # no child row: the writer ends none (as an action's own call)
    item = FinishedCall(child, node.id, None, made_for=made, deleted=seen)
    verbs = {child: ActionName.NODE_DELETE}
    NodeResultWriter(ctx).flush(ActionExecution(ctx, parent), [item], ChildResults(), verbs)


def test_a_resource_recorded_after_the_delete_read_its_row_is_destroyed(harness: Harness) -> None:
    # The forced delete's child read the CREATING row (no physical id, nothing to destroy);
    # the robbed scale-out's writer then recorded the server on the row; the delete's writer
    # removes the row and must destroy that server, which its driver call never saw.
    sim = harness.engine.ctx.drivers.get("herd.sim-1.0")
    cluster = harness.cluster(2)
    late, seen = harness.nodes(cluster)
    _delete_result(harness, late, None)
    assert harness.node(late.id) is None
    wait_for(lambda: late.id not in sim.discover())
    assert [e.status_reason for e in harness.events(late.id)][-1].startswith(REASON)
    # A delete that saw the row's physical id destroyed it itself: nothing more is done.
    _delete_result(harness, seen, seen.physical_id)
    assert harness.node(seen.id) is None
    assert seen.id in sim.discover()  # this test made no driver call for it
    assert not any(e.status_reason.startswith(REASON) for e in harness.events(seen.id))


def test_a_server_recreated_for_a_node_deleted_meanwhile_is_destroyed(harness: Harness) -> None:
    # NODE_RECOVER through the API makes its own driver calls (no child action); a forced
    # NODE_DELETE takes the node while the recreate builds the new server.
    cluster = harness.cluster(1, profile=harness.profile({"create_latency": 1.5}))
    node = harness.nodes(cluster)[0].id
    recover = harness.submit(ActionName.NODE_RECOVER, node, {"operation": "RECREATE"})
    wait_for(lambda: (row := harness.node(node)) is not None and row.status == "RECOVERING")
    forced = harness.run(ActionName.NODE_DELETE, node, {"force": True})
    assert forced.status == "SUCCEEDED", forced.status_reason
    ended = harness.wait(recover)
    # robbed of its node lock: CANCELLED, saying why (its handler saw the node disappear)
    assert (ended.status, ended.status_reason) == (
        "CANCELLED",
        f"Cancelled: its node was deleted by force (action {forced.id[:8]}).",
    )
    assert any(e.status_reason.startswith(REASON) for e in harness.events(node))
    wait_for(lambda: not harness.engine.ctx.drivers.get("herd.sim-1.0").discover())
