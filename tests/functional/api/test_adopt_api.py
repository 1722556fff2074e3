"""Adopt and adopt-preview (1.7): simulated servers and real processes herd did not start."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import assert_error, mv, services
from tests.waiting import wait_for_action

from herd.config import Settings
from herd.drivers.procfs import read_proc
from herd.drivers.sim import SimDriver
from herd.store.models import NodeRow, ProfileRow

V17 = mv("1.7")
SLEEPER = "import time\nwhile True:\n    time.sleep(0.1)\n"


def _sim(client: TestClient) -> SimDriver:
    driver = services(client).drivers.get("herd.sim")
    assert isinstance(driver, SimDriver)
    return driver


def _count(client: TestClient, model: Any) -> int:
    with services(client).database.read() as session:
        return int(session.query(model).count())


@pytest.fixture
def foreign_process() -> Iterator[subprocess.Popen[bytes]]:
    """A process herd did not start, leading its own process group."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SLEEPER],
        env={**os.environ, "ADOPT_MARK": "from-the-test"},
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_sim_preview_and_adopt(client: TestClient) -> None:
    physical = _sim(client).add_external("zone-a", "region-1")
    r = client.post(
        "/v1/nodes/adopt-preview",
        json={"identity": physical, "type": "herd.sim-1.0", "snapshot": True},
        headers=V17,
    )
    assert r.status_code == 200, r.text
    preview = r.json()["node_profile"]["node_preview"]
    assert preview["type"] == "herd.sim" and preview["version"] == "1.0"
    assert preview["properties"]["zone"] == "zone-a"
    assert preview["properties"]["region"] == "region-1"
    r = client.post(
        "/v1/nodes/adopt-preview",
        json={"identity": physical, "type": "herd.sim", "overrides": {"create_latency": 0.5}},
        headers=V17,
    )
    properties = r.json()["node_profile"]["node_preview"]["properties"]
    assert properties["zone"] is None and properties["create_latency"] == 0.5
    assert _count(client, NodeRow) == 0 and _count(client, ProfileRow) == 0

    body = {
        "identity": physical,
        "type": "herd.sim-1.0",
        "name": "adopted",
        "role": "master",
        "metadata": {"team": "a"},
        "snapshot": "yes",
    }
    r = client.post("/v1/nodes/adopt", json=body, headers=V17)
    assert r.status_code == 200, r.text
    node = r.json()["node"]
    assert node["name"] == "adopted" and node["role"] == "master"
    assert node["status"] == "ACTIVE"
    assert node["status_reason"] == "Node adopted successfully"
    assert node["physical_id"] == physical
    assert node["index"] == -1 and node["cluster_id"] == ""
    assert node["metadata"] == {"team": "a"}
    assert node["profile_name"] == "prof-adopted"
    assert node["data"]["placement"] == {"zone": "zone-a", "region_name": "region-1"}
    profile = client.get(f"/v1/profiles/{node['profile_id']}").json()["profile"]
    assert profile["type"] == "herd.sim-1.0"
    assert profile["spec"]["properties"]["zone"] == "zone-a"
    assert client.get(f"/v1/nodes/{node['id']}").json()["node"]["physical_id"] == physical
    events = client.get(f"/v1/events?oid={node['id']}").json()["events"]
    assert [e["action"] for e in events] == ["NODE_ADOPT"]
    # The simulated cloud now reports it as the node's resource.
    assert _sim(client).discover()[node["id"]].physical_id == physical

    again = client.post(
        "/v1/nodes/adopt", json={"identity": physical, "type": "herd.sim"}, headers=V17
    )
    assert_error(
        again, 409, f"The simulated server '{physical}' already backs node '{node['id']}'."
    )


def test_adopt_without_a_name_gets_senlins_default(client: TestClient) -> None:
    physical = _sim(client).add_external()
    r = client.post("/v1/nodes/adopt", json={"identity": physical, "type": "herd.sim"}, headers=V17)
    node = r.json()["node"]
    assert node["name"].startswith("node-") and len(node["name"]) == 13
    assert node["profile_name"] == f"prof-{node['name']}"
    assert node["role"] == ""


def test_adopt_errors_store_nothing(client: TestClient) -> None:
    physical = _sim(client).add_external()

    def error(body: Any, message: str, status: int = 400, path: str = "adopt") -> None:
        assert_error(client.post(f"/v1/nodes/{path}", json=body, headers=V17), status, message)

    error({"identity": physical}, "'type' is a required property")
    error({"type": "herd.sim"}, "'identity' is a required property")
    error(
        {"identity": physical, "type": "herd.sim", "cluster": "c"},
        "Additional properties are not allowed ('cluster' was unexpected)",
    )
    error(
        {"identity": "sim-nope-1", "type": "herd.sim"},
        "The specified simulated server 'sim-nope-1' could not be found.",
    )
    error(
        {"identity": physical, "type": "herd.sim", "overrides": {"failure_rate": 7}},
        "properties.failure_rate: '7' is not a number between 0 and 1",
        path="adopt-preview",
    )
    error(
        {"identity": "c-1", "type": "container.dockerinc.docker-1.0"},
        "The specified profile type (container.dockerinc.docker-1.0) is not supported. It is "
        "one of Senlin's OpenStack profile types, which herd does not provide: herd runs nodes "
        "as local processes, simulated servers, Nova servers or Heat stacks. Supported types: "
        "herd.process-1.0, herd.sim-1.0, os.heat.stack-1.0, os.nova.server-1.0, "
        "os.nova.server-1.1, os.nova.server-1.2.",
    )
    error(
        {"identity": physical, "type": "herd.sim", "snapshot": "maybe"},
        "Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', "
        "'no', 'off', 'on', 't', 'true', 'y', 'yes'",
    )
    assert_error(
        client.post("/v1/nodes/adopt", json={"identity": physical, "type": "herd.sim"}),
        400,
        "API version '1.0' is not supported on this method.",
    )
    assert_error(
        client.post(
            "/v1/nodes/adopt-preview",
            json={"identity": physical, "type": "herd.sim"},
            headers=mv("1.6"),
        ),
        400,
        "API version '1.6' is not supported on this method.",
    )
    assert _count(client, NodeRow) == 0 and _count(client, ProfileRow) == 0


def test_process_preview_records_the_command_line(
    client: TestClient, foreign_process: subprocess.Popen[bytes]
) -> None:
    pid = foreign_process.pid
    info = read_proc(pid)
    assert info is not None
    r = client.post(
        "/v1/nodes/adopt-preview",
        json={"identity": str(pid), "type": "herd.process-1.0", "snapshot": True},
        headers=V17,
    )
    assert r.status_code == 200, r.text
    properties = r.json()["node_profile"]["node_preview"]["properties"]
    assert properties["command"] == sys.executable
    assert properties["args"] == ["-c", SLEEPER]
    assert properties["cwd"] == os.getcwd()
    assert properties["env"]["ADOPT_MARK"] == "from-the-test"
    r = client.post(
        "/v1/nodes/adopt-preview",
        json={"identity": f"{pid}:{info.start_time}", "type": "herd.process"},
        headers=V17,
    )
    assert "env" not in r.json()["node_profile"]["node_preview"]["properties"] or (
        r.json()["node_profile"]["node_preview"]["properties"]["env"] == {}
    )


def test_process_adopt_refusals(
    client: TestClient, foreign_process: subprocess.Popen[bytes]
) -> None:
    pid = foreign_process.pid
    info = read_proc(pid)
    assert info is not None

    def error(identity: str, message: str, status: int = 400) -> None:
        body = {"identity": identity, "type": "herd.process"}
        assert_error(client.post("/v1/nodes/adopt", json=body, headers=V17), status, message)

    error(
        f"{pid}:{info.start_time + 1}",
        f"Process {pid} started at tick {info.start_time}, not {info.start_time + 1}: the pid "
        "now belongs to another process.",
    )
    error(
        "web-1", "The identity 'web-1' is not a process: expected '<pid>' or '<pid>:<start time>'."
    )
    error("999999999", "The specified process '999999999' could not be found.")
    error(str(os.getpid()), "herd cannot adopt its own process.")
    follower = subprocess.Popen([sys.executable, "-c", SLEEPER])  # in the test's process group
    try:
        group = os.getpgid(follower.pid)
        error(
            str(follower.pid),
            f"Process {follower.pid} does not lead its own process group (its group is "
            f"{group}): herd signals a node's whole process group, so only a group leader can "
            "be adopted (start it with setsid).",
        )
    finally:
        follower.kill()
        follower.wait()
    assert _count(client, NodeRow) == 0


def test_adopted_process_is_managed_like_any_node(
    api_client: ApiClientFactory, settings: Settings, foreign_process: subprocess.Popen[bytes]
) -> None:
    client = api_client(settings, start_engine=True)
    pid = foreign_process.pid
    body = {
        "identity": str(pid),
        "type": "herd.process",
        "name": "legacy",
        "overrides": {"stop_timeout": 2},
    }
    r = client.post("/v1/nodes/adopt", json=body, headers=V17)
    assert r.status_code == 200, r.text
    node = r.json()["node"]
    info = read_proc(pid)
    assert info is not None
    assert node["physical_id"] == f"{pid}:{info.start_time}"
    assert node["data"]["adopted"] is True
    again = client.post(
        "/v1/nodes/adopt", json={"identity": str(pid), "type": "herd.process"}, headers=V17
    )
    assert_error(
        again,
        409,
        f"The resource '{node['physical_id']}' is already managed by node '{node['id']}'.",
    )

    r = client.post(f"/v1/nodes/{node['id']}/actions", json={"check": {}})
    check = wait_for_action(client, r.json()["action"])
    assert check["status"] == "SUCCEEDED", check["status_reason"]
    assert client.get(f"/v1/nodes/{node['id']}").json()["node"]["health"] == "CHECK_COMPLETE"

    # Deleting the node stops the adopted process, as for a node herd started itself.
    r = client.delete(f"/v1/nodes/{node['id']}")
    assert r.status_code == 202
    wait_for_action(client, r.headers["Location"].rsplit("/", 1)[1])
    assert foreign_process.wait(timeout=20) is not None
