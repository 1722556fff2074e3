"""Cancelling every kind of action while it runs leaves no debris (issue 24).

One ``herd serve`` per database flavour (SQLite, then the suite's PostgreSQL), with
simulated servers kept in a file (``HERD_SIM_SHARED_STATE``) so the test can compare
them with the node rows. One action of every kind starts at once, each on its own
cluster or node, with driver calls that take seconds; once each one runs, it is
cancelled through the API (``PATCH /v1/actions/<id>``, Senlin's cancel). Then:

* every action has ended (CANCELLED, or SUCCEEDED when it finished before the cancel
  landed), and no cluster or node lock is held;
* every node is in a final status (ACTIVE or ERROR: nothing left CREATING, DELETING,
  RECOVERING, UPDATING or OPERATING), and every node row of a cluster has its resource;
* every cluster's status is the one its members give it (ACTIVE, WARNING or ERROR, never
  RESIZING or CREATING), and a cancelled change of size leaves ``desired_capacity`` equal
  to its members;
* the simulated servers are exactly the node rows' (no orphan resource);
* the cluster can then be changed and deleted without ``force``.

Before, a cancelled scale-in, scale-out or cluster create left the cluster RESIZING or
CREATING with desired capacity and members disagreeing, and only a forced delete removed
a cancelled create.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from tests.conftest import PgServer, free_port
from tests.e2e.server import HerdServer
from tests.waiting import FINAL, wait_for_action

from herd.drivers.sim import SimDriver
from herd.store.database import Database
from herd.store.models import ClusterLockRow, NodeLockRow

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(400)]

V = {"OpenStack-API-Version": "clustering 1.14"}
LATENCY = 3.0  # seconds per simulated create and delete: the cancel lands among them
SIZE = 3
SETTLED = ("ACTIVE", "WARNING", "ERROR")


@dataclass
class Server:
    herd: HerdServer
    db_url: str
    client: httpx.Client
    profile: str = ""
    other_profile: str = ""


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    tmp: Path = tmp_path_factory.mktemp("cancel-matrix")
    name = None
    if request.param == "sqlite":
        db_url = f"sqlite:///{tmp / 'data' / 'herd.db'}"
    else:
        pg: PgServer = request.getfixturevalue("pg_server")
        name = pg.create_database()
        db_url = pg.url_for(name)
    herd = HerdServer(tmp / "data", free_port(), db_url=db_url, HERD_SIM_SHARED_STATE="1")
    herd.start()
    client = httpx.Client(base_url=herd.url, headers=V, timeout=30, trust_env=False)
    try:
        latencies = {"create_latency": LATENCY, "delete_latency": LATENCY}
        found = Server(herd, db_url, client)
        found.profile = _profile(client, "slow", latencies)
        found.other_profile = _profile(client, "slow2", latencies)
        yield found
    finally:
        client.close()
        herd.stop()
        if name is not None:
            request.getfixturevalue("pg_server").drop_database(name)


def _profile(client: httpx.Client, name: str, properties: dict[str, Any]) -> str:
    spec = {"type": "herd.sim", "version": "1.0", "properties": properties}
    r = client.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}})
    assert r.status_code == 201, r.text
    return str(r.json()["profile"]["id"])


def _accepted(r: httpx.Response) -> str:
    assert r.status_code == 202, r.text
    if "Location" in r.headers:
        return r.headers["Location"].rsplit("/", 1)[-1]
    return str(r.json()["action"])


def _members(client: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    r = client.get("/v1/nodes", params={"cluster_id": cluster, "limit": 1000})
    return sorted(r.json()["nodes"], key=lambda n: n["index"])


def _clusters(s: Server, names: list[str]) -> dict[str, str]:
    started = {}
    for name in names:
        body = {"name": name, "profile_id": s.profile, "desired_capacity": SIZE}
        r = s.client.post("/v1/clusters", json={"cluster": body})
        started[name] = (str(r.json()["cluster"]["id"]), _accepted(r))
    for cluster, action in started.values():
        assert wait_for_action(s.client, action, timeout=120)["status"] == "SUCCEEDED", cluster
    return {name: cluster for name, (cluster, _) in started.items()}


def _orphan(s: Server, name: str) -> str:
    r = s.client.post("/v1/nodes", json={"node": {"name": name, "profile_id": s.profile}})
    node = str(r.json()["node"]["id"])
    assert wait_for_action(s.client, _accepted(r), timeout=60)["status"] == "SUCCEEDED"
    return node


def _start(s: Server) -> dict[str, tuple[str, str | None]]:
    """Start one action of every kind; name -> (action id, cluster id or None)."""
    c = s.client
    kinds = [
        "scale-out",
        "scale-in",
        "resize",
        "del-nodes",
        "add-nodes",
        "replace-nodes",
        "rolling-update",
        "check",
        "recover",
        "operation",
        "node-delete",
        "node-update",
        "node-recover",
        "attach",
        "detach",
    ]
    made = _clusters(s, kinds)
    loose = [_orphan(s, f"loose-{i}") for i in range(3)]
    policy = c.post(
        "/v1/policies",
        json={
            "policy": {
                "name": "dp",
                "spec": {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}},
            }
        },
    ).json()["policy"]["id"]
    attached = c.post(
        f"/v1/clusters/{made['detach']}/actions", json={"policy_attach": {"policy_id": policy}}
    )
    assert wait_for_action(c, _accepted(attached))["status"] == "SUCCEEDED"

    def act(kind: str, body: dict[str, Any]) -> tuple[str, str]:
        cluster = made[kind]
        return _accepted(c.post(f"/v1/clusters/{cluster}/actions", json=body)), cluster

    started: dict[str, tuple[str, str | None]] = {}
    started["scale-out"] = act("scale-out", {"scale_out": {"count": 4}})
    started["scale-in"] = act("scale-in", {"scale_in": {"count": 2}})
    started["resize"] = act(
        "resize", {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 7}}
    )
    victims = [n["id"] for n in _members(c, made["del-nodes"])[:2]]
    started["del-nodes"] = act(
        "del-nodes", {"del_nodes": {"nodes": victims, "destroy_after_deletion": True}}
    )
    started["add-nodes"] = act("add-nodes", {"add_nodes": {"nodes": loose[:2]}})
    old = _members(c, made["replace-nodes"])[0]["id"]
    started["replace-nodes"] = act("replace-nodes", {"replace_nodes": {"nodes": {old: loose[2]}}})
    r = c.patch(
        f"/v1/clusters/{made['rolling-update']}", json={"cluster": {"profile_id": s.other_profile}}
    )
    started["rolling-update"] = (_accepted(r), made["rolling-update"])
    started["check"] = act("check", {"check": {}})
    started["recover"] = act("recover", {"recover": {"operation": "RECREATE"}})
    r = c.post(f"/v1/clusters/{made['operation']}/ops", json={"reboot": {}})
    started["operation"] = (_accepted(r), made["operation"])
    node = _members(c, made["node-delete"])[0]["id"]
    started["node-delete"] = (_accepted(c.delete(f"/v1/nodes/{node}")), made["node-delete"])
    node = _members(c, made["node-update"])[0]["id"]
    r = c.patch(f"/v1/nodes/{node}", json={"node": {"profile_id": s.other_profile}})
    started["node-update"] = (_accepted(r), made["node-update"])
    node = _members(c, made["node-recover"])[0]["id"]
    r = c.post(f"/v1/nodes/{node}/actions", json={"recover": {"operation": "RECREATE"}})
    started["node-recover"] = (_accepted(r), made["node-recover"])
    started["attach"] = act("attach", {"policy_attach": {"policy_id": policy}})
    started["detach"] = act("detach", {"policy_detach": {"policy_id": policy}})
    r = c.post("/v1/nodes", json={"node": {"name": "lone", "profile_id": s.profile}})
    started["node-create"] = (_accepted(r), None)
    body = {"name": "fresh", "profile_id": s.profile, "desired_capacity": 4}
    r = c.post("/v1/clusters", json={"cluster": body})
    started["cluster-create"] = (_accepted(r), str(r.json()["cluster"]["id"]))
    return started


def _cancel_when_running(
    c: httpx.Client, actions: dict[str, tuple[str, str | None]]
) -> dict[str, str]:
    """Cancel each action once it runs (or note that it ended first); name -> its status then."""
    seen: dict[str, str] = {}
    deadline = time.monotonic() + 60
    while len(seen) < len(actions) and time.monotonic() < deadline:
        for name, (action, _) in actions.items():
            if name in seen:
                continue
            status = c.get(f"/v1/actions/{action}").json()["action"]["status"]
            if status in FINAL:
                seen[name] = f"ended {status}"
            elif status == "RUNNING":
                r = c.patch(f"/v1/actions/{action}", json={"action": {"status": "CANCELLED"}})
                assert r.status_code in (202, 409), r.text
                seen[name] = "cancelled" if r.status_code == 202 else "ended first"
        time.sleep(0.05)
    return seen


def _verify(s: Server, actions: dict[str, tuple[str, str | None]]) -> None:
    c = s.client
    problems: list[str] = []
    for name, (action_id, cluster) in actions.items():
        action = wait_for_action(c, action_id, timeout=120)
        if action["status"] not in ("CANCELLED", "SUCCEEDED"):
            problems.append(f"{name}: action {action['status']} {action['status_reason']}")
        if cluster is None:
            continue
        r = c.get(f"/v1/clusters/{cluster}")
        found = r.json()["cluster"]
        members = _members(c, cluster)
        if found["status"] not in SETTLED:
            problems.append(f"{name}: cluster {found['status']} {found['status_reason']}")
        if found["desired_capacity"] != len(members):
            problems.append(f"{name}: desired {found['desired_capacity']}, {len(members)} members")
        everyone_active = all(m["status"] == "ACTIVE" for m in members)
        if (found["status"] == "ACTIVE") != everyone_active:
            problems.append(
                f"{name}: cluster {found['status']} with members {[m['status'] for m in members]}"
            )
    actions_now = c.get("/v1/actions", params={"limit": 1000}).json()["actions"]
    problems += [
        f"open {a['action']} {a['status']}" for a in actions_now if a["status"] not in FINAL
    ]
    nodes = c.get("/v1/nodes", params={"limit": 1000}).json()["nodes"]
    problems += [
        f"node {n['name']} {n['status']} {n['status_reason']}"
        for n in nodes
        if n["status"] not in ("ACTIVE", "ERROR")
    ]
    problems += [f"node {n['name']} without resource" for n in nodes if not n["physical_id"]]
    database = Database(s.db_url)
    try:
        with database.read() as session:
            problems += [f"node lock {n}" for n in session.scalars(select(NodeLockRow.node_id))]
            problems += [
                f"cluster lock {n}" for n in session.scalars(select(ClusterLockRow.cluster_id))
            ]
    finally:
        database.dispose()
    servers = SimDriver(state_file=s.herd.data_dir / "sim-servers.sqlite").discover()
    rows = {n["id"]: n["physical_id"] for n in nodes if n["physical_id"]}
    held = {k: v.physical_id for k, v in servers.items()}
    problems += [f"orphan server of {k}" for k in held.keys() - rows.keys()]
    problems += [f"row {k} without server" for k in rows.keys() - held.keys()]
    assert not problems, "\n".join(problems)


def test_cancelling_any_action_leaves_no_debris(server: Server) -> None:
    actions = _start(server)
    seen = _cancel_when_running(server.client, actions)
    print("\nCANCEL MATRIX", seen)
    assert sum(1 for v in seen.values() if v == "cancelled") >= 8, seen
    _verify(server, actions)
