"""``herd serve --workers 2``: two API processes and one engine, driven over HTTP."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.server import HERD, HerdServer
from tests.waiting import wait_for, wait_for_action

pytestmark = pytest.mark.e2e

HEADERS = {"OpenStack-API-Version": "clustering 1.14"}
MARKS = 60


def _children(pid: int) -> set[int]:
    found = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(proc.name))
    return found


def test_two_api_workers_beside_one_engine(tmp_path: Path) -> None:
    server = HerdServer(tmp_path / "data", free_port(), command=[HERD, "serve", "--workers", "2"])
    server.start(timeout=60)
    try:
        assert server.process is not None
        # Two worker processes under the parent (uvicorn may add none else but these).
        workers = _children(server.process.pid)
        assert len(workers) >= 2
        with httpx.Client(base_url=server.url, headers=HEADERS, timeout=60) as client:
            spec = {"type": "herd.sim", "version": "1.0", "properties": {}}
            r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
            assert r.status_code == 201, r.text
            profile = r.json()["profile"]["id"]
            r = client.post(
                "/v1/clusters",
                json={"cluster": {"name": "c", "profile_id": profile, "desired_capacity": 3}},
            )
            assert r.status_code == 202, r.text
            assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"
            cluster = r.json()["cluster"]["id"]
            nodes = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"]
            assert len(nodes) == 3
            # The engine runs once: one engine record, the parent's.
            services = client.get("/v1/services").json()["services"]
            engines = [s for s in services if s["binary"] == "herd-engine" and s["state"] == "up"]
            assert len(engines) == 1, services
            # Every worker answers /healthz with the engine its parent runs (it said "off").
            for _ in range(6):
                assert client.get("/healthz").json()["engine"] == "running"
            node = nodes[0]["id"]
            before = client.get(f"/v1/nodes/{node}").json()["node"]["health_generation"]

        # Marks from many connections land on both workers; none is lost.
        def mark(i: int) -> int:
            with httpx.Client(base_url=server.url, headers=HEADERS, timeout=60) as own:
                body = {"mark_unhealthy": True, "resource_status_reason": f"mark {i}"}
                return own.patch(f"/v1/clusters/{cluster}/nodes/{node}", json=body).status_code

        with ThreadPoolExecutor(max_workers=16) as pool:
            statuses = list(pool.map(mark, range(MARKS)))
        assert statuses == [200] * MARKS
        with httpx.Client(base_url=server.url, headers=HEADERS, timeout=60) as client:
            after = client.get(f"/v1/nodes/{node}").json()["node"]
        assert after["health_generation"] == before + MARKS
        assert after["health"] == "CHECK_FAILED"
    finally:
        server.stop()
    assert server.process is not None and server.process.returncode is not None
    # The workers end with the parent (they may take a moment to be reaped).
    wait_for(lambda: not any(_alive(pid) for pid in workers), timeout=30)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
