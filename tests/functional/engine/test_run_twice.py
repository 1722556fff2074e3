"""Every handler run a second time over the state its first run stored: no second side effect.

This is the rule of ``herd/engine/actions/__init__.py``: an engine that dies after a handler
acted and before the action's end was written has the action re-queued, and the handler runs
again from the top over the data, children and rows the first run left. Here each action runs
to its end, is put back to READY exactly as take-over does (status READY, no owner; its data,
durable steps and children kept), and runs again. The clusters, nodes, policy bindings and the
driver's resources must be as the first run left them (no second node, no second recovery, no
desired capacity changed twice), and the second run must end as the first did.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from tests.conftest import PgServer
from tests.functional.engine.harness import PROJECT, Harness, running_engine

from herd.store import nodes as node_store
from herd.store.models import ActionRow, BindingRow, ClusterRow, NodeRow
from herd.types import ActionName, ActionStatus, NodeStatus

DELETION = {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}}


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def harness(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Harness]:
    """One engine per database flavour for the whole module (each case makes its cluster)."""
    tmp: Path = tmp_path_factory.mktemp("twice")
    if request.param == "sqlite":
        with running_engine(tmp / "data", db_url=f"sqlite:///{tmp / 'herd.db'}") as found:
            yield found
        return
    server: PgServer = request.getfixturevalue("pg_server")
    name = server.create_database()
    try:
        with running_engine(tmp / "data", db_url=server.url_for(name)) as found:
            yield found
    finally:
        server.drop_database(name)


def _state(harness: Harness) -> dict[str, Any]:
    """Everything a second side effect would change."""
    with harness.db.read() as session:
        nodes = {
            n.id: (n.name, n.index, n.status, n.physical_id, n.cluster_id, n.profile_id, n.data)
            for n in session.scalars(select(NodeRow)).all()
        }
        clusters = {
            c.id: (c.desired_capacity, c.min_size, c.max_size, c.profile_id, c.status)
            for c in session.scalars(select(ClusterRow)).all()
        }
        bindings = sorted(
            (b.cluster_id, b.policy_id, b.enabled)
            for b in session.scalars(select(BindingRow)).all()
        )
    drivers = harness.engine.ctx.drivers
    resources = {
        node_id: (found.physical_id, found.data)
        for name in drivers.names()
        for node_id, found in drivers.get(name).discover().items()
    }
    return {"nodes": nodes, "clusters": clusters, "bindings": bindings, "resources": resources}


def _again(harness: Harness, action_id: str) -> ActionRow:
    """Put an ended action back as take-over does, and wait for its second end."""
    with harness.db.write() as session:
        row = session.get(ActionRow, action_id)
        assert row is not None
        row.status, row.owner, row.end_time = ActionStatus.READY, None, None
        row.status_reason = "Resumed: run again over its stored state."
    harness.engine.notify()
    return harness.wait(action_id)


def _orphan(harness: Harness, profile: str) -> str:
    """A node outside any cluster, created by its own NODE_CREATE."""
    values = node_store.planned_values(
        name=f"orphan-{uuid.uuid4().hex[:6]}",
        index=-1,
        cluster_id="",
        profile_id=profile,
        placement=None,
        user="",
        project=PROJECT,
        now=time.time(),
    )
    values["cluster_id"] = None
    values["status"] = NodeStatus.INIT
    with harness.db.write() as session:
        node_store.insert_many(session, [values])
    created = harness.run(ActionName.NODE_CREATE, values["id"])
    assert created.status == "SUCCEEDED", created.status_reason
    return str(values["id"])


def _profile(harness: Harness, cluster_id: str) -> str:
    found = harness.get_cluster(cluster_id)
    assert found is not None
    return found.profile_id


Case = Callable[[Harness], tuple[ActionName, str, dict[str, Any]]]


def _cluster_create(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
    cluster = h.cluster(2)
    with h.db.read() as session:
        create = session.scalars(
            select(ActionRow).where(
                ActionRow.target == cluster, ActionRow.action == ActionName.CLUSTER_CREATE
            )
        ).one()
    return ActionName.CLUSTER_CREATE, cluster, {"replay": create.id}


def _policy_detach(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
    cluster = h.cluster(1)
    policy = h.attach(cluster, DELETION)
    return ActionName.CLUSTER_DETACH_POLICY, cluster, {"policy_id": policy}


def _policy_update(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
    cluster = h.cluster(1)
    policy = h.attach(cluster, DELETION)
    return ActionName.CLUSTER_UPDATE_POLICY, cluster, {"policy_id": policy, "enabled": False}


def _policy_attach(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
    cluster = h.cluster(1)
    return ActionName.CLUSTER_ATTACH_POLICY, cluster, {"policy_id": h.policy(DELETION)}


def _add_nodes(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
    cluster = h.cluster(1)
    orphans = [_orphan(h, _profile(h, cluster)) for _ in range(2)]
    return ActionName.CLUSTER_ADD_NODES, cluster, {"nodes": orphans}


def _replace_nodes(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
    cluster = h.cluster(2)
    old = h.nodes(cluster)[0].id
    return (
        ActionName.CLUSTER_REPLACE_NODES,
        cluster,
        {"candidates": {old: _orphan(h, _profile(h, cluster))}},
    )


def _node_create(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
    cluster = h.cluster(0)
    values = node_store.planned_values(
        name="lone",
        index=-1,
        cluster_id="",
        profile_id=_profile(h, cluster),
        placement=None,
        user="",
        project=PROJECT,
        now=time.time(),
    )
    values["cluster_id"] = None
    values["status"] = NodeStatus.INIT
    with h.db.write() as session:
        node_store.insert_many(session, [values])
    return ActionName.NODE_CREATE, str(values["id"]), {}


def _first_member(verb: ActionName, inputs: dict[str, Any] | None = None) -> Case:
    def case(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
        cluster = h.cluster(2)
        return verb, h.nodes(cluster)[0].id, dict(inputs or {})

    return case


def _on_cluster(verb: ActionName, inputs: Callable[[Harness, str], dict[str, Any]]) -> Case:
    def case(h: Harness) -> tuple[ActionName, str, dict[str, Any]]:
        cluster = h.cluster(3)
        return verb, cluster, inputs(h, cluster)

    return case


def _new_profile(h: Harness, _cluster: str) -> dict[str, Any]:
    return {"profile_id": h.profile({"zone": "z2"})}


def _broken_member(h: Harness, cluster: str) -> dict[str, Any]:
    h.set_node(h.nodes(cluster)[0].id, status="ERROR", status_reason="broken on purpose")
    return {}


CASES: dict[str, Case] = {
    "cluster create": _cluster_create,
    "cluster delete": _on_cluster(ActionName.CLUSTER_DELETE, lambda h, c: {}),
    "cluster update profile": _on_cluster(ActionName.CLUSTER_UPDATE, _new_profile),
    "scale out": _on_cluster(ActionName.CLUSTER_SCALE_OUT, lambda h, c: {"count": 2}),
    "scale in": _on_cluster(ActionName.CLUSTER_SCALE_IN, lambda h, c: {"count": 2}),
    "resize up": _on_cluster(
        ActionName.CLUSTER_RESIZE,
        lambda h, c: {"adjustment_type": "EXACT_CAPACITY", "number": 5},
    ),
    "resize down": _on_cluster(
        ActionName.CLUSTER_RESIZE,
        lambda h, c: {"adjustment_type": "EXACT_CAPACITY", "number": 1},
    ),
    "del nodes": _on_cluster(
        ActionName.CLUSTER_DEL_NODES,
        lambda h, c: {"candidates": [h.nodes(c)[0].id], "destroy_after_deletion": True},
    ),
    "add nodes": _add_nodes,
    "replace nodes": _replace_nodes,
    "cluster check": _on_cluster(ActionName.CLUSTER_CHECK, lambda h, c: {}),
    "cluster recover": _on_cluster(ActionName.CLUSTER_RECOVER, _broken_member),
    "cluster operation": _on_cluster(
        ActionName.CLUSTER_OPERATION,
        lambda h, c: {"operation": "reboot", "params": {}, "nodes": [n.id for n in h.nodes(c)]},
    ),
    "policy attach": _policy_attach,
    "policy detach": _policy_detach,
    "policy update": _policy_update,
    "node create": _node_create,
    "node delete": _first_member(ActionName.NODE_DELETE),
    "node update name": _first_member(ActionName.NODE_UPDATE, {"name": "renamed"}),
    "node recover": _first_member(ActionName.NODE_RECOVER, {"operation": "RECREATE"}),
    "node operation": _first_member(ActionName.NODE_OPERATION, {"operation": "reboot"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_second_run_changes_nothing(harness: Harness, case: str) -> None:
    verb, target, inputs = CASES[case](harness)
    replay = inputs.pop("replay", None)
    first = harness.run(verb, target, inputs) if replay is None else harness.wait(replay)
    assert first.status == "SUCCEEDED", first.status_reason
    before = _state(harness)
    second = _again(harness, first.id)
    assert (second.status, second.status_reason) == (first.status, first.status_reason)
    after = _state(harness)
    for part in before:
        assert after[part] == before[part], f"{case}: the second run changed the {part}"


def test_a_node_update_to_a_new_profile_recreates_once(harness: Harness) -> None:
    cluster = harness.cluster(1)
    node = harness.nodes(cluster)[0]
    first = harness.run(ActionName.NODE_UPDATE, node.id, {"profile_id": harness.profile()})
    assert first.status == "SUCCEEDED", first.status_reason
    updated = harness.node(node.id)
    assert updated is not None and updated.physical_id != node.physical_id  # recreated
    before = _state(harness)
    assert _again(harness, first.id).status == "SUCCEEDED"
    assert _state(harness) == before
