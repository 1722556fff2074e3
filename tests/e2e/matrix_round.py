"""One round of the crash and cancel matrices: an action of every kind started at once.

``KINDS`` names each kind and the action types it has in flight; together they are every
type of ``herd.types.ActionName`` an engine can have in flight (``NEVER_IN_FLIGHT`` in
tests/e2e/matrix.py says why the others cannot be). :func:`start_round` sets every kind up
on its own cluster or node (unheld), switches the test-only server's holds on
(``tests.e2e.holding_serve``) and starts every action; each :class:`Case` says what a kind
leaves when its action succeeds (the crash matrix checks it after the restart).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import httpx
from tests.e2e.holding_serve import HOLD_SWITCH
from tests.e2e.matrix import MatrixServer, accepted, deletion_policy, receiver_url
from tests.waiting import wait_for

from herd.types import ActionName

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
    # "force means force": deletes that take their locks from a running action
    "forced node delete": (A.NODE_DELETE,),
    "forced cluster delete": (A.CLUSTER_DELETE,),
}
#: the types whose work is a few writes: the test-only server holds them in flight
QUICK = {
    A.NODE_CHECK,
    A.CLUSTER_ADD_NODES,
    A.CLUSTER_REPLACE_NODES,
    A.CLUSTER_CHECK,
    A.CLUSTER_ATTACH_POLICY,
    A.CLUSTER_DETACH_POLICY,
    A.CLUSTER_UPDATE_POLICY,
    A.DELETION_PURGE,
}


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


def start_round(r: Round, kinds: Collection[str] = KINDS) -> list[Case]:
    """Set every case of ``kinds`` up (unheld), then start every action at once (held)."""
    s, tag = r.s, r.tag
    r.profile = s.profile(f"{tag}-sim", {"create_latency": CREATE_LATENCY})
    r.slow = s.profile(
        f"{tag}-sim2", {"create_latency": CREATE_LATENCY, "delete_latency": DELETE_LATENCY}
    )
    r.policy = s.policy(f"{tag}-dp", deletion_policy(None))
    needs_cluster = [k for k in kinds if not k.startswith(("node create", "cluster create"))]
    made = s.clusters([f"{tag}-{k.replace(' ', '-')}" for k in needs_cluster], r.slow, SIZE)
    on = {k: made[f"{tag}-{k.replace(' ', '-')}"] for k in needs_cluster}
    loose = [s.orphan(f"{tag}-loose-{i}", r.profile) for i in range(3)]
    for kind in ("replace unhealthy", "cluster recover"):
        s.break_member(s.members(on[kind])[0]["id"])
    for kind in ("detach", "update policy"):
        s.attach(on[kind], r.policy)
    hooked = s.policy(f"{tag}-hooked", deletion_policy(s.hooks.url, HOOK_TIMEOUT))
    s.attach(on["node leave"], hooked)
    listed = {cluster: s.members(cluster) for cluster in on.values()}  # read before the round
    (s.herd.data_dir / HOLD_SWITCH).touch()
    order = [kind for kind in _order() if kind in kinds]
    cases = [_case(r, kind, on.get(kind), listed.get(on.get(kind, "")), loose) for kind in order]
    assert sorted(case.name for case in cases) == sorted(kinds)
    return cases


def _order() -> list[str]:
    """The kinds held by the server, and those whose set-up waits, start first; those on slow
    driver calls last, the shortest (one call on one node) at the very end: every one must
    still be in flight when the round has started, on a busy machine too."""

    def rank(kind: str) -> int:
        if set(KINDS[kind]) & QUICK or kind == "purge" or kind.startswith("forced"):
            return 0
        return 2 if kind.startswith("node") else 1

    return sorted(KINDS, key=rank)


def _case(
    r: Round, kind: str, cluster: str | None, listed: list[dict[str, Any]] | None, loose: list[str]
) -> Case:
    s, c, tag = r.s, r.s.client, r.tag
    body: dict[str, Any]
    check: Callable[[MatrixServer], None] | None
    members = listed or []
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
    if kind == "forced node delete":
        # a recovery holds the node (and its cluster, shared) when the forced delete comes
        body = {"recover": {"operation": "RECREATE"}}
        _running(c, accepted(c.post(f"{node_url}/actions", json=body)))
        answer = c.request("DELETE", node_url, json={"force": True})
        return Case(kind, accepted(answer), cluster, SIZE - 1, _gone(first["id"]))
    if kind == "forced cluster delete":
        assert cluster is not None
        _running(c, s.act(cluster, {"scale_out": {"count": 2}}))
        answer = c.request("DELETE", f"/v1/clusters/{cluster}", json={"force": True})
        return Case(kind, accepted(answer), cluster, None)
    if kind == "cluster create":
        body = {"name": f"{tag}-create", "profile_id": r.slow, "desired_capacity": SIZE}
        answer = c.post("/v1/clusters", json={"cluster": body})
        return Case(kind, accepted(answer), str(answer.json()["cluster"]["id"]), SIZE)
    assert cluster is not None
    changes: dict[str, tuple[dict[str, Any], int]] = {
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
    _running(c, deleting)
    answer = c.delete(f"/v1/deletions/cluster/{cluster}", params={"force": "true"})
    names = {n["id"] for n in members}
    return Case(kind, accepted(answer), cluster, None, errors_allowed=names)


def _running(client: httpx.Client, action: str) -> None:
    wait_for(lambda: status_of(client, action) == "RUNNING", timeout=60)


def status_of(client: httpx.Client, action: str) -> str:
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
