"""Two ``herd engine`` processes on one data directory share the ``herd.sim`` cloud.

With ``sim_shared_state`` the sim driver keeps its servers in a SQLite file beside the data
directory, so sim nodes can move between engines as real servers would: engine A creates
a cluster's servers and is killed with SIGKILL; engine B, started after, checks those
servers healthy and deletes them. With servers in A's memory, B would find none.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.chaos import EngineProcess
from tests.e2e.server import HERD, HerdServer
from tests.waiting import wait_for_action

pytestmark = pytest.mark.e2e

SIM_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {"zone": "z1"}}


def servers(data_dir: Path) -> set[str]:
    with sqlite3.connect(data_dir / "sim-servers.sqlite") as db:
        return {row[0] for row in db.execute("SELECT physical_id FROM sim_servers")}


def succeeded(client: httpx.Client, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    action_id = response.headers["location"].rsplit("/", 1)[-1]
    action = wait_for_action(client, action_id)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    return action


def test_sim_servers_outlive_the_engine_that_made_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERD_SIM_SHARED_STATE", "true")
    data_dir = tmp_path / "data"
    db_url = f"sqlite:///{tmp_path / 'herd.db'}"
    api = HerdServer(data_dir, free_port(), db_url=db_url, command=[HERD, "serve", "--no-engine"])
    first = EngineProcess("a", data_dir, db_url, tmp_path)
    second = EngineProcess("b", data_dir, db_url, tmp_path)
    api.start()
    try:
        first.start()
        client = httpx.Client(base_url=api.url, timeout=30)
        assert client.post(
            "/v1/profiles", json={"profile": {"name": "sim", "spec": SIM_SPEC}}
        ).is_success
        created = client.post(
            "/v1/clusters",
            json={"cluster": {"name": "web", "profile_id": "sim", "desired_capacity": 4}},
        )
        succeeded(client, created)
        nodes = client.get("/v1/nodes", params={"cluster_id": "web"}).json()["nodes"]
        assert len(nodes) == 4
        assert {n["physical_id"] for n in nodes} == servers(data_dir)

        first.kill9()
        second.start()
        for node in nodes:
            succeeded(client, client.post(f"/v1/nodes/{node['id']}/actions", json={"check": {}}))
            assert client.get(f"/v1/nodes/{node['id']}").json()["node"]["status"] == "ACTIVE"

        succeeded(
            client,
            client.post(
                "/v1/clusters/web/actions",
                json={"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 0}},
            ),
        )
        assert servers(data_dir) == set()
    finally:
        first.stop()
        second.stop()
        api.stop()
