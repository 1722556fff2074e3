"""Nodes: create (index from the cluster), show, list, update, delete, node actions."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    assert_error,
    finish_actions,
    make_cluster,
    make_node,
    make_profile,
    mv,
    set_row,
)

from herd.store.models import NodeRow

PROC = {"type": "herd.process", "version": "1.0", "properties": {"command": "sleep"}}


def test_node_create_in_cluster_takes_next_index(client: TestClient) -> None:
    profile = make_profile(client)
    cid = make_cluster(client, profile, "c1")
    r = client.post(
        "/v1/nodes",
        json={
            "node": {
                "name": "n1",
                "profile_id": profile,
                "cluster_id": "c1",
                "role": "db",
                "metadata": {"k": "v"},
            }
        },
    )
    assert r.status_code == 202, r.text
    node = r.json()["node"]
    assert (node["index"], node["cluster_id"], node["status"]) == (1, cid, "INIT")
    assert node["role"] == "db" and node["metadata"] == {"k": "v"}
    assert node["health"] == "UNKNOWN" and "tainted" not in node
    action = client.get(r.headers["Location"]).json()["action"]
    assert (action["action"], action["target"], action["inputs"]) == ("NODE_CREATE", node["id"], {})
    second = make_node(client, profile, "n2", cluster_id=cid)
    assert client.get(f"/v1/nodes/{second}").json()["node"]["index"] == 2
    orphan = client.get(f"/v1/nodes/{make_node(client, profile, 'n3')}").json()["node"]
    assert (orphan["index"], orphan["cluster_id"]) == (-1, "")
    assert client.get(f"/v1/clusters/{cid}").json()["cluster"]["nodes"] == [node["id"], second]


def test_node_create_errors(client: TestClient) -> None:
    profile = make_profile(client)
    proc = make_profile(client, "proc", PROC)
    make_cluster(client, profile, "c1")

    def post(**fields: object) -> Any:
        return client.post("/v1/nodes", json={"node": fields})

    assert_error(post(profile_id=profile), 400, "'name' is a required property")
    assert_error(post(name="n"), 400, "'profile_id' is a required property")
    assert_error(
        post(name="n", profile_id="zz"), 400, "The specified profile 'zz' could not be found."
    )
    assert_error(
        post(name="n", profile_id=profile, cluster_id="zz"),
        400,
        "The specified cluster 'zz' could not be found.",
    )
    assert_error(
        post(name="n", profile_id=proc, cluster_id="c1"),
        400,
        "Node and cluster have different profile type, operation aborted.",
    )


def test_node_list_filters_and_details(client: TestClient) -> None:
    profile = make_profile(client)
    cid = make_cluster(client, profile, "c1")
    a = make_node(client, profile, "a", cluster_id=cid)
    b = make_node(client, profile, "b")
    set_row(client, NodeRow, b, status="ACTIVE")
    assert [n["id"] for n in client.get("/v1/nodes?cluster_id=c1").json()["nodes"]] == [a]
    assert [n["id"] for n in client.get("/v1/nodes?status=ACTIVE").json()["nodes"]] == [b]
    # Unknown statuses are refused as Senlin's enum fields refuse them (senlin-tempest-plugin's
    # test_node_list_unsupported_status), alone or beside a known one.
    assert_error(client.get("/v1/nodes?status=SLEEPING"), 400, "Field value SLEEPING is invalid")
    assert_error(
        client.get("/v1/nodes?status=SLEEPING&status=ACTIVE"),
        400,
        "Field value SLEEPING is invalid",
    )
    both = client.get("/v1/nodes?status=ERROR&status=ACTIVE").json()["nodes"]
    assert [n["id"] for n in both] == [b]
    assert_error(
        client.get("/v1/actions?status=NAPPING&action=NODE_NAP"),
        400,
        "Field value NAPPING is invalid",
    )
    assert client.get("/v1/actions?action=NODE_NAP").json()["actions"] == []
    assert [n["name"] for n in client.get("/v1/nodes?sort=name:desc").json()["nodes"]] == ["b", "a"]
    assert_error(client.get("/v1/nodes?cluster_id=zz"), 400, "Cannot find the given cluster: zz.")
    r = client.get(f"/v1/nodes/{a}?show_details=True")
    assert r.json()["node"]["details"] == {}
    r = client.get(f"/v1/nodes/{a}", headers=mv("1.13"))
    assert r.json()["node"]["tainted"] is False


def test_node_update(client: TestClient) -> None:
    profile = make_profile(client)
    nid = make_node(client, profile, "n1")
    finish_actions(client)
    r = client.patch(
        f"/v1/nodes/{nid}",
        json={"node": {"name": "n2", "role": "r", "tainted": True}},
        headers=mv("1.13"),
    )
    assert r.status_code == 202, r.text
    action = client.get(r.headers["Location"]).json()["action"]
    assert action["inputs"] == {"name": "n2", "role": "r", "tainted": True}
    finish_actions(client)
    # Below 1.13 "tainted" is stripped, so nothing is left to update.
    assert_error(
        client.patch(f"/v1/nodes/{nid}", json={"node": {"tainted": True}}),
        400,
        "No property needs an update.",
    )
    proc = make_profile(client, "proc", PROC)
    assert_error(
        client.patch(f"/v1/nodes/{nid}", json={"node": {"profile_id": proc}}),
        400,
        "Cannot update a node to a different profile type, operation aborted.",
    )


def test_node_delete(client: TestClient) -> None:
    profile = make_profile(client)
    nid = make_node(client, profile, "n1")
    set_row(client, NodeRow, nid, status="CREATING")
    assert_error(
        client.delete(f"/v1/nodes/{nid}"),
        409,
        f"The node '{nid}' is in status CREATING.",
        "ActionInProgress",
    )
    r = client.request("DELETE", f"/v1/nodes/{nid}", json={"force": True}, headers=mv("1.8"))
    assert r.status_code == 202
    action = client.get(r.headers["Location"]).json()["action"]
    assert (action["action"], action["inputs"]) == ("NODE_DELETE", {"force": True})
    assert_error(client.delete("/v1/nodes/ghost"), 404, "The node 'ghost' could not be found.")


def test_node_actions(client: TestClient) -> None:
    nid = make_node(client, make_profile(client), "n1")
    finish_actions(client)
    r = client.post(f"/v1/nodes/{nid}/actions", json={"check": {}})
    assert r.status_code == 202
    assert client.get(r.headers["Location"]).json()["action"]["action"] == "NODE_CHECK"
    assert_error(
        client.post(f"/v1/nodes/{nid}/actions", json={"recover": {}}),
        409,
        f"The NODE_RECOVER action for target {nid} conflicts with the following "
        f"action(s): {r.json()['action']}",
    )
    finish_actions(client)
    r = client.post(
        f"/v1/nodes/{nid}/actions",
        json={"recover": {"operation": "REBOOT", "check": True}},
        headers=mv("1.6"),
    )
    action = client.get(r.headers["Location"]).json()["action"]
    assert action["inputs"] == {"operation": "REBOOT", "check": True}
    assert_error(client.post(f"/v1/nodes/{nid}/actions", json={}), 400, "No action specified.")
    assert_error(
        client.post(f"/v1/nodes/{nid}/actions", json={"scale_in": {}}),
        400,
        "Unrecognized action 'scale_in' specified",
    )
