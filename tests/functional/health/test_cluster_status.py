"""The cluster's status follows its members' health marks (issue 24).

A member the health manager marks failed makes its cluster WARNING at once (ERROR
when no member works any more), with a reason naming the member's status, and a member
that passes again makes it ACTIVE: before, a cluster whose only member crash-looped
(ERROR, waiting out its back-off) said ACTIVE "number of active nodes is equal or above
desired_capacity (1)".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.functional.engine.harness import Harness, running_engine
from tests.functional.health.helpers import NodeHealthServer, health_spec, recover_actions, sim
from tests.waiting import wait_for

from herd.store.models import EventRow, HealthLeaseRow


@pytest.fixture
def web() -> Iterator[NodeHealthServer]:
    server = NodeHealthServer()
    yield server
    server.close()


@pytest.fixture
def slow_backoff(tmp_path: Path, db_url: str) -> Iterator[Harness]:
    """A health manager whose second recovery in a row waits 60 s: the back-off of a
    crash loop lasts longer than the test."""
    with running_engine(
        tmp_path / "data",
        db_url=db_url,
        health_tick=0.05,
        health_backoff_base=60.0,
        health_backoff_max=120.0,
        health_backoff_reset=600.0,
    ) as h:
        yield h


def _leased(h: Harness, cluster: str) -> bool:
    with h.db.read() as session:
        return session.get(HealthLeaseRow, cluster) is not None


def _status(h: Harness, cluster: str) -> tuple[str, str]:
    row = h.get_cluster(cluster)
    assert row is not None
    return str(row.status), row.status_reason or ""


def _cluster_events(h: Harness, cluster: str) -> list[EventRow]:
    return [e for e in h.events(cluster) if e.otype == "CLUSTER"]


def test_an_only_member_in_back_off_makes_the_cluster_error(slow_backoff: Harness) -> None:
    h = slow_backoff
    cluster = h.cluster(1)
    h.attach(cluster, health_spec([{"type": "LIFECYCLE_EVENTS"}], interval=3600))
    wait_for(lambda: _leased(h, cluster))
    (node,) = h.nodes(cluster)
    time.sleep(1.5)  # the member watched (as test_manager does)
    assert node.physical_id is not None and sim(h).kill_node(node.physical_id, "crashed")
    # the first recovery is at once and ends with every member ACTIVE
    (first,) = wait_for(lambda: recover_actions(h, cluster))
    assert h.wait(first.id).status == "SUCCEEDED"
    assert _status(h, cluster)[0] == "ACTIVE"
    again = h.node(node.id)
    assert again is not None and again.physical_id and again.status == "ACTIVE"
    assert sim(h).kill_node(again.physical_id, "crashed again")
    # the second one waits out the back-off: the member stays ERROR and nothing of the
    # cluster works, so the cluster is ERROR (issue 24; it said WARNING, ACTIVE before)
    wait_for(lambda: any(e.action == "HEALTH_BACKOFF" for e in h.events(node.id)))
    assert _status(h, cluster) == (
        "ERROR",
        "HEALTH_CHECK: no node is ACTIVE (desired_capacity 1). 1 of 1 node not ACTIVE (1 ERROR).",
    )
    assert len(recover_actions(h, cluster)) == 1
    # one ERROR per crash (the first one's recovery made the cluster ACTIVE in between)
    story = [(e.action, e.status, e.level) for e in _cluster_events(h, cluster)]
    marks = [entry for entry in story if entry[0] == "HEALTH_CHECK"]
    assert marks == [("HEALTH_CHECK", "ERROR", "WARNING")] * 2
    assert story[-1] == ("HEALTH_CHECK", "ERROR", "WARNING")


def test_a_member_that_passes_again_makes_the_cluster_active(
    slow_backoff: Harness, web: NodeHealthServer
) -> None:
    h = slow_backoff
    cluster = h.cluster(2, min_size=1)
    options = {"poll_url": web.url, "poll_url_retry_limit": 1, "poll_url_retry_interval": 0}
    h.attach(cluster, health_spec([{"type": "NODE_STATUS_POLL_URL", "options": options}]))
    wait_for(lambda: _leased(h, cluster))
    victim = h.nodes(cluster)[0]
    web.failing.add(victim.name)  # its replacement has the same name: it fails too
    (first,) = wait_for(lambda: recover_actions(h, cluster), 60)
    h.wait(first.id)
    # its replacement fails too and waits out a back-off (a mark while the recovery ran
    # may be overtaken by the recovery's success: the next check marks it again)
    wait_for(lambda: _status(h, cluster)[0] == "WARNING", 60)
    assert _status(h, cluster) == (
        "WARNING",
        "HEALTH_CHECK: number of active nodes is below desired_capacity (2). "
        "1 of 2 nodes not ACTIVE (1 ERROR).",
    )
    web.failing.clear()  # it passes again before its back-off ends: no recovery needed
    wait_for(lambda: _status(h, cluster)[0] == "ACTIVE", 60)
    assert _status(h, cluster)[1] == (
        "HEALTH_CHECK: number of active nodes is equal or above desired_capacity (2)."
    )
    assert len(recover_actions(h, cluster)) == 1
    story = [(e.action, e.status) for e in _cluster_events(h, cluster)]
    assert story[-2:] == [("HEALTH_CHECK", "WARNING"), ("HEALTH_CHECK", "ACTIVE")]
