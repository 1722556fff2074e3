"""What the crash and cancel matrices share: the server, the setups and the checks after a round.

Both matrices (``test_crash_matrix.py``, ``test_cancel_matrix.py``) start one action of every
type herd has at once, each on its own cluster or node, on a ``herd serve`` with simulated
servers kept in a file (``HERD_SIM_SHARED_STATE``) so the test compares them with the node rows.
Slow driver calls (the sim profile's ``create_latency``/``delete_latency``) hold most actions
in flight; the others are held by the test-only server ``tests.e2e.holding_serve``. The server
fixture is ``matrix_server`` (tests/e2e/conftest.py), one per module and database flavour.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

import httpx
from sqlalchemy import select
from tests.e2e.server import HERD, HerdServer
from tests.waiting import FINAL, wait_for_action
from tests.webhook_receiver import Receiver

from herd.drivers.sim import SimDriver
from herd.engine.actions import handler_table
from herd.engine.nodeops import NodeOperations
from herd.store.database import Database
from herd.store.models import ClusterLockRow, NodeLockRow
from herd.types import ActionName

V = {"OpenStack-API-Version": "clustering 1.14"}

#: Action types no engine ever has in flight, and why (the matrices cover every other one).
NEVER_IN_FLIGHT: dict[ActionName, str] = {
    ActionName.PROFILE_DELETE: "the API deletes a profile in its request; no action is made",
    ActionName.POLICY_DELETE: "the API deletes a policy in its request; no action is made",
    ActionName.NODE_JOIN: (
        "CLUSTER_REPLACE_NODES swaps members in one transaction; NODE_JOIN names its events only"
    ),
}


def handled_types() -> set[ActionName]:
    """The action types an engine has a handler for (children run in their parent's)."""
    with ThreadPoolExecutor(1) as pool:
        # the handlers only keep what they are given: no engine is needed to list them
        return set(handler_table(cast(NodeOperations, None), pool))


#: the engine's settings on a matrix server: every action of a round runs at once, and a
#: purge may clear a deletion at once
SERVER_ENV = {
    "HERD_SIM_SHARED_STATE": "1",
    "HERD_ENGINE_WORKERS": "64",
    "HERD_DELETION_STUCK_AFTER": "0",
}


def holding_command(held: set[ActionName], seconds: float, when: str) -> list[str]:
    """``tests.e2e.holding_serve`` holding ``held`` for ``seconds`` ``before``/``after`` work."""
    command = [sys.executable, "-m", "tests.e2e.holding_serve"]
    command += [part for name in sorted(held) for part in ("--hold", str(name))]
    return [*command, "--hold-seconds", str(seconds), "--hold-when", when]


PLAIN_SERVE = [HERD, "serve"]


@dataclass
class MatrixServer:
    herd: HerdServer
    db_url: str
    client: httpx.Client
    hooks: Receiver

    def profile(self, name: str, properties: dict[str, Any]) -> str:
        spec = {"type": "herd.sim", "version": "1.0", "properties": properties}
        r = self.client.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}})
        assert r.status_code == 201, r.text
        return str(r.json()["profile"]["id"])

    def policy(self, name: str, spec: dict[str, Any]) -> str:
        r = self.client.post("/v1/policies", json={"policy": {"name": name, "spec": spec}})
        assert r.status_code == 201, r.text
        return str(r.json()["policy"]["id"])

    def clusters(self, names: list[str], profile: str, size: int) -> dict[str, str]:
        """Clusters of ``size`` members, created at the same time; name -> id."""
        started = {}
        for name in names:
            body = {"name": name, "profile_id": profile, "desired_capacity": size}
            r = self.client.post("/v1/clusters", json={"cluster": body})
            started[name] = (str(r.json()["cluster"]["id"]), accepted(r))
        for cluster, action in started.values():
            done = wait_for_action(self.client, action, timeout=120)
            assert done["status"] == "SUCCEEDED", (cluster, done["status_reason"])
        return {name: cluster for name, (cluster, _) in started.items()}

    def orphan(self, name: str, profile: str) -> str:
        """A node of no cluster, created and ACTIVE."""
        r = self.client.post("/v1/nodes", json={"node": {"name": name, "profile_id": profile}})
        node = str(r.json()["node"]["id"])
        assert wait_for_action(self.client, accepted(r), timeout=60)["status"] == "SUCCEEDED"
        return node

    def act(self, cluster: str, body: dict[str, Any]) -> str:
        return accepted(self.client.post(f"/v1/clusters/{cluster}/actions", json=body))

    def attach(self, cluster: str, policy: str) -> None:
        done = wait_for_action(
            self.client, self.act(cluster, {"policy_attach": {"policy_id": policy}})
        )
        assert done["status"] == "SUCCEEDED", done["status_reason"]

    def members(self, cluster: str) -> list[dict[str, Any]]:
        r = self.client.get("/v1/nodes", params={"cluster_id": cluster, "limit": 1000})
        return sorted(r.json()["nodes"], key=lambda n: n["index"])

    def node(self, node_id: str) -> dict[str, Any] | None:
        r = self.client.get(f"/v1/nodes/{node_id}")
        return r.json()["node"] if r.status_code == 200 else None

    def break_member(self, node_id: str) -> None:
        """Its simulated server fails its checks, and a NODE_CHECK marks it CHECK_FAILED."""
        node = self.node(node_id)
        assert node is not None
        assert self.sim().break_node(node["physical_id"], "broken by the test")
        r = self.client.post(f"/v1/nodes/{node_id}/actions", json={"check": {}})
        assert wait_for_action(self.client, accepted(r))["status"] == "SUCCEEDED"
        found = self.node(node_id)
        assert found is not None and found["health"] == "CHECK_FAILED", found

    def sim(self) -> SimDriver:
        return SimDriver(state_file=self.herd.data_dir / "sim-servers.sqlite")

    def action_names(self) -> set[str]:
        """Every action type made so far, children included."""
        actions = self.client.get("/v1/actions", params={"limit": 10000}).json()["actions"]
        return {a["action"] for a in actions}

    def statuses(self) -> dict[str, str]:
        """Every action's status, in one request (a round has dozens to watch)."""
        actions = self.client.get("/v1/actions", params={"limit": 10000}).json()["actions"]
        return {a["id"]: a["status"] for a in actions}

    def settled(self) -> bool:
        """No action is open (READY, RUNNING, waiting)."""
        actions = self.client.get("/v1/actions", params={"limit": 10000}).json()["actions"]
        return all(a["status"] in FINAL for a in actions)

    def debris(self, nodes: list[dict[str, Any]]) -> list[str]:
        """Open actions, held locks, and simulated servers that differ from the node rows."""
        actions = self.client.get("/v1/actions", params={"limit": 10000}).json()["actions"]
        problems = [
            f"open {a['action']} {a['status']} {a['status_reason']}"
            for a in actions
            if a["status"] not in FINAL
        ]
        database = Database(self.db_url)
        try:
            with database.read() as session:
                problems += [
                    f"node lock {lock.node_id} held by {self.told(lock.action_id)}"
                    for lock in session.scalars(select(NodeLockRow))
                ]
                problems += [
                    f"cluster lock {c}" for c in session.scalars(select(ClusterLockRow.cluster_id))
                ]
        finally:
            database.dispose()
        held = {k: v.physical_id for k, v in self.sim().discover().items()}
        rows = {n["id"]: n["physical_id"] for n in nodes if n["physical_id"]}
        problems += [f"orphan server of {k}" for k in held.keys() - rows.keys()]
        problems += [f"node {k} without its server" for k in rows.keys() - held.keys()]
        problems += [
            f"node {k} has server {rows[k]}, the driver {held[k]}"
            for k in rows.keys() & held.keys()
            if rows[k] != held[k]
        ]
        problems += [f"node {n['name']} without resource" for n in nodes if not n["physical_id"]]
        return problems

    def told(self, action_id: str) -> str:
        a = self.client.get(f"/v1/actions/{action_id}").json().get("action") or {}
        return f"{a.get('action')} {a.get('status')} {a.get('status_reason')} ({action_id[:8]})"

    def story(self, target: str) -> list[str]:
        """The actions on ``target`` and their ends, to say what happened when a check fails."""
        actions = self.client.get("/v1/actions", params={"target": target, "limit": 1000})
        return [
            f"{a['action']} {a['status']} {a['status_reason']}"
            for a in sorted(actions.json()["actions"], key=lambda a: a["created_at"] or "")
        ]

    def all_nodes(self) -> list[dict[str, Any]]:
        nodes: list[dict[str, Any]] = self.client.get("/v1/nodes", params={"limit": 10000}).json()[
            "nodes"
        ]
        return nodes


def accepted(r: httpx.Response) -> str:
    """The action id of a 202 (its ``Location``, or the body's ``action``)."""
    assert r.status_code == 202, r.text
    if "Location" in r.headers:
        return r.headers["Location"].rsplit("/", 1)[-1]
    return str(r.json()["action"])


def deletion_policy(hooks_url: str | None, timeout: float = 0) -> dict[str, Any]:
    """A deletion policy that releases (not destroys) its victims, with a webhook hook."""
    properties: dict[str, Any] = {"destroy_after_deletion": False}
    if hooks_url:
        properties["hooks"] = {"type": "webhook", "params": {"url": hooks_url}, "timeout": timeout}
    return {"type": "senlin.policy.deletion", "version": "1.1", "properties": properties}


def receiver_url(client: httpx.Client, cluster: str, action: str, params: dict[str, Any]) -> str:
    body: dict[str, Any] = {"name": f"r-{cluster[:8]}", "type": "webhook", "cluster_id": cluster}
    body |= {"action": action, "params": params}
    r = client.post("/v1/receivers", json={"receiver": body})
    assert r.status_code == 201, r.text
    return str(r.json()["receiver"]["channel"]["alarm_url"])
