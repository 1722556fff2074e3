"""An action a receiver queued on a busy cluster waits for the lock instead of failing."""

from __future__ import annotations

import time

from tests.functional.engine.harness import PROJECT, Harness

from herd.store import actions as action_store
from herd.types import WAIT_FOR_LOCK, ActionName


def _queued(harness: Harness, cluster: str, data: dict[str, object]) -> str:
    with harness.db.write() as session:
        row = action_store.new_action(
            action=ActionName.CLUSTER_SCALE_OUT,
            target=cluster,
            cluster_id=cluster,
            project=PROJECT,
            inputs={"count": 1},
            now=time.time(),
        )
        row.data = data
        session.add(row)
    harness.engine.notify()
    return row.id


def test_a_queued_action_waits_its_turn(harness: Harness) -> None:
    slow = harness.profile({"create_latency": 2.0})
    cluster = harness.cluster(0, profile=slow)
    holder = harness.submit(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": 1})
    deadline = time.time() + 10
    while time.time() < deadline and not harness.children(holder):
        time.sleep(0.02)  # the holder runs (its children exist): the lock is taken
    refused = _queued(harness, cluster, {})
    queued = _queued(harness, cluster, {WAIT_FOR_LOCK: True})

    # lock_retry_interval 0.1 s x lock_retry_times 3: an ordinary action gives up at once.
    assert harness.wait(refused).status_reason == "Failed in locking cluster"
    assert harness.wait(holder).status == "SUCCEEDED"
    done = harness.wait(queued)
    assert done.status == "SUCCEEDED", done.status_reason
    assert len(harness.nodes(cluster)) == 2
