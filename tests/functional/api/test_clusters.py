"""Cluster create, show, list, update and delete: rows, actions and Senlin's texts."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    assert_error,
    finish_actions,
    make_cluster,
    make_policy,
    make_profile,
    mv,
    services,
    set_row,
)

from herd.store.models import BindingRow, ClusterRow


def test_create_cluster_returns_202_with_location(client: TestClient) -> None:
    profile = make_profile(client, "web")
    r = client.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": "c1",
                "profile_id": "web",
                "min_size": 1,
                "max_size": 5,
                "metadata": {"a": 1},
                "config": {"node.name.format": "n-$I"},
                "timeout": 60,
            }
        },
    )
    assert r.status_code == 202, r.text
    cluster = r.json()["cluster"]
    assert cluster["status"] == "INIT"
    assert cluster["desired_capacity"] == 1
    assert (cluster["min_size"], cluster["max_size"]) == (1, 5)
    assert cluster["profile_id"] == profile
    assert cluster["profile_name"] == "web"
    assert cluster["nodes"] == [] and cluster["policies"] == []
    assert cluster["timeout"] == 60
    assert cluster["init_at"].endswith("Z")
    action_id = r.headers["Location"].rsplit("/", 1)[1]
    assert r.headers["Location"] == f"/v1/actions/{action_id}"
    action = client.get(f"/v1/actions/{action_id}").json()["action"]
    assert action["action"] == "CLUSTER_CREATE"
    assert action["status"] == "READY"
    assert action["cause"] == "RPC Request"
    assert action["target"] == cluster["id"]
    assert action["inputs"] == {}
    assert action["name"] == f"cluster_create_{cluster['id'][:8]}"
    with services(client).database.read() as session:
        row = session.get(ClusterRow, cluster["id"])
        assert row is not None and row.next_index == 1


def test_create_cluster_defaults(client: TestClient) -> None:
    profile = make_profile(client)
    r = client.post("/v1/clusters", json={"cluster": {"name": "c", "profile_id": profile}})
    cluster = r.json()["cluster"]
    assert (cluster["desired_capacity"], cluster["min_size"], cluster["max_size"]) == (0, 0, -1)
    assert cluster["timeout"] == 3600


def test_create_cluster_errors(client: TestClient) -> None:
    profile = make_profile(client)

    def post(**fields: object) -> Any:
        return client.post("/v1/clusters", json={"cluster": fields})

    assert_error(post(profile_id=profile), 400, "'name' is a required property")
    assert_error(post(name="c"), 400, "'profile_id' is a required property")
    assert_error(
        post(name="c", profile_id="nope"),
        400,
        "The specified profile 'nope' could not be found.",
        "BadRequest",
    )
    assert_error(
        post(name="c", profile_id=profile, desired_capacity=5, max_size=3),
        400,
        "The target capacity (5) is greater than the specified max_size (3).",
    )
    assert_error(
        post(name="c", profile_id=profile, desired_capacity=1, min_size=2),
        400,
        "The target capacity (1) is less than the specified min_size (2).",
    )
    assert_error(
        post(name="c", profile_id=profile, min_size=3, max_size=2),
        400,
        "The target capacity (3) is greater than the specified max_size (2).",
    )
    assert_error(
        post(name="c", profile_id=profile, desired_capacity=200_000),
        400,
        "The target capacity (200000) is greater than the maximum number of nodes "
        "allowed per cluster (1000).",
    )
    assert_error(
        post(name="c", profile_id=profile, min_size="x"),
        400,
        "The value for min_size must be an integer: 'x'.",
    )
    assert_error(
        post(name="c", profile_id=profile, min_size=-1),
        400,
        "The value for the min_size field must be greater than or equal to 0.",
    )
    assert_error(
        post(name="c", profile_id=profile, max_size=-2),
        400,
        "The value for the max_size field must be greater than or equal to -1.",
    )
    assert_error(
        post(name="c", profile_id=profile, timeout=-1),
        400,
        "Value must be >= 0 for field 'timeout'.",
    )
    assert_error(
        post(name="c", profile_id=profile, metadata=[1]),
        400,
        "The value ([1]) is not a valid JSON map for 'metadata'.",
    )
    assert_error(
        post(name="c", profile_id=profile, colour="red"),
        400,
        "Additional properties are not allowed ('colour' was unexpected)",
    )
    assert client.get("/v1/clusters").json()["clusters"] == []
    assert client.get("/v1/actions").json()["actions"] == []


def test_cluster_list_filters_sort_paging(client: TestClient) -> None:
    profile = make_profile(client)
    ids = {name: make_cluster(client, profile, name) for name in ("b", "a", "c")}
    set_row(client, ClusterRow, ids["c"], status="ACTIVE")
    r = client.get("/v1/clusters")
    assert [c["name"] for c in r.json()["clusters"]] == ["b", "a", "c"]  # init_at order
    r = client.get("/v1/clusters?sort=name")
    assert [c["name"] for c in r.json()["clusters"]] == ["a", "b", "c"]
    r = client.get("/v1/clusters?sort=status:desc,name:asc")
    assert [c["name"] for c in r.json()["clusters"]] == ["a", "b", "c"]
    r = client.get("/v1/clusters?status=ACTIVE")
    assert [c["id"] for c in r.json()["clusters"]] == [ids["c"]]
    r = client.get(f"/v1/clusters?sort=name&limit=1&marker={ids['a']}")
    assert [c["name"] for c in r.json()["clusters"]] == ["b"]
    assert_error(
        client.get("/v1/clusters?sort=profile_id"),
        400,
        "Unsupported sort key 'profile_id' for 'sort'.",
    )
    assert_error(client.get("/v1/clusters?type=x"), 400, "Invalid parameter 'type'")


def test_cluster_get_by_name_short_id_and_ambiguity(client: TestClient) -> None:
    profile = make_profile(client)
    cid = make_cluster(client, profile, "web")
    assert client.get("/v1/clusters/web").json()["cluster"]["id"] == cid
    assert client.get(f"/v1/clusters/{cid[:6]}").json()["cluster"]["id"] == cid
    make_cluster(client, profile, "web")
    assert_error(
        client.get("/v1/clusters/web"),
        400,
        "Multiple results found matching the query criteria 'web'. Please be more specific.",
        "MultipleChoices",
    )
    assert_error(client.get("/v1/clusters/nope"), 404, "The cluster 'nope' could not be found.")


def test_cluster_update(client: TestClient) -> None:
    profile = make_profile(client)
    cid = make_cluster(client, profile, "c1")
    finish_actions(client)
    other = make_profile(client, "p2")
    r = client.patch(
        f"/v1/clusters/{cid}",
        json={
            "cluster": {
                "name": "c2",
                "metadata": {"x": 1},
                "timeout": 10,
                "profile_id": other,
                "profile_only": True,
            }
        },
        headers=mv("1.6"),
    )
    assert r.status_code == 202, r.text
    assert r.json()["cluster"]["name"] == "c1"  # the engine applies the change
    action = client.get(r.headers["Location"].removeprefix("")).json()["action"]
    assert action["action"] == "CLUSTER_UPDATE"
    assert action["inputs"] == {
        "name": "c2",
        "metadata": {"x": 1},
        "timeout": 10,
        "profile_id": other,
        "profile_only": True,
    }


def test_cluster_update_errors(client: TestClient) -> None:
    profile = make_profile(client)
    cid = make_cluster(client, profile, "c1")
    finish_actions(client)
    assert_error(
        client.patch(f"/v1/clusters/{cid}", json={"cluster": {"name": "c1"}}),
        400,
        "No property needs an update.",
    )
    proc = make_profile(
        client,
        "proc",
        {"type": "herd.process", "version": "1.0", "properties": {"command": "sleep"}},
    )
    assert_error(
        client.patch(f"/v1/clusters/{cid}", json={"cluster": {"profile_id": proc}}),
        400,
        "Cannot update a cluster to a different profile type, operation aborted.",
    )
    assert_error(
        client.patch(f"/v1/clusters/{cid}", json={"cluster": {"profile_id": "zz"}}),
        400,
        "The specified profile 'zz' could not be found.",
    )
    set_row(client, ClusterRow, cid, status="ERROR")
    assert_error(
        client.patch(f"/v1/clusters/{cid}", json={"cluster": {"name": "x"}}),
        409,
        "Updating a cluster in error state is not supported.",
        "FeatureNotSupported",
    )


def test_an_error_cluster_takes_a_new_profile(client: TestClient) -> None:
    # herd, unlike Senlin: a cluster none of whose members works is ERROR (issue 24), and a
    # new profile is how its members are fixed, so that update is accepted; others are not
    cid = make_cluster(client, make_profile(client), "c1")
    finish_actions(client)
    set_row(client, ClusterRow, cid, status="ERROR")
    fixed = make_profile(client, "fixed")
    body = {"cluster": {"name": "c2", "profile_id": fixed}}
    r = client.patch(f"/v1/clusters/{cid}", json=body)
    assert r.status_code == 202, r.text
    action = client.get(r.headers["Location"]).json()["action"]
    assert (action["action"], action["inputs"]) == (
        "CLUSTER_UPDATE",
        {"name": "c2", "profile_id": fixed},
    )


def test_cluster_update_conflicts_with_active_action(client: TestClient) -> None:
    cid = make_cluster(client, make_profile(client))
    create = client.get("/v1/actions").json()["actions"][0]["id"]
    assert_error(
        client.patch(f"/v1/clusters/{cid}", json={"cluster": {"name": "x"}}),
        409,
        f"The CLUSTER_UPDATE action for target {cid} conflicts with the following "
        f"action(s): {create}",
        "ActionConflict",
    )


def test_cluster_delete(client: TestClient) -> None:
    cid = make_cluster(client, make_profile(client))
    # CLUSTER_DELETE bypasses the conflict check (the create is still queued).
    r = client.delete(f"/v1/clusters/{cid}")
    assert r.status_code == 202
    action = client.get(r.headers["Location"]).json()["action"]
    assert action["action"] == "CLUSTER_DELETE"
    assert action["inputs"] == {"force": False}
    # A repeated DELETE while the deletion is in progress starts nothing new (tombstones).
    r = client.delete(f"/v1/clusters/{cid}", headers=mv("1.8"))
    assert r.status_code == 204
    deletes = [
        a for a in client.get("/v1/actions").json()["actions"] if a["action"] == "CLUSTER_DELETE"
    ]
    assert len(deletes) == 1


def test_cluster_delete_errors(client: TestClient) -> None:
    cid = make_cluster(client, make_profile(client))
    set_row(client, ClusterRow, cid, status="CREATING")
    assert_error(
        client.delete(f"/v1/clusters/{cid}"),
        409,
        f"The cluster '{cid}' is in status CREATING.",
        "ActionInProgress",
    )
    r = client.request("DELETE", f"/v1/clusters/{cid}", json={"force": True}, headers=mv("1.8"))
    assert r.status_code == 202
    assert client.get(r.headers["Location"]).json()["action"]["inputs"] == {"force": True}
    cid = make_cluster(client, make_profile(client, "p2"), "c2")
    policy = make_policy(client)
    with services(client).database.write() as session:
        session.add(
            BindingRow(
                id=BINDING, cluster_id=cid, policy_id=policy, enabled=True, priority=400, data={}
            )
        )
    assert_error(
        client.delete(f"/v1/clusters/{cid}"),
        409,
        f"The cluster '{cid}' cannot be deleted: there is still policy(s) attached to it.",
        "ResourceInUse",
    )
    assert client.get(f"/v1/clusters/{cid}").json()["cluster"]["policies"] == [policy]
    assert_error(client.delete("/v1/clusters/nope"), 404, "The cluster 'nope' could not be found.")


BINDING = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"


def test_cluster_policies(client: TestClient) -> None:
    cid = make_cluster(client, make_profile(client), "c1")
    policy = make_policy(client, "dp")
    with services(client).database.write() as session:
        session.add(
            BindingRow(
                id=BINDING, cluster_id=cid, policy_id=policy, enabled=False, priority=400, data={}
            )
        )
    r = client.get(f"/v1/clusters/{cid}/policies")
    (binding,) = r.json()["cluster_policies"]
    assert binding["policy_id"] == policy
    assert binding["policy_name"] == "dp"
    assert binding["policy_type"] == "senlin.policy.deletion-1.1"
    assert binding["cluster_name"] == "c1"
    assert binding["enabled"] is False
    assert client.get(f"/v1/clusters/{cid}/policies?enabled=true").json()["cluster_policies"] == []
    r = client.get(f"/v1/clusters/{cid}/policies?policy_name=dp&sort=enabled")
    assert len(r.json()["cluster_policies"]) == 1
    # a boolean sort key with a marker (a 500 before: SQLAlchemy compares True only with ==)
    for direction in ("asc", "desc"):
        r = client.get(
            f"/v1/clusters/{cid}/policies",
            params={"sort": f"enabled:{direction}", "marker": BINDING},
        )
        assert r.status_code == 200, r.text
        assert r.json()["cluster_policies"] == []  # the one binding is the marker
    r = client.get(f"/v1/clusters/{cid}/policies/dp")
    assert r.json()["cluster_policy"]["policy_id"] == policy
    other = make_policy(client, "other")
    assert_error(
        client.get(f"/v1/clusters/{cid}/policies/{other}"),
        404,
        f"The policy '{other}' is not found attached to the specified cluster '{cid}'.",
    )
