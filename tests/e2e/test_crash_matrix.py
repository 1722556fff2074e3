"""kill -9 of ``herd serve`` with one action of each kind in flight; the restart finishes them all.

One ``herd serve`` per database flavour (SQLite, then the suite's PostgreSQL), with simulated
servers kept in a file (``HERD_SIM_SHARED_STATE``) so the restarted process sees the resources
the killed one made. Each round starts one action of every kind, each on its own cluster or
node, waits until every one of them is running (their driver calls take seconds), kills
the server with SIGKILL and starts it again (node delete, create, update and recover; cluster
create, scale-out, scale-in, resize, del-nodes, delete and an operation). Then:

* every action ends, and ends SUCCEEDED (nothing left READY or RUNNING for ever);
* no cluster or node lock is held;
* every node is in a final state (ACTIVE), and every cluster has the desired capacity asked for
  and that many members;
* the simulated servers are exactly the node rows' (no orphan, no row without its server).

A node delete resumed to "Failed in locking node" for good before (issue 24).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from tests.conftest import PgServer, free_port
from tests.e2e.server import HerdServer
from tests.waiting import FINAL, wait_for, wait_for_action

from herd.drivers.sim import SimDriver
from herd.store.database import Database
from herd.store.models import ClusterLockRow, NodeLockRow

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(400)]

V = {"OpenStack-API-Version": "clustering 1.14"}
CREATE_LATENCY = 2.0  # seconds per simulated create: the kill lands inside them
DELETE_LATENCY = 3.0  # and per delete
SIZE = 3  # members of each cluster before its action


@dataclass
class Server:
    herd: HerdServer
    db_url: str
    client: httpx.Client
    profile: str = ""
    other_profile: str = ""


@dataclass
class Case:
    """One action in flight at the kill, and what its cluster must look like afterwards."""

    name: str
    action: str = ""
    cluster: str | None = None
    desired: int | None = None  # the desired capacity asked for (None: the cluster is gone)
    check: Callable[[httpx.Client], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    tmp: Path = tmp_path_factory.mktemp("crash-matrix")
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
        found = Server(herd, db_url, client)
        found.profile = _profile(client, "sim", {"create_latency": CREATE_LATENCY})
        found.other_profile = _profile(
            client, "sim2", {"create_latency": CREATE_LATENCY, "delete_latency": DELETE_LATENCY}
        )
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
    return r.headers["Location"].rsplit("/", 1)[-1]


def _clusters(s: Server, names: list[str], size: int = SIZE) -> dict[str, str]:
    """Clusters of ``size`` members whose deletes are slow, created at the same time."""
    started = {}
    for name in names:
        body = {"name": name, "profile_id": s.other_profile, "desired_capacity": size}
        r = s.client.post("/v1/clusters", json={"cluster": body})
        started[name] = (str(r.json()["cluster"]["id"]), _accepted(r))
    for cluster, action in started.values():
        assert wait_for_action(s.client, action, timeout=120)["status"] == "SUCCEEDED", cluster
    return {name: cluster for name, (cluster, _) in started.items()}


def _members(client: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = client.get("/v1/nodes", params={"cluster_id": cluster}).json()[
        "nodes"
    ]
    return sorted(nodes, key=lambda n: n["index"])


def _cluster_action(s: Server, cluster: str, body: dict[str, Any]) -> str:
    return _accepted(s.client.post(f"/v1/clusters/{cluster}/actions", json=body))


def _node(client: httpx.Client, node_id: str) -> dict[str, Any] | None:
    r = client.get(f"/v1/nodes/{node_id}")
    return r.json()["node"] if r.status_code == 200 else None


def _start(s: Server, tag: str) -> list[Case]:
    """Set every case up, then start every action at once."""
    c = s.client
    kinds = [
        "node delete",
        "node update",
        "node recover",
        "scale out",
        "scale in",
        "resize",
        "del nodes",
        "cluster delete",
        "operation",
    ]
    made = _clusters(s, [f"{tag}-{kind.replace(' ', '-')}" for kind in kinds])
    setups = {kind: made[f"{tag}-{kind.replace(' ', '-')}"] for kind in kinds}
    cases: list[Case] = []
    body: dict[str, Any]
    changes: tuple[tuple[str, dict[str, Any], int], ...] = (
        ("scale out", {"scale_out": {"count": 3}}, SIZE + 3),
        ("scale in", {"scale_in": {"count": 2}}, SIZE - 2),
        ("resize", {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5}}, 5),
    )

    victim = _members(c, setups["node delete"])[0]["id"]
    cases.append(
        Case(
            "node delete",
            _accepted(c.delete(f"/v1/nodes/{victim}")),
            setups["node delete"],
            SIZE - 1,
            check=lambda cl: _gone(cl, victim),
        )
    )
    r = c.post("/v1/nodes", json={"node": {"name": f"{tag}-lone", "profile_id": s.profile}})
    lone = str(r.json()["node"]["id"])
    cases.append(Case("node create", _accepted(r), None, None, check=lambda cl: _active(cl, lone)))
    updated = _members(c, setups["node update"])[0]["id"]
    body = {"node": {"name": f"{tag}-renamed", "profile_id": s.profile}}
    cases.append(
        Case(
            "node update",
            _accepted(c.patch(f"/v1/nodes/{updated}", json=body)),
            setups["node update"],
            SIZE,
            check=lambda cl: _renamed(cl, updated, f"{tag}-renamed", s.profile),
        )
    )
    recovered = _members(c, setups["node recover"])[0]
    body = {"recover": {"operation": "RECREATE"}}
    cases.append(
        Case(
            "node recover",
            _accepted(c.post(f"/v1/nodes/{recovered['id']}/actions", json=body)),
            setups["node recover"],
            SIZE,
            check=lambda cl: _recreated(cl, recovered),
        )
    )
    for name, change, desired in changes:
        cases.append(Case(name, _cluster_action(s, setups[name], change), setups[name], desired))
    gone = [n["id"] for n in _members(c, setups["del nodes"])[:2]]
    body = {"del_nodes": {"nodes": gone, "destroy_after_deletion": True}}
    cases.append(
        Case("del nodes", _cluster_action(s, setups["del nodes"], body), setups["del nodes"], 1)
    )
    cases.append(
        Case(
            "cluster delete",
            _accepted(c.delete(f"/v1/clusters/{setups['cluster delete']}")),
            setups["cluster delete"],
            None,
        )
    )
    r = c.post(f"/v1/clusters/{setups['operation']}/ops", json={"reboot": {}})
    cases.append(Case("operation", _accepted(r), setups["operation"], SIZE))
    body = {"name": f"{tag}-create", "profile_id": s.other_profile, "desired_capacity": SIZE}
    r = c.post("/v1/clusters", json={"cluster": body})
    cases.append(Case("cluster create", _accepted(r), str(r.json()["cluster"]["id"]), SIZE))
    return cases


def _gone(client: httpx.Client, node_id: str) -> None:
    assert _node(client, node_id) is None


def _active(client: httpx.Client, node_id: str) -> None:
    node = _node(client, node_id)
    assert node is not None and node["status"] == "ACTIVE", node


def _renamed(client: httpx.Client, node_id: str, name: str, profile: str) -> None:
    node = _node(client, node_id)
    assert node is not None and (node["name"], node["profile_id"]) == (name, profile), node


def _recreated(client: httpx.Client, before: dict[str, Any]) -> None:
    node = _node(client, before["id"])
    assert node is not None and node["physical_id"] != before["physical_id"], node


def _running(client: httpx.Client, cases: list[Case]) -> bool:
    states = {c.name: client.get(f"/v1/actions/{c.action}").json()["action"] for c in cases}
    # Every one started (an operation on sim servers may even have ended already).
    return all(a["status"] in ("RUNNING", *FINAL) for a in states.values())


def _kill_and_restart(s: Server, cases: list[Case]) -> None:
    wait_for(lambda: _running(s.client, cases), timeout=60)
    time.sleep(0.3)  # into the driver calls, which take seconds
    s.herd.kill9()
    s.herd.start()


def _verify(s: Server, cases: list[Case]) -> None:
    c = s.client
    for case in cases:
        action = wait_for_action(c, case.action, timeout=120)
        assert action["status"] == "SUCCEEDED", (case.name, action["status_reason"])
    actions = c.get("/v1/actions", params={"limit": 1000}).json()["actions"]
    open_actions = [(a["action"], a["status"]) for a in actions if a["status"] not in FINAL]
    assert open_actions == []
    for case in cases:
        if case.cluster is not None and case.desired is None:
            assert c.get(f"/v1/clusters/{case.cluster}").status_code == 404, case.name
        elif case.cluster is not None:
            cluster = c.get(f"/v1/clusters/{case.cluster}").json()["cluster"]
            members = _members(c, case.cluster)
            assert cluster["desired_capacity"] == case.desired, case.name
            assert len(members) == case.desired, (case.name, members)
        if case.check is not None:
            case.check(c)
    nodes = c.get("/v1/nodes", params={"limit": 1000}).json()["nodes"]
    assert [n for n in nodes if n["status"] != "ACTIVE"] == []
    database = Database(s.db_url)
    try:
        with database.read() as session:
            assert session.scalars(select(NodeLockRow.node_id)).all() == []
            assert session.scalars(select(ClusterLockRow.cluster_id)).all() == []
    finally:
        database.dispose()
    servers = SimDriver(state_file=s.herd.data_dir / "sim-servers.sqlite").discover()
    assert {k: v.physical_id for k, v in servers.items()} == {
        n["id"]: n["physical_id"] for n in nodes
    }


def test_every_action_survives_a_kill_9(server: Server) -> None:
    cases = _start(server, "a")
    _kill_and_restart(server, cases)
    _verify(server, cases)
