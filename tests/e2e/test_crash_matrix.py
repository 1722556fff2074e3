"""kill -9 of ``herd serve`` with an action of every type in flight; the restart finishes them all.

One ``herd serve`` per database flavour (SQLite, then the suite's PostgreSQL; the
``matrix_server`` fixture, tests/e2e/matrix.py). Each round starts one action of every
kind in ``KINDS`` at once, each on its own cluster or node: together they are every
action type of ``herd.types.ActionName`` that an engine can have in flight
(``test_the_matrix_covers_every_action_type`` fails for a new type without a kind).
Slow simulated driver calls hold most of them; the others finish their work and are held
before their end is written (``tests.e2e.holding_serve``, ``HOLD_WHEN = "after"``), so the
resumed run goes over what the first one did. Once every one of them is in flight the
server is killed with SIGKILL and a plain ``herd serve`` is started on the same data. Then:

* every action ends SUCCEEDED, and nothing is left open (no action READY or RUNNING);
* no cluster or node lock is held;
* every node is in a final state (ACTIVE; ERROR only for the members a purge made
  orphans in the middle of their deletion), every cluster has the desired capacity asked
  for and that many members, and each kind's own result holds (a policy attached, a
  member replaced, a node left);
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
from tests.e2e.holding_serve import HOLD_SWITCH
from tests.e2e.matrix import (
    NEVER_IN_FLIGHT,
    PLAIN_SERVE,
    MatrixServer,
    accepted,
    deletion_policy,
    handled_types,
    receiver_url,
)
from tests.waiting import FINAL, wait_for, wait_for_action

from herd.types import ActionName

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

A = ActionName
CREATE_LATENCY = 6.0  # seconds per simulated create: the kill lands inside them
DELETE_LATENCY = 8.0  # and per delete (a round takes seconds to start on a busy machine)
SIZE = 3  # members of each cluster before its action
HOOK_TIMEOUT = 600  # a lifecycle hook waits for the test's answer, after the restart

#: each kind of the round, and the action types it has in flight at the kill
KINDS: dict[str, tuple[ActionName, ...]] = {
    "node delete": (A.NODE_DELETE,),
    "node create": (A.NODE_CREATE,),
    "node update": (A.NODE_UPDATE,),
    "node recover": (A.NODE_RECOVER,),
    "node check": (A.NODE_CHECK,),
    "node operation": (A.NODE_OPERATION,),
    "scale out": (A.CLUSTER_SCALE_OUT,),
    "scale in": (A.CLUSTER_SCALE_IN,),
    "resize": (A.CLUSTER_RESIZE,),
    "del nodes": (A.CLUSTER_DEL_NODES,),
    "node leave": (A.CLUSTER_DEL_NODES, A.NODE_LEAVE),
    "add nodes": (A.CLUSTER_ADD_NODES,),
    "replace nodes": (A.CLUSTER_REPLACE_NODES,),
    "replace unhealthy": (A.CLUSTER_REPLACE_UNHEALTHY,),
    "cluster check": (A.CLUSTER_CHECK,),
    "cluster recover": (A.CLUSTER_RECOVER,),
    "cluster update": (A.CLUSTER_UPDATE,),
    "attach": (A.CLUSTER_ATTACH_POLICY,),
    "detach": (A.CLUSTER_DETACH_POLICY,),
    "update policy": (A.CLUSTER_UPDATE_POLICY,),
    "cluster delete": (A.CLUSTER_DELETE,),
    "operation": (A.CLUSTER_OPERATION,),
    "cluster create": (A.CLUSTER_CREATE,),
    "receiver": (A.CLUSTER_SCALE_OUT,),
    "purge": (A.DELETION_PURGE,),
}
#: what the test-only server holds (the actions whose work is a few writes), after their work
HELD = {
    A.NODE_CHECK,
    A.CLUSTER_ADD_NODES,
    A.CLUSTER_REPLACE_NODES,
    A.CLUSTER_CHECK,
    A.CLUSTER_ATTACH_POLICY,
    A.CLUSTER_DETACH_POLICY,
    A.CLUSTER_UPDATE_POLICY,
    A.DELETION_PURGE,
}
HOLD_SECONDS = 300.0  # longer than any round takes to start: the kill lands in the hold
HOLD_WHEN = "after"


@dataclass
class Case:
    """One action in flight at the kill, and what its cluster must look like afterwards."""

    name: str
    action: str = ""
    cluster: str | None = None
    desired: int | None = None  # the desired capacity asked for (None: the cluster is gone)
    check: Callable[[MatrixServer], None] | None = None
    may_end_first: bool = False  # an action on quick simulated calls may end before the kill
    errors_allowed: set[str] = field(default_factory=set)  # nodes that may end ERROR


@dataclass
class Round:
    s: MatrixServer
    tag: str
    profile: str = ""  # slow creates
    slow: str = ""  # slow creates and deletes
    policy: str = ""
    cases: list[Case] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@pytest.fixture(scope="module")
def server(matrix_server: MatrixServer) -> Iterator[MatrixServer]:
    yield matrix_server


def test_the_matrix_covers_every_action_type() -> None:
    covered = {name for names in KINDS.values() for name in names}
    assert covered.isdisjoint(NEVER_IN_FLIGHT)
    assert covered | NEVER_IN_FLIGHT.keys() == set(ActionName), "a new action type needs a kind"
    assert not NEVER_IN_FLIGHT.keys() & handled_types(), "an engine runs it: give it a kind"


def _start(r: Round) -> list[Case]:
    """Set every case up (unheld), then start every action at once (held)."""
    s, tag = r.s, r.tag
    r.profile = s.profile(f"{tag}-sim", {"create_latency": CREATE_LATENCY})
    r.slow = s.profile(
        f"{tag}-sim2", {"create_latency": CREATE_LATENCY, "delete_latency": DELETE_LATENCY}
    )
    r.policy = s.policy(f"{tag}-dp", deletion_policy(None))
    needs_cluster = [k for k in KINDS if not k.startswith(("node create", "cluster create"))]
    made = s.clusters([f"{tag}-{k.replace(' ', '-')}" for k in needs_cluster], r.slow, SIZE)
    on = {k: made[f"{tag}-{k.replace(' ', '-')}"] for k in needs_cluster}
    loose = [s.orphan(f"{tag}-loose-{i}", r.profile) for i in range(3)]
    for kind in ("replace unhealthy", "cluster recover"):
        s.break_member(s.members(on[kind])[0]["id"])
    for kind in ("detach", "update policy"):
        s.attach(on[kind], r.policy)
    hooked = s.policy(f"{tag}-hooked", deletion_policy(s.hooks.url, HOOK_TIMEOUT))
    s.attach(on["node leave"], hooked)
    (s.herd.data_dir / HOLD_SWITCH).touch()
    # The kinds held by slow driver calls start last: they must still be in flight at the kill.
    order = sorted(KINDS, key=lambda kind: not (set(KINDS[kind]) & HELD or kind == "purge"))
    cases = [_case(r, kind, on.get(kind), loose) for kind in order]
    assert sorted(case.name for case in cases) == sorted(KINDS)
    return cases


def _case(r: Round, kind: str, cluster: str | None, loose: list[str]) -> Case:
    s, c, tag = r.s, r.s.client, r.tag
    members = s.members(cluster) if cluster else []
    first = members[0] if members else {}
    node_url = f"/v1/nodes/{first.get('id')}"
    if kind == "node delete":
        victim = first["id"]
        return Case(kind, accepted(c.delete(node_url)), cluster, SIZE - 1, _gone(victim))
    if kind == "node create":
        answer = c.post(
            "/v1/nodes", json={"node": {"name": f"{tag}-lone", "profile_id": r.profile}}
        )
        lone = str(answer.json()["node"]["id"])
        return Case(kind, accepted(answer), None, None, _active(lone))
    if kind == "node update":
        body = {"node": {"name": f"{tag}-renamed", "profile_id": r.profile}}
        check = _renamed(first["id"], f"{tag}-renamed", r.profile)
        return Case(kind, accepted(c.patch(node_url, json=body)), cluster, SIZE, check)
    if kind == "node recover":
        body = {"recover": {"operation": "RECREATE"}}
        answer = c.post(f"{node_url}/actions", json=body)
        return Case(kind, accepted(answer), cluster, SIZE, _recreated(first))
    if kind == "node check":
        return Case(
            kind, accepted(c.post(f"{node_url}/actions", json={"check": {}})), cluster, SIZE
        )
    if kind == "node operation":
        answer = c.post(f"{node_url}/ops", json={"reboot": {}})
        return Case(kind, accepted(answer), cluster, SIZE, may_end_first=True)
    if kind == "cluster create":
        body = {"name": f"{tag}-create", "profile_id": r.slow, "desired_capacity": SIZE}
        answer = c.post("/v1/clusters", json={"cluster": body})
        return Case(kind, accepted(answer), str(answer.json()["cluster"]["id"]), SIZE)
    assert cluster is not None
    changes = {
        "scale out": ({"scale_out": {"count": 3}}, SIZE + 3),
        "scale in": ({"scale_in": {"count": 2}}, SIZE - 2),
        "resize": ({"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5}}, 5),
        "cluster check": ({"check": {}}, SIZE),
        "cluster recover": ({"recover": {"operation": "RECREATE"}}, SIZE),
        "replace unhealthy": ({"replace_unhealthy": {}}, SIZE),
        "attach": ({"policy_attach": {"policy_id": r.policy}}, SIZE),
        "detach": ({"policy_detach": {"policy_id": r.policy}}, SIZE),
        "update policy": ({"policy_update": {"policy_id": r.policy, "enabled": False}}, SIZE),
        "add nodes": ({"add_nodes": {"nodes": loose[:2]}}, SIZE + 2),
        "replace nodes": ({"replace_nodes": {"nodes": {first.get("id"): loose[2]}}}, SIZE),
    }
    checks: dict[str, Callable[[MatrixServer], None]] = {
        "cluster recover": _recreated(first),
        "replace unhealthy": _replaced(cluster, first),
        "attach": _bound(cluster, r.policy, True),
        "detach": _bound(cluster, r.policy, None),
        "update policy": _bound(cluster, r.policy, False),
        "add nodes": _members_include(cluster, loose[:2]),
        "replace nodes": _swapped(cluster, first.get("id", ""), loose[2]),
    }
    if kind in changes:
        body, desired = changes[kind]
        return Case(kind, s.act(cluster, body), cluster, desired, checks.get(kind))
    if kind in ("del nodes", "node leave"):
        gone = [n["id"] for n in members[: 2 if kind == "del nodes" else 1]]
        body = {"del_nodes": {"nodes": gone, "destroy_after_deletion": True}}
        check = None if kind == "del nodes" else _left(gone[0])
        return Case(kind, s.act(cluster, body), cluster, SIZE - len(gone), check)
    if kind == "cluster delete":
        return Case(kind, accepted(c.delete(f"/v1/clusters/{cluster}")), cluster, None)
    if kind == "operation":
        answer = c.post(f"/v1/clusters/{cluster}/ops", json={"reboot": {}})
        return Case(kind, accepted(answer), cluster, SIZE, may_end_first=True)
    if kind == "cluster update":
        answer = c.patch(f"/v1/clusters/{cluster}", json={"cluster": {"profile_id": r.profile}})
        return Case(kind, accepted(answer), cluster, SIZE, _profile_of(cluster, r.profile))
    if kind == "receiver":
        url = receiver_url(c, cluster, "CLUSTER_SCALE_OUT", {"count": 1})
        answer = httpx.post(url, timeout=30, trust_env=False)
        return Case(kind, accepted(answer), cluster, SIZE + 1)
    assert kind == "purge", kind
    deleting = accepted(c.delete(f"/v1/clusters/{cluster}"))
    wait_for(lambda: _status(c, deleting) == "RUNNING", timeout=60)
    answer = c.delete(f"/v1/deletions/cluster/{cluster}", params={"force": "true"})
    names = {n["id"] for n in members}
    return Case(kind, accepted(answer), cluster, None, errors_allowed=names)


def _status(client: httpx.Client, action: str) -> str:
    return str(client.get(f"/v1/actions/{action}").json()["action"]["status"])


def _gone(node_id: str) -> Callable[[MatrixServer], None]:
    return lambda s: _assert(s.node(node_id) is None, node_id)


def _active(node_id: str) -> Callable[[MatrixServer], None]:
    def check(s: MatrixServer) -> None:
        node = s.node(node_id)
        assert node is not None and node["status"] == "ACTIVE", node

    return check


def _renamed(node_id: str, name: str, profile: str) -> Callable[[MatrixServer], None]:
    def check(s: MatrixServer) -> None:
        node = s.node(node_id)
        assert node is not None and (node["name"], node["profile_id"]) == (name, profile), node

    return check


def _recreated(before: dict[str, Any]) -> Callable[[MatrixServer], None]:
    def check(s: MatrixServer) -> None:
        node = s.node(before["id"])
        assert node is not None and node["physical_id"] != before["physical_id"], node

    return check


def _replaced(cluster: str, before: dict[str, Any]) -> Callable[[MatrixServer], None]:
    """A new member under the old one's name and index, on a new server; the old one gone."""

    def check(s: MatrixServer) -> None:
        assert s.node(before["id"]) is None
        (now,) = [n for n in s.members(cluster) if n["index"] == before["index"]]
        assert now["name"] == before["name"] and now["physical_id"] != before["physical_id"]

    return check


def _bound(cluster: str, policy: str, enabled: bool | None) -> Callable[[MatrixServer], None]:
    def check(s: MatrixServer) -> None:
        r = s.client.get(f"/v1/clusters/{cluster}/policies/{policy}")
        if enabled is None:
            assert r.status_code == 404, r.text
        else:
            assert r.json()["cluster_policy"]["enabled"] is enabled, r.text

    return check


def _members_include(cluster: str, nodes: list[str]) -> Callable[[MatrixServer], None]:
    return lambda s: _assert(set(nodes) <= {n["id"] for n in s.members(cluster)}, nodes)


def _swapped(cluster: str, old: str, new: str) -> Callable[[MatrixServer], None]:
    def check(s: MatrixServer) -> None:
        ids = {n["id"] for n in s.members(cluster)}
        assert new in ids and old not in ids, ids
        orphan = s.node(old)
        assert orphan is not None and not orphan["cluster_id"], orphan

    return check


def _left(node_id: str) -> Callable[[MatrixServer], None]:
    def check(s: MatrixServer) -> None:
        node = s.node(node_id)
        assert node is not None and not node["cluster_id"] and node["status"] == "ACTIVE", node

    return check


def _profile_of(cluster: str, profile: str) -> Callable[[MatrixServer], None]:
    def check(s: MatrixServer) -> None:
        found = s.client.get(f"/v1/clusters/{cluster}").json()["cluster"]
        assert found["profile_id"] == profile
        assert {n["profile_id"] for n in s.members(cluster)} == {profile}

    return check


def _assert(ok: bool, what: Any) -> None:
    assert ok, what


def _in_flight(client: httpx.Client, cases: list[Case]) -> dict[str, str] | None:
    """Each case's status once every one has started (an operation may have ended)."""
    states = {case.name: _status(client, case.action) for case in cases}
    started = all(status in ("RUNNING", *FINAL) for status in states.values())
    return states if started else None


def _kill_and_restart(s: MatrixServer, cases: list[Case]) -> None:
    states = wait_for(lambda: _in_flight(s.client, cases), timeout=120)
    time.sleep(0.3)  # into the driver calls, which take seconds
    s.herd.kill9()
    ended = [c.name for c in cases if states[c.name] in FINAL and not c.may_end_first]
    assert ended == [], f"ended before the kill: {ended}"
    s.herd.command = PLAIN_SERVE  # the resumed runs are not held again
    s.herd.start()


def _complete_hooks(s: MatrixServer, cases: list[Case]) -> None:
    """The lifecycle hook of the node leaving waits for an answer: CONTINUE, after the restart."""
    (case,) = [c for c in cases if c.name == "node leave"]
    assert case.cluster is not None
    message = wait_for(lambda: s.hooks.messages, timeout=60)[0]
    body = {"complete_lifecycle": {"lifecycle_action_token": message["lifecycle_action_token"]}}
    answer = s.client.post(f"/v1/clusters/{case.cluster}/actions", json=body)
    assert answer.status_code == 202, answer.text


def _verify(s: MatrixServer, cases: list[Case]) -> None:
    c = s.client
    problems: list[str] = []
    for case in cases:
        action = wait_for_action(c, case.action, timeout=180)
        if action["status"] != "SUCCEEDED":
            problems.append(f"{case.name}: {action['status']} {action['status_reason']}")
    for case in cases:
        if case.cluster is not None and case.desired is None:
            if c.get(f"/v1/clusters/{case.cluster}").status_code != 404:
                problems.append(f"{case.name}: the cluster is still there")
        elif case.cluster is not None:
            cluster = c.get(f"/v1/clusters/{case.cluster}").json()["cluster"]
            members = s.members(case.cluster)
            if (cluster["desired_capacity"], len(members)) != (case.desired, case.desired):
                problems.append(
                    f"{case.name}: desired {cluster['desired_capacity']} with {len(members)} "
                    f"members, {case.desired} asked for"
                )
        if case.check is not None:
            try:
                case.check(s)
            except AssertionError as failed:
                problems.append(f"{case.name}: {failed}")
    allowed = {node for case in cases for node in case.errors_allowed}
    nodes = s.all_nodes()
    problems += [
        f"node {n['name']} {n['status']} {n['status_reason']}"
        for n in nodes
        if n["status"] != "ACTIVE" and not (n["id"] in allowed and n["status"] == "ERROR")
    ]
    problems += s.debris(nodes)
    missing = {name for case in cases for name in KINDS[case.name]} - s.action_names()
    problems += [f"no {name} action was made" for name in sorted(missing)]
    assert not problems, "\n".join(problems)


def test_every_action_survives_a_kill_9(server: MatrixServer, tmp_path: Path) -> None:
    round_ = Round(server, "a")
    cases = _start(round_)
    _kill_and_restart(server, cases)
    _complete_hooks(server, cases)
    _verify(server, cases)
