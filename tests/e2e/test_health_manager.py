"""The health manager end to end: a real ``herd serve``, real node processes, real signals.

Timings (detection to recovered) are printed, never asserted: the machine is shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.conftest import _kill_node_processes
from tests.e2e.health_support import (
    HEALTH_ENV,
    V,
    act_when_unlocked,
    attach,
    create_cluster,
    events,
    health,
    health_policy,
    kill9,
    leased,
    members,
    node,
    pid_of,
    replaced,
)
from tests.e2e.sdk import node_processes, process_profile_spec
from tests.e2e.server import HERD, HerdServer
from tests.waiting import wait_for, wait_for_action
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e

TESTSERVER = process_profile_spec()["properties"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HerdServer]:
    herd = HerdServer(tmp_path / "data", free_port())
    herd.env.update(HEALTH_ENV)
    try:
        yield herd.start()
    finally:
        herd.stop()
        _kill_node_processes(tmp_path / "data")


@pytest.fixture
def client(server: HerdServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=V, timeout=30, trust_env=False) as found:
        yield found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_kill_9_is_recovered_under_the_same_name_and_index(
    server: HerdServer, client: httpx.Client
) -> None:
    cluster, nodes = create_cluster(client, "web", TESTSERVER, 5)
    attach(client, cluster, "hp", health_policy([{"type": "LIFECYCLE_EVENTS"}]))
    wait_for(lambda: leased(client, cluster))
    time.sleep(1.5)  # the members are watched within a second of the lease
    victim = nodes[2]
    old_pid = pid_of(victim)

    killed = time.monotonic()
    kill9(old_pid)
    found = wait_for(lambda: replaced(client, victim["id"], victim["physical_id"]), 60)
    took = time.monotonic() - killed
    print(f"\nLIFECYCLE_EVENTS: kill -9 to recovered (ACTIVE, new process) in {took:.2f}s")

    assert (found["name"], found["index"], found["id"]) == (
        victim["name"],
        victim["index"],
        victim["id"],
    )
    running = node_processes(server.data_dir)
    assert set(running) == {n["id"] for n in nodes}  # exactly one process per node
    assert running[victim["id"]] == pid_of(found) != old_pid
    assert not _alive(old_pid)
    recover = next(
        a for a in client.get("/v1/actions").json()["actions"] if a["action"] == "CLUSTER_RECOVER"
    )
    assert wait_for_action(client, recover["id"])["status"] == "SUCCEEDED"
    assert client.get(f"/v1/clusters/{cluster}").json()["cluster"]["status"] == "ACTIVE"

    story = [
        (e["action"], e["status"], e["status_reason"]) for e in events(client, oid=victim["id"])
    ]
    detected = f"LIFECYCLE_EVENTS: process {old_pid} was killed by SIGKILL"
    assert ("HEALTH_CHECK", "CHECK_FAILED", detected) in story
    started = next(s for s in story if s[0] == "HEALTH_RECOVERY")
    assert started[1] == "RECOVERING" and detected in started[2] and "RECREATE" in started[2]
    done = (
        f"Recovery succeeded: RECREATE: {victim['physical_id']} replaced by {found['physical_id']}"
    )
    assert ("NODE_RECOVER", "ACTIVE", done) in story
    # Detection and the start of the recovery are one transaction (one timestamp); the
    # recovery's result comes after both.
    order = [s[0] for s in story]
    first, second = order.index("HEALTH_CHECK"), order.index("HEALTH_RECOVERY")
    assert max(first, second) < order.index("NODE_RECOVER")

    # The node view and `herd cluster health` tell the same story.
    view = node(client, victim["id"])
    assert view is not None and view["last_check_mode"] == "LIFECYCLE_EVENTS"
    assert view["last_checked_at"] is not None
    out = subprocess.run(
        [HERD, "--url", server.url, "--json", "cluster", "health", "web"],
        capture_output=True,
        text=True,
        check=True,
    )
    body = json.loads(out.stdout)["cluster_health"]
    assert body["checking"] == "ACTIVE" and body["lease"]["engine_id"]
    row = next(m for m in body["members"] if m["id"] == victim["id"])
    assert row["recoveries"] == 1 and row["last_recovery_result"].startswith("SUCCEEDED")
    table = subprocess.run(
        [HERD, "--url", server.url, "cluster", "health", "web"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "250"},
    ).stdout
    assert "LIFECYCLE_EVENTS" in table and victim["name"] in table


def test_poll_url_answering_500_is_recreated(server: HerdServer, client: httpx.Client) -> None:
    cluster, nodes = create_cluster(client, "api", TESTSERVER, 5)
    interval, retries, retry_interval = 2, 2, 1
    mode = {
        "type": "NODE_STATUS_POLL_URL",
        "options": {
            "poll_url": "http://127.0.0.1:{port}/health",
            "poll_url_retry_limit": retries,
            "poll_url_retry_interval": retry_interval,
        },
    }
    attach(client, cluster, "hp", health_policy([mode], interval=interval))
    wait_for(
        lambda: all(
            m["last_check_result"] == "healthy" for m in health(client, cluster)["members"]
        ),
    )
    victim = nodes[1]
    port = victim["data"]["port"]
    switched = time.monotonic()
    r = httpx.post(f"http://127.0.0.1:{port}/control/health", json={"status": 500}, trust_env=False)
    assert r.status_code == 200
    found = wait_for(lambda: replaced(client, victim["id"], victim["physical_id"]), 60)
    took = time.monotonic() - switched
    bound = interval + (retries - 1) * retry_interval
    print(f"\nNODE_STATUS_POLL_URL: 500 to recovered in {took:.2f}s (interval + retries: {bound}s)")
    assert (found["name"], found["index"]) == (victim["name"], victim["index"])
    detected = [
        e["status_reason"]
        for e in events(client, oid=victim["id"])
        if e["status"] == "CHECK_FAILED"
    ]
    assert detected == [
        f"NODE_STATUS_POLL_URL: http://127.0.0.1:{port}/health failed: "
        "poll URL answered HTTP 500 (2 attempts)"
    ]
    # The new process answers 200 again; the other members were left alone.
    assert httpx.get(f"http://127.0.0.1:{found['data']['port']}/health", trust_env=False).is_success
    after = {m["id"]: m["physical_id"] for m in members(client, cluster)}
    assert all(after[n["id"]] == n["physical_id"] for n in nodes if n["id"] != victim["id"])


def test_no_recovery_during_a_scale_in_waiting_on_its_hook(
    server: HerdServer, client: httpx.Client
) -> None:
    receiver = Receiver()
    try:
        cluster, nodes = create_cluster(client, "shrink", TESTSERVER, 3)
        deletion = {
            "type": "senlin.policy.deletion",
            "version": "1.1",
            "properties": {
                "criteria": "OLDEST_FIRST",
                "hooks": {"type": "webhook", "params": {"url": receiver.url}, "timeout": 120},
            },
        }
        attach(client, cluster, "dp", deletion)
        attach(client, cluster, "hp", health_policy([{"type": "LIFECYCLE_EVENTS"}]))
        wait_for(lambda: leased(client, cluster))
        time.sleep(1.5)
        r = client.post(f"/v1/clusters/{cluster}/actions", json={"scale_in": {"count": 1}})
        scale_in = r.json()["action"]
        tokens = receiver.wait(1, timeout=30)
        (victim_id,) = tokens
        victim = next(n for n in nodes if n["id"] == victim_id)
        survivor = next(n for n in nodes if n["id"] != victim_id)
        kill9(pid_of(victim))
        kill9(pid_of(survivor))
        wait_for(lambda: health(client, cluster)["checking"] == "SUSPENDED")
        time.sleep(3)  # plenty of ticks: nothing may be recovered meanwhile
        assert client.get(f"/v1/actions/{scale_in}").json()["action"]["status"] == "RUNNING"
        actions = client.get("/v1/actions").json()["actions"]
        assert not [a for a in actions if a["action"] == "CLUSTER_RECOVER"]
        assert node(client, survivor["id"])["physical_id"] == survivor["physical_id"]  # type: ignore[index]

        r = client.post(
            f"/v1/clusters/{cluster}/actions",
            json={"complete_lifecycle": {"lifecycle_action_token": tokens[victim_id]}},
        )
        assert r.status_code == 202, r.text
        assert wait_for_action(client, scale_in)["status"] == "SUCCEEDED"
        found = wait_for(lambda: replaced(client, survivor["id"], survivor["physical_id"]), 60)
        assert found["index"] == survivor["index"]
        assert node(client, victim_id) is None  # deleted, never recovered
        recovered = [
            a["inputs"]["nodes"]
            for a in client.get("/v1/actions").json()["actions"]
            if a["action"] == "CLUSTER_RECOVER"
        ]
        assert recovered == [[survivor["id"]]]
        cluster_events = [(e["action"], e["status"]) for e in events(client, oid=cluster)]
        assert ("HEALTH_CHECK", "SUSPENDED") in cluster_events
        assert ("HEALTH_CHECK", "RESUMED") in cluster_events
    finally:
        receiver.server.shutdown()


def _recoveries(client: httpx.Client) -> list[dict[str, Any]]:
    actions = client.get("/v1/actions", params={"limit": 1000}).json()["actions"]
    return [a for a in actions if a["action"] == "CLUSTER_RECOVER"]


def test_a_crash_loop_is_recreated_with_backoff(server: HerdServer, client: httpx.Client) -> None:
    crashing = {
        "command": TESTSERVER["command"],
        "args": ["-c", "import time; time.sleep(0.6); raise SystemExit(3)"],
    }
    cluster, (member,) = create_cluster(client, "crashy", crashing, 1)
    attach(client, cluster, "hp", health_policy([{"type": "LIFECYCLE_EVENTS"}]))
    window = 15.0
    time.sleep(window)
    in_window = _recoveries(client)
    backoffs = [e for e in events(client, oid=member["id"]) if e["action"] == "HEALTH_BACKOFF"]
    print(
        f"\ncrash loop: {len(in_window)} recoveries and {len(backoffs)} back-off events "
        f"in {window:.0f}s (a restart every ~0.7s would be ~20)"
    )
    # Back-off 1, 2, 4, 8 s: about 5 recoveries in 15 s.
    assert 2 <= len(in_window) <= 8
    assert backoffs and "recoveries in a row" in backoffs[0]["status_reason"]
    exits = [e for e in events(client, oid=member["id"]) if e["status"] == "CHECK_FAILED"]
    assert any("exited with code 3" in e["status_reason"] for e in exits)

    # The member's count and the recover actions, read while no recovery starts in between
    # (a recovery may start at any moment of the loop: both reads must agree around it).
    def counted_alike() -> dict[str, Any] | None:
        before = len(_recoveries(client))
        row: dict[str, Any] = health(client, cluster)["members"][0]
        return row if row["recoveries"] == before == len(_recoveries(client)) else None

    row = wait_for(counted_alike, 60)
    assert row["recoveries"] >= len(in_window) and row["recoveries_in_a_row"] >= 2

    # Issue 24: while its only member waits out a back-off nothing of the cluster works: it
    # is ERROR; it said ACTIVE "equal or above desired_capacity (1)" before, then WARNING.
    def crash_told() -> dict[str, Any] | None:
        found: dict[str, Any] = client.get(f"/v1/clusters/{cluster}").json()["cluster"]
        return found if found["status"] == "ERROR" else None

    told = wait_for(crash_told, 60, interval=0.1)
    # the health manager's mark, or a recovery that ended after its new process crashed
    assert told["status_reason"].endswith(
        ": no node is ACTIVE (desired_capacity 1). 1 of 1 node not ACTIVE (1 ERROR)."
    )

    def marked_by_a_check() -> bool:
        story = [(e["action"], e["status"]) for e in events(client, oid=cluster)]
        return ("HEALTH_CHECK", "ERROR") in story

    wait_for(marked_by_a_check, 60)
    # The loop keeps recovering, so the cluster is locked now and then: a detach asked at
    # such a moment is refused with 409 (Senlin's fail-fast) and asked again, as a client does.
    policy_id = health(client, cluster)["policy"]["id"]
    detach = act_when_unlocked(client, cluster, {"policy_detach": {"policy_id": policy_id}})
    assert detach["status"] == "SUCCEEDED", detach
    # The fix, a profile whose process stays up, is taken whatever the cluster's status (an
    # ERROR cluster refused every update in Senlin), and the cluster works again.
    spec = {"type": "herd.process", "version": "1.0", "properties": TESTSERVER}
    r = client.post("/v1/profiles", json={"profile": {"name": "steady", "spec": spec}})
    assert r.status_code == 201, r.text
    body = {"cluster": {"profile_id": r.json()["profile"]["id"]}}
    r = client.patch(f"/v1/clusters/{cluster}", json=body)
    assert r.status_code == 202, r.text
    fixed = wait_for_action(client, r.headers["Location"].rsplit("/", 1)[-1], timeout=90)
    assert fixed["status"] == "SUCCEEDED", fixed["status_reason"]
    found = client.get(f"/v1/clusters/{cluster}").json()["cluster"]
    assert found["status"] == "ACTIVE", found["status_reason"]
