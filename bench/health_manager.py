"""The health manager's figures for ``bench/health.py``: recovery time and polling CPU.

Both run a real ``herd serve`` on SQLite. Detection to recovered uses ``herd.process``
nodes (the test HTTP server): each trial ``kill -9``s another member and polls the API
every 20 ms until that node is ACTIVE on a new process. The CPU cost reads the server
process's ``utime + stime`` from ``/proc`` over a window with the health policy
attached, and over a window of the same length before it (the idle baseline).
"""

from __future__ import annotations

import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from common import API_HEADERS, herd_server, sim_cluster, wait_action

HEALTH_ENV = {"HERD_HEALTH_TICK": "0.05"}
TESTSERVER = {
    "command": sys.executable,
    "args": ["-m", "herd.drivers.testserver", "--port", "{port}"],
    "health_url": "http://127.0.0.1:{port}/health",
}


def _attach(client: httpx.Client, cluster: str, modes: list[dict[str, Any]], interval: int) -> None:
    spec = {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {
                "detection_modes": modes,
                "interval": interval,
                "node_update_timeout": 0,
            },
            "recovery": {"actions": [{"name": "RECREATE"}]},
        },
    }
    policy = client.post("/v1/policies", json={"policy": {"name": "hp", "spec": spec}})
    body = {"policy_attach": {"policy_id": policy.json()["policy"]["id"]}}
    answer = client.post(f"/v1/clusters/{cluster}/actions", json=body)
    wait_action(client, f"/v1/actions/{answer.json()['action']}")


def _process_cluster(client: httpx.Client, name: str, size: int) -> str:
    spec = {"type": "herd.process", "version": "1.0", "properties": TESTSERVER}
    profile = client.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}})
    created = client.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": name,
                "profile_id": profile.json()["profile"]["id"],
                "desired_capacity": size,
            }
        },
    )
    wait_action(client, created.headers["Location"])
    return str(created.json()["cluster"]["id"])


def _idle(client: httpx.Client, cluster: str) -> None:
    """Wait until no action runs on the cluster (the last recovery ended)."""
    end = time.time() + 60
    while time.time() < end:
        actions = client.get("/v1/actions", params={"target": cluster}).json()["actions"]
        if all(a["status"] in ("SUCCEEDED", "FAILED", "CANCELLED") for a in actions):
            return
        time.sleep(0.1)


def _delete(client: httpx.Client, cluster: str) -> None:
    """Detach the policies (a cluster with policies cannot be deleted), delete, wait."""
    for binding in client.get(f"/v1/clusters/{cluster}/policies").json()["cluster_policies"]:
        body = {"policy_detach": {"policy_id": binding["policy_id"]}}
        answer = client.post(f"/v1/clusters/{cluster}/actions", json=body)
        wait_action(client, f"/v1/actions/{answer.json()['action']}")
    answer = client.delete(f"/v1/clusters/{cluster}")
    wait_action(client, answer.headers["Location"])


def _trials(client: httpx.Client, cluster: str, trials: int) -> list[float]:
    took: list[float] = []
    for trial in range(trials):
        nodes = client.get("/v1/nodes", params={"cluster_id": cluster, "sort": "index"}).json()
        victim = nodes["nodes"][trial % len(nodes["nodes"])]  # a new node each time: no back-off
        _idle(client, cluster)
        killed = time.monotonic()
        os.kill(int(victim["physical_id"].split(":")[0]), signal.SIGKILL)
        while time.monotonic() - killed < 60:
            found = client.get(f"/v1/nodes/{victim['id']}").json()["node"]
            if found["status"] == "ACTIVE" and found["physical_id"] != victim["physical_id"]:
                took.append(time.monotonic() - killed)
                break
            time.sleep(0.02)
    return took


def detection_to_recovered(trials: int) -> list[list[object]]:
    rows: list[list[object]] = []
    modes: list[tuple[str, list[dict[str, Any]], int]] = [
        ("LIFECYCLE_EVENTS", [{"type": "LIFECYCLE_EVENTS"}], 60),
        ("NODE_STATUS_POLLING every 1 s", [{"type": "NODE_STATUS_POLLING"}], 1),
    ]
    for label, mode, interval in modes:
        with tempfile.TemporaryDirectory(prefix="herd-bench-") as tmp:
            server = herd_server(Path(tmp) / "data", **HEALTH_ENV)
            client = httpx.Client(base_url=server.url, headers=API_HEADERS, timeout=60)
            try:
                cluster = _process_cluster(client, "web", 5)
                _attach(client, cluster, mode, interval)
                time.sleep(3)  # the lease is taken and the members watched
                took = _trials(client, cluster, trials)
                _idle(client, cluster)
                _delete(client, cluster)
            finally:
                client.close()
                server.stop()
        if took:
            figures = (min(took), statistics.median(took), max(took))
            rows.append([label, *(f"{t:.2f}" for t in figures), f"{len(took)}/{trials}"])
        else:
            rows.append([label, "-", "-", "-", f"0/{trials}"])
    return rows


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def polling_cpu(members: int, seconds: float) -> list[list[object]]:
    with tempfile.TemporaryDirectory(prefix="herd-bench-") as tmp:
        server = herd_server(Path(tmp) / "data")  # the default tick (0.5 s)
        client = httpx.Client(base_url=server.url, headers=API_HEADERS, timeout=120)
        try:
            cluster = sim_cluster(client, members, name="polled")
            time.sleep(2)
            pid = server.process.pid
            before = _cpu_seconds(pid)
            time.sleep(seconds)
            idle = _cpu_seconds(pid) - before
            _attach(client, cluster, [{"type": "NODE_STATUS_POLLING"}], 5)
            time.sleep(7)  # the lease is taken and the first round has run
            before = _cpu_seconds(pid)
            time.sleep(seconds)
            polling = _cpu_seconds(pid) - before
            checked = client.get(f"/v1/clusters/{cluster}/health").json()["cluster_health"]
            healthy = sum(m["last_check_result"] == "healthy" for m in checked["members"])
            _delete(client, cluster)
        finally:
            client.close()
            server.stop()
    cost = polling - idle
    return [
        ["idle (no health policy)", f"{idle:.2f}", f"{100 * idle / seconds:.2f}"],
        [
            f"polling {members} members every 5 s",
            f"{polling:.2f}",
            f"{100 * polling / seconds:.2f}",
        ],
        [
            f"cost of polling ({healthy} members checked)",
            f"{cost:.2f}",
            f"{100 * cost / seconds:.2f}",
        ],
    ]
