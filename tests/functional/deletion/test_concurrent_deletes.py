"""Concurrent DELETEs of one cluster against a real server: exactly one 202, the rest 204."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
from tests.clusters import create_cluster
from tests.functional.deletion.support import SIM_SPEC, LiveServer, wait_for

CALLERS = 12


def test_concurrent_deletes(db_url: str, tmp_path: Path) -> None:
    live = LiveServer(tmp_path, None if db_url.startswith("sqlite") else db_url, [])
    with live, httpx.Client(base_url=live.url, headers=live.headers["member"]) as client:
        slow = {**SIM_SPEC, "properties": {"delete_latency": 1.0}}
        cid = create_cluster(client, 1, spec=slow)
        assert client.get(f"/v1/clusters/{cid}").json()["cluster"]["status"] == "ACTIVE"
        barrier = threading.Barrier(CALLERS)
        statuses: list[int] = []

        def delete() -> None:
            with httpx.Client(base_url=live.url, headers=live.headers["member"]) as own:
                barrier.wait()
                statuses.append(own.delete(f"/v1/clusters/{cid}").status_code)

        threads = [threading.Thread(target=delete) for _ in range(CALLERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(statuses) == [202] + [204] * (CALLERS - 1)
        actions = client.get("/v1/actions", params={"target": cid, "action": "CLUSTER_DELETE"})
        assert len(actions.json()["actions"]) == 1
        wait_for(lambda: client.get(f"/v1/clusters/{cid}").status_code == 404)
        admin = {"X-Auth-Token": live.headers["admin"]["X-Auth-Token"]}
        assert client.get("/v1/deletions", headers=admin).json()["deletions"] == []
