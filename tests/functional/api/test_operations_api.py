"""Profile operations through the API: listing, validation texts, stored actions."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import (
    assert_error,
    finish_actions,
    make_cluster,
    make_node,
    make_profile,
    mv,
    services,
)

from herd.config import Settings
from herd.store.models import ActionRow

V14 = mv("1.4")
OPERATIONS = {"reboot", "stop", "start", "signal", "pause", "unpause"}


def _members(client: TestClient) -> tuple[str, list[str]]:
    profile = make_profile(client)
    cluster = make_cluster(client, profile, "c1")
    nodes = [
        make_node(client, profile, f"n{i}", cluster_id=cluster, role="web" if i < 2 else "db")
        for i in range(3)
    ]
    finish_actions(client)
    return cluster, nodes


def _action(client: TestClient, action_id: str) -> ActionRow:
    with services(client).database.read() as session:
        row = session.get(ActionRow, action_id)
        assert row is not None
        return row


def test_profile_type_ops_lists_the_operations(client: TestClient) -> None:
    for type_name in ("herd.process-1.0", "herd.sim-1.0"):
        ops = client.get(f"/v1/profile-types/{type_name}/ops").json()["operations"]
        assert set(ops) == OPERATIONS
        assert ops["reboot"]["parameters"] == {}
        assert ops["signal"]["parameters"]["signal"]["type"] == "String"
        assert ops["signal"]["parameters"]["signal"]["required"] is True
        assert all(op["description"] for op in ops.values())
    nova = client.get("/v1/profile-types/os.nova.server-1.0/ops").json()["operations"]
    assert set(nova) == {
        "reboot", "rebuild", "change_password", "pause", "unpause", "suspend", "resume",
        "lock", "unlock", "start", "stop", "rescue", "unrescue", "evacuate", "migrate",
    }  # fmt: skip
    assert nova["change_password"]["parameters"]["admin_pass"]["required"] is True
    assert_error(
        client.get("/v1/profile-types/container.dockerinc.docker-1.0/ops"),
        404,
        "The profile_type 'container.dockerinc.docker-1.0' could not be found.",
    )


def test_node_operation_is_stored_as_an_action(client: TestClient) -> None:
    _, nodes = _members(client)
    r = client.post(f"/v1/nodes/{nodes[0]}/ops", json={"signal": {"signal": "hup"}}, headers=V14)
    assert r.status_code == 202, r.text
    action_id = r.json()["action"]
    assert r.headers["Location"] == f"/v1/actions/{action_id}"
    row = _action(client, action_id)
    assert row.action == "NODE_OPERATION"
    assert row.target == nodes[0] and row.status == "READY"
    assert row.name == f"node_signal_{nodes[0][:8]}"
    assert row.inputs == {"operation": "signal", "params": {"signal": "SIGHUP"}}
    # The node is busy with it now: a second operation conflicts (Senlin's fail-fast check).
    r = client.post(f"/v1/nodes/{nodes[0]}/ops", json={"reboot": {}}, headers=V14)
    assert_error(
        r,
        409,
        f"The NODE_OPERATION action for target {nodes[0]} conflicts with the following "
        f"action(s): {action_id}",
        "ActionConflict",
    )


def _node_error(client: TestClient, node: str, body: Any, message: str, status: int = 400) -> None:
    assert_error(client.post(f"/v1/nodes/{node}/ops", json=body, headers=V14), status, message)


def test_node_operation_errors(client: TestClient) -> None:
    _, nodes = _members(client)
    node = nodes[0]
    assert_error(
        client.post(f"/v1/nodes/{node}/ops", json={"reboot": {}}),
        400,
        "API version '1.0' is not supported on this method.",
    )
    _node_error(
        client,
        node,
        {"frob": {}},
        "The requested operation 'frob' is not supported by the profile type 'herd.sim-1.0'.",
    )
    _node_error(client, node, {}, "No operation specified.")
    _node_error(client, node, {"stop": {}, "start": {}}, "Multiple operations specified.")
    _node_error(client, node, ["stop"], "The data provided is not a map")
    _node_error(
        client,
        node,
        {"signal": {}},
        "Required parameter 'signal' of operation 'signal' not provided.",
    )
    _node_error(
        client,
        node,
        {"signal": {"signal": "SIGNOPE"}},
        "The value 'SIGNOPE' of parameter 'signal' is not a signal name such as SIGHUP, "
        "SIGTERM or SIGUSR1.",
    )
    for refused in ("SIGKILL", "stop"):
        name = "SIGKILL" if refused == "SIGKILL" else "SIGSTOP"
        _node_error(
            client,
            node,
            {"signal": {"signal": refused}},
            f"Signal {name} is refused: a process cannot catch it, so it gets no chance to "
            "clean up. An operator can allow it with HERD_ALLOW_UNCATCHABLE_SIGNALS=true.",
        )
    _node_error(
        client,
        node,
        {"reboot": {"type": "HARD"}},
        "Unrecognizable parameter(s) 'type' for operation 'reboot'; its parameters are: none.",
    )
    _node_error(
        client,
        node,
        {"signal": "SIGHUP"},
        "The parameters of operation 'signal' must be a map, not 'SIGHUP'.",
    )
    _node_error(client, "nope", {"stop": {}}, "The node 'nope' could not be found.", 404)
    with services(client).database.read() as session:
        assert session.query(ActionRow).filter(ActionRow.action == "NODE_OPERATION").count() == 0


def test_uncatchable_signal_allowed_by_the_operator(
    api_client: ApiClientFactory, settings: Settings
) -> None:
    client = api_client(settings.model_copy(update={"allow_uncatchable_signals": True}))
    _, nodes = _members(client)
    r = client.post(f"/v1/nodes/{nodes[0]}/ops", json={"signal": {"signal": "KILL"}}, headers=V14)
    assert r.status_code == 202, r.text
    assert _action(client, r.json()["action"]).inputs["params"] == {"signal": "SIGKILL"}


def test_cluster_operation_in_senlins_form_with_filters(client: TestClient) -> None:
    cluster, nodes = _members(client)
    body: dict[str, Any] = {"signal": {"params": {"signal": "SIGUSR1"}, "filters": {"role": "web"}}}
    r = client.post(f"/v1/clusters/{cluster}/ops", json=body, headers=V14)
    assert r.status_code == 202, r.text
    row = _action(client, r.json()["action"])
    assert row.action == "CLUSTER_OPERATION" and row.target == cluster
    assert row.name == f"cluster_signal_{cluster[:8]}"
    assert row.inputs == {
        "operation": "signal",
        "params": {"signal": "SIGUSR1"},
        "nodes": nodes[:2],
    }
    finish_actions(client)
    body = {"pause": {"filters": {"name": ["n0", "n2"], "status": "INIT"}}}
    r = client.post(f"/v1/clusters/{cluster}/ops", json=body, headers=V14)
    assert r.status_code == 202, r.text
    assert _action(client, r.json()["action"]).inputs["nodes"] == [nodes[0], nodes[2]]


def test_cluster_operation_with_the_clients_form(client: TestClient) -> None:
    # openstacksdk and python-senlinclient send {"<op>": {<params>}}.
    cluster, nodes = _members(client)
    r = client.post(f"/v1/clusters/{cluster}/ops", json={"signal": {"signal": "TERM"}}, headers=V14)
    assert r.status_code == 202, r.text
    row = _action(client, r.json()["action"])
    assert row.inputs == {"operation": "signal", "params": {"signal": "SIGTERM"}, "nodes": nodes}


def test_cluster_operation_errors(client: TestClient) -> None:
    cluster, _ = _members(client)

    def error(body: Any, message: str, status: int = 400) -> None:
        r = client.post(f"/v1/clusters/{cluster}/ops", json=body, headers=V14)
        assert_error(r, status, message)

    error(
        {"reboot": {"filters": {"colour": "red", "zone": "z"}}},
        "Filter key 'colour' is unsupported\nFilter key 'zone' is unsupported",
    )
    error(
        {"reboot": {"filters": {"name": "nobody"}}}, "No node (matching the filter) could be found"
    )
    # a status that is no NodeStatus matches no member (the column is enum-typed): not a 500
    error(
        {"reboot": {"filters": {"status": "SLEEPING"}}},
        "No node (matching the filter) could be found",
    )
    error(
        {"reboot": {"params": {"x": 1}}},
        "Unrecognizable parameter(s) 'x' for operation 'reboot'; its parameters are: none.",
    )
    error({"reboot": {"params": []}}, "The value ([]) is not a valid JSON map for 'params'.")
    error({}, "No operation specified")
    error({"stop": {}, "start": {}}, "Multiple operations specified")
    error(
        {"rebuild": {}},
        "The requested operation 'rebuild' is not supported by the profile type 'herd.sim-1.0'.",
    )
    assert_error(
        client.post(f"/v1/clusters/{cluster}/ops", json={"stop": {}}, headers=mv("1.3")),
        400,
        "API version '1.3' is not supported on this method.",
    )
    assert_error(
        client.post("/v1/clusters/nope/ops", json={"stop": {}}, headers=V14),
        404,
        "The cluster 'nope' could not be found.",
    )
    r = client.post(f"/v1/clusters/{cluster}/ops", json={"stop": {}}, headers=V14)
    first = r.json()["action"]
    error(
        {"start": {}},
        f"The CLUSTER_OPERATION action for target {cluster} conflicts with the following "
        f"action(s): {first}",
        409,
    )
