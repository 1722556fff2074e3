"""Unhealthy members with the ``process`` driver: they go first, and are replaced in place."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.e2e.sdk import node_processes, process_profile_spec
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action

pytestmark = pytest.mark.e2e

V = {"OpenStack-API-Version": "clustering 1.14"}


def _act(client: httpx.Client, cluster: str, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post(f"/v1/clusters/{cluster}/actions", json=body)
    assert r.status_code == 202, r.text
    return wait_for_action(client, r.json()["action"])


def _members(client: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    r = client.get("/v1/nodes", params={"cluster_id": cluster, "sort": "index"})
    return list(r.json()["nodes"])


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _mark(client: httpx.Client, cluster: str, node: str) -> None:
    r = client.patch(f"/v1/clusters/{cluster}/nodes/{node}", json={"mark_unhealthy": True})
    assert r.status_code == 200, r.text
    assert r.json()["node"]["health"] == "CHECK_FAILED"


def test_unhealthy_members_go_first_and_are_replaced_in_place(herd_server: HerdServer) -> None:
    data_dir = herd_server.data_dir
    with httpx.Client(base_url=herd_server.url, headers=V, timeout=30) as client:
        r = client.post(
            "/v1/profiles", json={"profile": {"name": "proc", "spec": process_profile_spec()}}
        )
        profile = r.json()["profile"]["id"]
        r = client.post(
            "/v1/clusters",
            json={"cluster": {"name": "web", "profile_id": profile, "desired_capacity": 1}},
        )
        cluster = r.json()["cluster"]["id"]
        assert (
            wait_for_action(client, r.headers["Location"].rsplit("/", 1)[1])["status"]
            == "SUCCEEDED"
        )
        for _ in range(5):  # one by one: the members have distinct ages
            assert _act(client, cluster, {"scale_out": {"count": 1}})["status"] == "SUCCEEDED"
        members = _members(client, cluster)
        ids = [m["id"] for m in members]  # oldest first
        assert len(ids) == 6 and set(ids) == set(node_processes(data_dir))

        # OLDEST_FIRST would take ids[0] and ids[1]; the two youngest are marked instead.
        r = client.post(
            "/v1/policies",
            json={
                "policy": {
                    "name": "dp",
                    "spec": {
                        "type": "senlin.policy.deletion",
                        "version": "1.1",
                        "properties": {"criteria": "OLDEST_FIRST"},
                    },
                }
            },
        )
        policy = r.json()["policy"]["id"]
        assert (
            _act(client, cluster, {"policy_attach": {"policy_id": policy}})["status"] == "SUCCEEDED"
        )
        marked = [ids[4], ids[5]]
        for node in marked:
            _mark(client, cluster, node)
        action = _act(client, cluster, {"scale_in": {"count": 2}})
        assert action["status"] == "SUCCEEDED", action["status_reason"]
        assert sorted(action["outputs"]["nodes_removed"]) == sorted(marked)
        assert [m["id"] for m in _members(client, cluster)] == ids[:4]
        running = node_processes(data_dir)
        assert set(running) == set(ids[:4])

        # Replace one unhealthy member: same name and index, new process, old one gone.
        old = members[1]
        old_pid = running[old["id"]]
        _mark(client, cluster, old["id"])
        action = _act(client, cluster, {"replace_unhealthy": {}})
        assert action["status"] == "SUCCEEDED", action["status_reason"]
        assert action["outputs"]["nodes_replaced"] == [old["id"]]
        now = _members(client, cluster)
        twin = next(m for m in now if m["index"] == old["index"])
        assert twin["id"] != old["id"] and twin["name"] == old["name"]
        assert twin["status"] == "ACTIVE" and twin["health"] != "CHECK_FAILED"
        assert client.get(f"/v1/nodes/{old['id']}").status_code == 404
        running = node_processes(data_dir)
        assert set(running) == {ids[0], twin["id"], ids[2], ids[3]}
        assert running[twin["id"]] == int(twin["physical_id"].split(":")[0])
        assert not _alive(old_pid)
        # The new process really serves under the node's name: its environment says so.
        env = Path(f"/proc/{running[twin['id']]}/environ").read_bytes().split(b"\0")
        assert f"HERD_NODE_ID={twin['id']}".encode() in env
        assert f"HERD_NODE_NAME={old['name']}".encode() in env
        assert f"HERD_NODE_INDEX={old['index']}".encode() in env
        assert os.getpgid(running[twin["id"]]) == running[twin["id"]]
