"""Rolling updates of real ``herd.process`` services under ``senlin.policy.batch-1.0``.

Each member is the test HTTP server on a port fixed by its index (chosen free at
run time), so a probe can keep hitting the same 20 health URLs while members
are replaced: the replacement of member ``i`` listens where ``i`` did.
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from tests.e2e.sdk import node_processes
from tests.e2e.server import HerdServer
from tests.waiting import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HEADERS = {"OpenStack-API-Version": "clustering 1.14"}


def _free_port_suffix(count: int) -> str:
    """Three digits such that ports "<index><digits>" (index 1..count) are all free now.

    Templates only substitute, so member ``i`` listens on the port spelled ``i`` then
    these digits (``1537``, ``2537``, ..., ``20537``); its replacement listens there too.
    """
    start = int(time.time() * 1000) % 800
    for number in [*range(200 + start, 1000), *range(200, 200 + start)]:
        suffix = str(number)
        sockets = []
        try:
            for index in range(1, count + 1):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", int(f"{index}{suffix}")))
            return suffix
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise RuntimeError("no free ports")


def _profile(base: str, version: str) -> dict[str, Any]:
    return {
        "type": "herd.process",
        "version": "1.0",
        "properties": {
            "command": sys.executable,
            "args": ["-m", "herd.drivers.testserver", "--port", f"{{index}}{base}"],
            "health_url": f"http://127.0.0.1:{{index}}{base}/health",
            "env": {"HERD_VERSION": version},
            "stop_timeout": 5,
        },
    }


def _api(server: HerdServer) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/v1", headers=HEADERS, timeout=30)


def _wait_action(api: httpx.Client, location: str, timeout: float = 240) -> dict[str, Any]:
    action_id = location.rstrip("/").rsplit("/", 1)[-1]
    found: dict[str, Any] = {}

    def ended() -> bool:
        found.update(api.get(f"/actions/{action_id}").json()["action"])
        return found["status"] in ("SUCCEEDED", "FAILED", "CANCELLED")

    wait_for(ended, timeout=timeout)
    return found


def _service(api: httpx.Client, base: str, size: int, batch: dict[str, int]) -> tuple[str, str]:
    """A cluster of ``size`` version-1 members with the batch policy; (cluster id, v2 profile)."""
    v1 = api.post("/profiles", json={"profile": {"name": "v1", "spec": _profile(base, "1")}})
    v2 = api.post("/profiles", json={"profile": {"name": "v2", "spec": _profile(base, "2")}})
    assert v1.status_code == 201 and v2.status_code == 201, (v1.text, v2.text)
    spec = {"type": "senlin.policy.batch", "version": "1.0", "properties": batch}
    policy = api.post("/policies", json={"policy": {"name": "rolling", "spec": spec}})
    assert policy.status_code == 201, policy.text
    made = api.post(
        "/clusters",
        json={
            "cluster": {
                "name": "web",
                "profile_id": v1.json()["profile"]["id"],
                "desired_capacity": size,
            }
        },
    )
    assert made.status_code == 202, made.text
    assert _wait_action(api, made.headers["Location"])["status"] == "SUCCEEDED"
    cluster_id = made.json()["cluster"]["id"]
    attach = api.post(
        f"/clusters/{cluster_id}/actions",
        json={"policy_attach": {"policy_id": policy.json()["policy"]["id"]}},
    )
    assert _wait_action(api, attach.headers["Location"])["status"] == "SUCCEEDED"
    return cluster_id, v2.json()["profile"]["id"]


@dataclass
class Probe:
    """Hits every member's health URL every 50 ms; records (healthy count, versions)."""

    ports: list[int]
    rounds: list[tuple[float, int, frozenset[str]]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def _one(self, port: int) -> str | None:
        """The version a member reports when it answers 200, else None."""
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", "/health")
            answer = conn.getresponse()
            body = answer.read()
            if answer.status != 200:
                return None
            return str(json.loads(body)["node"].get("version"))
        except (OSError, http.client.HTTPException, ValueError):
            return None
        finally:
            conn.close()

    def run(self) -> None:
        with ThreadPoolExecutor(len(self.ports)) as pool:
            while not self.stop.is_set():
                started = time.time()
                answers = list(pool.map(self._one, self.ports))
                healthy = [a for a in answers if a is not None]
                self.rounds.append((started, len(healthy), frozenset(healthy)))
                self.stop.wait(max(0.0, 0.05 - (time.time() - started)))


def test_rolling_update_keeps_min_in_service_healthy(herd_server: HerdServer) -> None:
    size, min_in_service = 20, 15
    base = _free_port_suffix(size)
    api = _api(herd_server)
    cluster_id, v2 = _service(
        api, base, size, {"min_in_service": min_in_service, "max_batch_size": 5, "pause_time": 1}
    )
    probe = Probe([int(f"{i}{base}") for i in range(1, size + 1)])
    thread = threading.Thread(target=probe.run, daemon=True)
    thread.start()
    wait_for(lambda: len(probe.rounds) >= 3, timeout=30)
    assert probe.rounds[-1][1] == size  # every member serves before the update

    answer = api.patch(f"/clusters/{cluster_id}", json={"cluster": {"profile_id": v2}})
    assert answer.status_code == 202, answer.text
    action = _wait_action(api, answer.headers["Location"])
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    wait_for(
        lambda: probe.rounds[-1][2] == frozenset({"2"}) and probe.rounds[-1][1] == size, timeout=30
    )
    probe.stop.set()
    thread.join(30)

    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["update"]["plan"] and len(action["data"]["update"]["plan"]) == 4
    fewest = min(healthy for _, healthy, _ in probe.rounds)
    mixed = [r for r in probe.rounds if r[2] == frozenset({"1", "2"})]
    print(
        f"\nprobe: {len(probe.rounds)} rounds, fewest healthy {fewest}, "
        f"{len(mixed)} rounds with both versions serving"
    )
    assert fewest >= min_in_service, f"only {fewest} members healthy at one probe"
    assert fewest < size  # the probe did see members out of service (it can fail)
    assert mixed  # it probed in the middle of the rollout
    nodes = api.get("/nodes", params={"cluster_id": cluster_id}).json()["nodes"]
    assert {n["profile_id"] for n in nodes} == {v2}
    assert {n["status"] for n in nodes} == {"ACTIVE"}


def test_kill9_mid_rollout_resumes_at_its_batch(herd_server: HerdServer) -> None:
    size = 6
    base = _free_port_suffix(size)
    api = _api(herd_server)
    cluster_id, v2 = _service(
        api, base, size, {"min_in_service": 4, "max_batch_size": 2, "pause_time": 2}
    )
    answer = api.patch(f"/clusters/{cluster_id}", json={"cluster": {"profile_id": v2}})
    action_id = answer.headers["Location"].rsplit("/", 1)[-1]

    def in_second_batch() -> bool:
        data = api.get(f"/actions/{action_id}").json()["action"]["data"]
        return int((data.get("update") or {}).get("batch") or 0) >= 1

    wait_for(in_second_batch, timeout=120)
    plan = api.get(f"/actions/{action_id}").json()["action"]["data"]["update"]["plan"]
    first_batch_pids = {n: pid for n, pid in node_processes(herd_server.data_dir).items()}
    herd_server.kill9()

    herd_server.start()
    api = _api(herd_server)
    action = _wait_action(api, answer.headers["Location"])
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["update"]["plan"] == plan  # the same schedule, not a new one
    running = node_processes(herd_server.data_dir)
    # The first batch was done before the kill: its members were not rebuilt again.
    for node_id in plan[0]:
        assert running[node_id] == first_batch_pids[node_id]
    nodes = api.get("/nodes", params={"cluster_id": cluster_id}).json()["nodes"]
    assert len(nodes) == size
    assert {n["profile_id"] for n in nodes} == {v2}
    assert set(running) == {n["id"] for n in nodes}  # no orphan, none missing
    events = api.get("/events", params={"cluster_id": cluster_id, "limit": 1000}).json()
    assert any(e["status"] == "RESUMED" for e in events["events"])
