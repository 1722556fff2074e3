"""What senlin-tempest-plugin's API tests expect, where herd answered otherwise (issue 30).

Each test names the plugin's tests it stands for; tests/e2e/test_senlin_tempest.py runs the
plugin itself against herd behind a real Keystone.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    assert_error,
    finish_actions,
    make_cluster,
    make_profile,
    set_row,
)

from herd.store.models import NodeRow

UUID = "6ae8ed8e-5b5d-4ad4-8a8b-3a8f2a9d1c47"


@pytest.mark.parametrize("path", ["/v1/actions", "/v1/clusters", "/v1/nodes", "/v1/events"])
def test_sort_texts(client: TestClient, path: str) -> None:
    """test_*_list_invalid_sort: Senlin's Sort field texts."""
    assert_error(
        client.get(path, params={"sort": "bad-sort"}),
        400,
        "Unsupported sort key 'bad-sort' for 'sort'.",
    )
    assert_error(
        client.get(path, params={"sort": "bad-sort:sideways"}),
        400,
        "Unsupported sort dir 'sideways' for 'sort'.",
    )
    assert_error(client.get(path, params={"sort": ":asc"}), 400, "Missing sort key for 'sort'.")


def test_cluster_policies_sort_text(client: TestClient) -> None:
    cluster = make_cluster(client, make_profile(client), "c")
    assert_error(
        client.get(f"/v1/clusters/{cluster}/policies", params={"sort": "bad-sort"}),
        400,
        "Unsupported sort key 'bad-sort' for 'sort'.",
    )


@pytest.mark.parametrize("path", ["/v1/actions", "/v1/clusters", "/v1/profiles", "/v1/receivers"])
def test_marker_must_be_a_uuid(client: TestClient, path: str) -> None:
    """test_*_list_invalid_marker."""
    assert_error(
        client.get(path, params={"marker": "bad-marker"}),
        400,
        "The value for marker is not a valid UUID: 'bad-marker'.",
    )


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/v1/clusters", "status"),
        ("/v1/nodes", "status"),
        ("/v1/actions", "status"),
        ("/v1/events", "level"),
        ("/v1/events", "action"),
    ],
)
def test_unknown_enum_filters_are_400(client: TestClient, path: str, name: str) -> None:
    """test_cluster_list_unsupported_status, test_node_list_unsupported_status,
    test_event_list_unsupported_level, test_event_list_unsupported_action: the plugin sends
    the Python list as text (``status=['bad-status']``)."""
    assert_error(
        client.get(path, params={name: "['bad-value']"}),
        400,
        "Field value ['bad-value'] is invalid",
    )


def test_known_enum_filters_still_filter(client: TestClient) -> None:
    make_cluster(client, make_profile(client), "c")
    assert client.get("/v1/clusters", params={"status": "ACTIVE"}).status_code == 200
    assert client.get("/v1/nodes", params={"status": "ERROR"}).status_code == 200
    assert client.get("/v1/actions", params={"status": "READY"}).json()["actions"]
    assert client.get("/v1/events", params={"level": "INFO"}).status_code == 200
    assert client.get("/v1/events", params={"action": "CLUSTER_CREATE"}).status_code == 200


def test_policy_update_needs_a_name(client: TestClient) -> None:
    """test_policy_update_no_property_updated: a name is all a policy may change."""
    spec = {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}}
    policy = client.post("/v1/policies", json={"policy": {"name": "dp", "spec": spec}})
    assert policy.status_code == 201, policy.text
    pid = policy.json()["policy"]["id"]
    assert_error(
        client.patch(f"/v1/policies/{pid}", json={"policy": {}}),
        400,
        "'name' is a required property",
    )
    renamed = client.patch(f"/v1/policies/{pid}", json={"policy": {"name": "kept"}})
    assert renamed.json()["policy"]["name"] == "kept"


def test_validate_without_content_type(client: TestClient) -> None:
    """test_profile_validate_* / test_policy_validate_*: tempest sends these bodies without a
    Content-Type header; Senlin reads them as JSON all the same."""
    body = b'{"profile": {"spec": {"type": "herd.sim", "version": "1.0", "properties": {}}}}'
    answer = client.post(
        "/v1/profiles/validate", content=body, headers={"OpenStack-API-Version": "clustering 1.2"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["profile"]["type"] == "herd.sim-1.0"
    assert "content-type" not in answer.request.headers


def test_cluster_action_body_is_checked_before_the_cluster(client: TestClient) -> None:
    """The *InvalidRequest tests send a bad body to the cluster 'fake': 400, not 404."""
    assert_error(
        client.post("/v1/clusters/fake/actions", json={"scale_out": {"count": "bad-count"}}),
        400,
        "The value for count must be an integer: 'bad-count'.",
    )
    assert_error(
        client.post("/v1/clusters/fake/actions", json={"scale_out": {"count": 1}}),
        404,
        "The cluster 'fake' could not be found.",
    )
    assert_error(client.post("/v1/clusters/fake/actions"), 400, "No action specified")


def test_node_action_texts_end_with_a_period(client: TestClient) -> None:
    assert_error(client.post(f"/v1/nodes/{UUID}/actions", json={}), 400, "No action specified.")
    assert_error(
        client.post(f"/v1/nodes/{UUID}/actions", json={"check": {}, "recover": {}}),
        400,
        "Multiple actions specified.",
    )


def test_adding_another_clusters_node_is_400(client: TestClient) -> None:
    """test_cluster_add_nodes_node_not_orphan: Senlin's BadRequest, not NodeNotOrphan's 409."""
    profile = make_profile(client)
    first, second = make_cluster(client, profile, "a"), make_cluster(client, profile, "b")
    made = client.post(
        "/v1/nodes", json={"node": {"name": "n", "profile_id": profile, "cluster_id": first}}
    )
    assert made.status_code == 202, made.text
    node = made.json()["node"]["id"]
    finish_actions(client)
    set_row(client, NodeRow, node, status="ACTIVE")
    assert_error(
        client.post(f"/v1/clusters/{second}/actions", json={"add_nodes": {"nodes": [node]}}),
        400,
        f"Nodes ['{node}'] already owned by some cluster.",
    )


@pytest.mark.parametrize(
    ("kind", "path"), [("profile", "/v1/profiles"), ("policy", "/v1/policies")]
)
def test_unknown_types_are_404(client: TestClient, kind: str, path: str) -> None:
    """test_profile_create_profile_type_incorrect and its policy and validate twins."""
    spec = {"type": f"senlin.{kind}.bogus", "version": "1.0", "properties": {}}
    assert_error(
        client.post(path, json={kind: {"name": "x", "spec": spec}}),
        404,
        f"The {kind}_type 'senlin.{kind}.bogus-1.0' could not be found.",
    )
    assert_error(
        client.post(
            f"{path}/validate",
            json={kind: {"spec": spec}},
            headers={"OpenStack-API-Version": "clustering 1.2"},
        ),
        404,
        f"The {kind}_type 'senlin.{kind}.bogus-1.0' could not be found.",
    )


def test_recover_keys_are_read_after_the_cluster_is_found(client: TestClient) -> None:
    """test_cluster_recover_cluster_not_found: any map, then 404 for the missing cluster."""
    assert_error(
        client.post(f"/v1/clusters/{UUID}/actions", json={"recover": {"k1": "v1"}}),
        404,
        f"The cluster '{UUID}' could not be found.",
    )


@pytest.mark.parametrize("action", ["check", "policy_attach", "policy_detach", "policy_update"])
def test_action_params_not_a_map(client: TestClient, action: str) -> None:
    """test_cluster_*_params_not_dict: Senlin's text names no key."""
    cluster = make_cluster(client, make_profile(client), "c")
    assert_error(
        client.post(f"/v1/clusters/{cluster}/actions", json={action: "not-a-map"}),
        400,
        "The data provided is not a map",
    )


@pytest.mark.parametrize("action", ["add_nodes", "del_nodes"])
def test_missing_node_list_is_an_empty_one(client: TestClient, action: str) -> None:
    """test_cluster_add_nodes_missing_nodes_params and its del_nodes twin."""
    cluster = make_cluster(client, make_profile(client), "c")
    assert_error(
        client.post(f"/v1/clusters/{cluster}/actions", json={action: {}}),
        400,
        "Value for 'nodes' must have at least 1 item(s).",
    )


def test_cluster_list_quotes_an_unknown_parameter(client: TestClient) -> None:
    """test_cluster_list_invalid_params: clusters quote the name; other lists do not."""
    assert_error(client.get("/v1/clusters?bogus=1"), 400, "Invalid parameter 'bogus'")
    assert_error(client.get("/v1/nodes?bogus=1"), 400, "Invalid parameter bogus")


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([], "The data provided is not a map"),
        ({}, "The data provided is not a map"),
        ({"old_node": None}, "Field `nodes[old_node]' cannot be None"),
        ({"old1": "new", "old2": "new"}, "Map contains duplicated values"),
    ],
)
def test_replace_nodes_body_before_the_cluster(
    client: TestClient, nodes: object, message: str
) -> None:
    """test_cluster_replace_nodes_params_not_map and its siblings: a 400 for 'cluster_id'."""
    assert_error(
        client.post(
            "/v1/clusters/cluster_id/actions",
            json={"replace_nodes": {"nodes": nodes}},
            headers={"OpenStack-API-Version": "clustering 1.3"},
        ),
        400,
        message,
    )


@pytest.mark.parametrize(
    ("resize", "message"),
    [
        (
            {"adjustment_type": "bogus", "number": 5},
            "Value 'bogus' is not acceptable for field 'adjustment_type'.",
        ),
        (
            {"max_size": 20, "min_size": 5, "number": 5},
            "Missing adjustment_type value for size adjustment.",
        ),
        (
            {"adjustment_type": "CHANGE_IN_CAPACITY", "max_size": 20},
            "Missing number value for size adjustment.",
        ),
        (
            {"adjustment_type": "CHANGE_IN_CAPACITY", "max_size": 10, "min_size": 20, "number": 5},
            "The specified min_size (20) is greater than the specified max_size (10).",
        ),
    ],
)
def test_resize_body_before_the_cluster(client: TestClient, resize: object, message: str) -> None:
    """TestClusterResizeNegativeInvalidResizeParams: a 400 for the cluster 'cluster_id'."""
    assert_error(
        client.post("/v1/clusters/cluster_id/actions", json={"resize": resize}), 400, message
    )


@pytest.mark.parametrize("action", ["check", "recover"])
def test_node_action_params_not_a_map(client: TestClient, action: str) -> None:
    """test_node_check / test_node_recover: test_param_is_not_map."""
    assert_error(
        client.post(f"/v1/nodes/{UUID}/actions", json={action: []}),
        400,
        "The params provided is not a map.",
    )
