"""kill -9 ``herd serve`` in the middle of a multi-region cluster delete; the restart finishes it.

The server is killed in the window where the regional copies are gone and the
central row is not (held open by the test-only server ``tests.e2e.hooked_serve``), with
an agent per region reconciling and fetching on demand throughout, server down included.
The restart is a plain ``herd serve``. The central store is SQLite, then PostgreSQL.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path

import httpx
from tests.e2e.server import HERD
from tests.functional.deletion.support import (
    SIM_SPEC,
    LiveServer,
    open_regions,
    region_configs,
    resurrections,
    wait_for,
)

from herd.agent.reconciler import CentralUnavailable, Reconciler, agent_client

REGIONS = ("R1", "R2", "R3")
PLACEMENT = {
    "type": "senlin.policy.region_placement",
    "version": "1.0",
    "properties": {"regions": [{"name": r} for r in REGIONS]},
}


def _act(client: httpx.Client, response: httpx.Response) -> None:
    assert response.status_code == 202, response.text
    location = response.headers["Location"]
    wait_for(lambda: client.get(location).json()["action"]["status"] == "SUCCEEDED", timeout=30)


def test_kill9_during_multi_region_delete(tmp_path: Path, db_url: str) -> None:
    configs = region_configs(tmp_path, REGIONS)
    hooked = [sys.executable, "-m", "tests.e2e.hooked_serve", "--regions-pause", "30"]
    central = None if db_url.startswith("sqlite") else db_url
    live = LiveServer(tmp_path, central, configs, command=hooked)
    regions = open_regions(configs, tmp_path / "data")
    token = live.headers["agent"]["X-Auth-Token"]
    stop = threading.Event()
    with live, httpx.Client(base_url=live.url, headers=live.headers["member"]) as client:
        profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}})
        policy = client.post("/v1/policies", json={"policy": {"name": "rp", "spec": PLACEMENT}})
        r = client.post(
            "/v1/clusters",
            json={"cluster": {"name": "c", "profile_id": profile.json()["profile"]["id"]}},
        )
        cid = r.json()["cluster"]["id"]
        _act(client, r)
        actions = f"/v1/clusters/{cid}/actions"
        policy_id = policy.json()["policy"]["id"]
        _act(client, client.post(actions, json={"policy_attach": {"policy_id": policy_id}}))
        _act(client, client.post(actions, json={"scale_out": {"count": 3}}))
        _act(client, client.post(actions, json={"policy_detach": {"policy_id": policy_id}}))

        agents = [
            Reconciler(name, regions.backends[name], agent_client(live.url, token, timeout=2))
            for name in REGIONS
        ]
        for agent in agents:
            assert agent.reconcile_once().created == [cid]

        def work(agent: Reconciler) -> None:
            while not stop.is_set():
                agent.reconcile_once()
                # while the server is down the agent changes nothing
                with contextlib.suppress(CentralUnavailable):
                    agent.ensure(cid)
                time.sleep(0.02)

        threads = [threading.Thread(target=work, args=(a,)) for a in agents]
        for thread in threads:
            thread.start()
        try:
            assert client.delete(f"/v1/clusters/{cid}").status_code == 202
            # members gone, every regional copy gone, central row still there: kill now
            wait_for(lambda: all(b.get(cid) is None for b in regions.backends.values()))
            assert client.get(f"/v1/clusters/{cid}").json()["cluster"]["status"] == "DELETING"
            live.server.kill9()
            time.sleep(1.0)  # the agents keep trying against a dead server
            live.server.command = [HERD, "serve"]
            live.server.start()
            wait_for(lambda: client.get(f"/v1/clusters/{cid}").status_code == 404, timeout=60)
            admin = {"X-Auth-Token": live.headers["admin"]["X-Auth-Token"]}
            assert client.get("/v1/deletions", headers=admin).json()["deletions"] == []
            time.sleep(0.5)
        finally:
            stop.set()
            for thread in threads:
                thread.join(10)
        for agent in agents:
            agent.reconcile_once()
            agent.client.close()
        for backend in regions.backends.values():
            assert backend.copies() == []
            assert resurrections(backend) == []
            assert [e.op for e in backend.history()] == ["CREATE", "DELETE"]
    regions.close()
