"""Health records that tell the truth (issue 26): events stamped when the verdict was known,
and no "unhealthy" last check left standing after a successful recovery."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from tests.functional.engine.harness import Harness
from tests.functional.health.helpers import (
    NodeHealthServer,
    check_row,
    health_spec,
    replaced,
    sim,
)
from tests.waiting import wait_for

from herd.api.views import check_result


@pytest.fixture
def slow_web() -> Iterator[NodeHealthServer]:
    server = NodeHealthServer()
    server.delay = 1.0  # every probe answers a second late
    yield server
    server.close()


def test_a_slow_probe_verdict_is_stamped_when_known(
    harness: Harness, slow_web: NodeHealthServer
) -> None:
    cluster = harness.cluster(1)
    modes = [{"type": "NODE_STATUS_POLL_URL", "options": {"poll_url": slow_web.url}}]
    harness.attach(cluster, health_spec(modes, interval=1))
    (victim,) = harness.nodes(cluster)
    slow_web.failing.add(victim.name)
    wait_for(lambda: replaced(harness, victim.id, victim.physical_id), timeout=60)
    slow_web.failing.clear()
    (failed,) = [e for e in harness.events(victim.id) if e.status == "CHECK_FAILED"]
    # the round started a second before the slow answer; the event says when the answer came
    assert failed.timestamp >= slow_web.failed_at[0]


def test_after_a_successful_recovery_the_failed_check_no_longer_stands(harness: Harness) -> None:
    cluster = harness.cluster(2)
    # lifecycle events only, no polling: nothing checks the node again after its recovery
    harness.attach(cluster, health_spec([{"type": "LIFECYCLE_EVENTS"}], interval=3600))
    victim = harness.nodes(cluster)[0]
    time.sleep(1.5)  # the lease taken and the members watched (as test_manager does)
    assert victim.physical_id is not None and sim(harness).kill_node(victim.physical_id)
    wait_for(lambda: replaced(harness, victim.id, victim.physical_id))
    wait_for(
        lambda: getattr(check_row(harness, victim.id), "last_recovery_result", "") != "RUNNING"
    )
    check = check_row(harness, victim.id)
    assert check is not None and check.last_recovery_result.startswith("SUCCEEDED")
    assert check.healthy is None and check_result(check.healthy) is None
    assert check.reason.startswith("recovered after this check (SUCCEEDED")
