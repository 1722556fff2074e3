"""Profiles, profile types, policies and policy types."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    DELETION_SPEC,
    SIM_SPEC,
    assert_error,
    make_cluster,
    make_policy,
    make_profile,
    mv,
)


def test_profile_crud(client: TestClient) -> None:
    r = client.post(
        "/v1/profiles",
        json={"profile": {"name": "p1", "spec": SIM_SPEC, "metadata": {"k": "v"}}},
    )
    assert r.status_code == 201, r.text
    profile = r.json()["profile"]
    assert profile["type"] == "herd.sim-1.0"
    assert profile["spec"] == SIM_SPEC
    assert profile["metadata"] == {"k": "v"}
    assert profile["project"] == "default"
    assert profile["created_at"].endswith("Z")
    pid = profile["id"]
    assert client.get(f"/v1/profiles/{pid}").json()["profile"]["name"] == "p1"
    assert client.get("/v1/profiles/p1").json()["profile"]["id"] == pid
    assert client.get(f"/v1/profiles/{pid[:8]}").json()["profile"]["id"] == pid
    # Senlin's profile update refused one that gives nothing (senlin-tempest-plugin checks it)
    r = client.patch(f"/v1/profiles/{pid}", json={"profile": {}})
    assert_error(r, 400, "No property needs an update.")
    assert client.get(f"/v1/profiles/{pid}").json()["profile"]["updated_at"] is None
    r = client.patch(f"/v1/profiles/{pid}", json={"profile": {"name": "p2"}})
    assert r.status_code == 200
    assert r.json()["profile"]["name"] == "p2"
    assert r.json()["profile"]["updated_at"] is not None
    r = client.delete(f"/v1/profiles/{pid}")
    assert r.status_code == 204
    assert_error(
        client.get(f"/v1/profiles/{pid}"),
        404,
        f"The profile '{pid}' could not be found.",
        "ResourceNotFound",
    )


def test_profile_create_errors(client: TestClient) -> None:
    def post(profile: object) -> Any:
        return client.post("/v1/profiles", json={"profile": profile})

    assert_error(post({"spec": SIM_SPEC}), 400, "'name' is a required property")
    assert_error(post({"name": "x"}), 400, "'spec' is a required property")
    assert_error(
        post({"name": "x", "spec": {"version": "1.0", "properties": {}}}),
        400,
        "The 'type' key is missing from the provided spec map.",
        "InvalidSpec",
    )
    assert_error(
        post({"name": "x", "spec": {"type": "herd.sim", "properties": {}}}),
        400,
        "The 'version' key is missing from the provided spec map.",
    )
    # a type nobody provides: Senlin's 404 (senlin-tempest-plugin checks it)
    assert_error(
        post({"name": "x", "spec": {"type": "nope", "version": "1.0", "properties": {}}}),
        404,
        "The profile_type 'nope-1.0' could not be found.",
    )
    r = post({"name": "x", "spec": {**SIM_SPEC, "properties": {"bogus": 1}}})
    assert r.status_code == 400
    assert "bogus" in r.json()["error"]["message"]
    assert_error(
        post({"name": "x", "spec": SIM_SPEC, "extra": 1}),
        400,
        "Additional properties are not allowed ('extra' was unexpected)",
    )


def test_profile_validate(client: TestClient) -> None:
    r = client.post(
        "/v1/profiles/validate", json={"profile": {"spec": SIM_SPEC}}, headers=mv("1.2")
    )
    assert r.status_code == 200, r.text
    assert r.json()["profile"]["type"] == "herd.sim-1.0"
    assert r.json()["profile"]["id"] is None
    assert client.get("/v1/profiles").json()["profiles"] == []


def test_profile_in_use_is_409(client: TestClient) -> None:
    pid = make_profile(client)
    make_cluster(client, pid)
    assert_error(
        client.delete(f"/v1/profiles/{pid}"),
        409,
        f"The profile '{pid}' cannot be deleted: still referenced by some clusters and/or nodes.",
        "ResourceInUse",
    )


def test_profile_update_rejects_spec(client: TestClient) -> None:
    pid = make_profile(client)
    r = client.patch(f"/v1/profiles/{pid}", json={"profile": {"spec": SIM_SPEC}})
    assert_error(r, 400, "Additional properties are not allowed ('spec' was unexpected)")


def test_profile_list_filters_sort_and_paging(client: TestClient) -> None:
    ids = [make_profile(client, name) for name in ("b", "a", "c", "a2")]
    r = client.get("/v1/profiles", params={"sort": "name:asc"})
    assert [p["name"] for p in r.json()["profiles"]] == ["a", "a2", "b", "c"]
    r = client.get("/v1/profiles", params={"sort": "name:desc", "limit": 2})
    page = r.json()["profiles"]
    assert [p["name"] for p in page] == ["c", "b"]
    r = client.get(
        "/v1/profiles", params={"sort": "name:desc", "limit": 2, "marker": page[-1]["id"]}
    )
    assert [p["name"] for p in r.json()["profiles"]] == ["a2", "a"]
    # The short id a table prints works as a marker too (herd addition).
    r = client.get(
        "/v1/profiles", params={"sort": "name:desc", "limit": 2, "marker": page[-1]["id"][:8]}
    )
    assert [p["name"] for p in r.json()["profiles"]] == ["a2", "a"]
    r = client.get("/v1/profiles", params={"name": "a"})
    assert [p["id"] for p in r.json()["profiles"]] == [ids[1]]
    r = client.get("/v1/profiles", params=[("name", "a"), ("name", "c")])
    assert sorted(p["name"] for p in r.json()["profiles"]) == ["a", "c"]
    r = client.get("/v1/profiles", params={"type": "herd.sim-1.0", "limit": 0})
    assert r.json()["profiles"] == []


def test_list_parameter_errors(client: TestClient) -> None:
    assert_error(
        client.get("/v1/profiles?sort=bogus"), 400, "Unsupported sort key 'bogus' for 'sort'."
    )
    assert_error(
        client.get("/v1/profiles?sort=name:up"), 400, "Unsupported sort dir 'up' for 'sort'."
    )
    assert_error(
        client.get("/v1/profiles?limit=x"), 400, "The value for limit must be an integer: 'x'."
    )
    assert_error(client.get("/v1/profiles?limit=-1"), 400, "Value must be >= 0 for field 'limit'.")
    assert_error(client.get("/v1/profiles?colour=red"), 400, "Invalid parameter colour")
    assert_error(
        client.get("/v1/profiles?global_project=maybe"),
        400,
        "Invalid value 'maybe' specified for 'global_project'",
    )
    assert_error(
        client.get("/v1/profiles?marker=nope"),
        400,
        "The value for marker is not a valid UUID: 'nope'.",
    )


def test_profile_types(client: TestClient) -> None:
    r = client.get("/v1/profile-types")
    names = [t["name"] for t in r.json()["profile_types"]]
    assert "herd.process-1.0" in names
    assert "herd.sim-1.0" in names
    assert set(r.json()["profile_types"][0]) == {"name"}
    r = client.get("/v1/profile-types", headers=mv("1.5"))
    assert "support_status" in r.json()["profile_types"][0]
    # from 1.5 the name comes without its version, which has its own key (Senlin's)
    assert {"name": "herd.sim", "version": "1.0"}.items() <= next(
        t for t in r.json()["profile_types"] if t["name"] == "herd.sim"
    ).items()
    r = client.get("/v1/policy-types", headers=mv("1.5"))
    assert {(t["name"], t["version"]) for t in r.json()["policy_types"]} >= {
        ("senlin.policy.deletion", "1.0"),
        ("senlin.policy.deletion", "1.1"),
    }
    r = client.get("/v1/profile-types/herd.sim-1.0")
    assert r.json()["profile_type"]["name"] == "herd.sim-1.0"
    assert "create_latency" in r.json()["profile_type"]["schema"]
    ops = client.get("/v1/profile-types/herd.sim-1.0/ops").json()["operations"]
    assert set(ops) == {"reboot", "stop", "start", "signal", "pause", "unpause"}
    assert_error(
        client.get("/v1/profile-types/nope-1.0"),
        404,
        "The profile_type 'nope-1.0' could not be found.",
    )


def test_policy_crud(client: TestClient) -> None:
    r = client.post("/v1/policies", json={"policy": {"name": "dp", "spec": DELETION_SPEC}})
    assert r.status_code == 201, r.text
    policy = r.json()["policy"]
    assert policy["type"] == "senlin.policy.deletion-1.1"
    assert policy["data"] == {}
    pid = policy["id"]
    r = client.patch(f"/v1/policies/{pid}", json={"policy": {"name": "dp2"}})
    assert r.json()["policy"]["name"] == "dp2"
    assert [p["id"] for p in client.get("/v1/policies").json()["policies"]] == [pid]
    assert client.delete(f"/v1/policies/{pid}").status_code == 204
    assert client.get(f"/v1/policies/{pid}").status_code == 404


def test_policy_yaml_spec_and_errors(client: TestClient) -> None:
    yaml_spec = "type: senlin.policy.deletion\nversion: 1.1\nproperties:\n  criteria: RANDOM\n"
    r = client.post("/v1/policies", json={"policy": {"name": "y", "spec": yaml_spec}})
    assert r.status_code == 201, r.text
    assert r.json()["policy"]["spec"]["properties"]["criteria"] == "RANDOM"
    bad = {**DELETION_SPEC, "properties": {"criteria": "NEWEST"}}
    r = client.post("/v1/policies", json={"policy": {"name": "z", "spec": bad}})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "InvalidSpec"
    assert "NEWEST" in r.json()["error"]["message"]
    r = client.post("/v1/policies", json={"policy": {"name": "z", "spec": {"version": 1.0}}})
    assert_error(r, 400, "The 'type' key is missing from the provided spec map.")


def test_policy_spec_that_is_no_map_is_400(client: TestClient) -> None:
    # A list, a number or true is no spec: the registry's own text, naming the spec.
    for spec in ([DELETION_SPEC], 7, True):
        r = client.post("/v1/policies", json={"policy": {"name": "n", "spec": spec}})
        assert_error(r, 400, "The provided spec is not a map.")
        assert r.json()["error"]["type"] == "InvalidSpec"


def test_policy_validate(client: TestClient) -> None:
    r = client.post(
        "/v1/policies/validate", json={"policy": {"spec": DELETION_SPEC}}, headers=mv("1.2")
    )
    assert r.status_code == 200
    assert r.json()["policy"]["type"] == "senlin.policy.deletion-1.1"


def test_policy_in_use_is_409(client: TestClient) -> None:
    from sqlalchemy import select
    from tests.functional.api.helpers import services

    from herd.store.models import BindingRow

    cluster = make_cluster(client, make_profile(client))
    policy = make_policy(client)
    with services(client).database.write() as session:
        session.add(
            BindingRow(
                id="b" * 36,
                cluster_id=cluster,
                policy_id=policy,
                enabled=True,
                priority=400,
                data={},
            )
        )
    assert_error(
        client.delete(f"/v1/policies/{policy}"),
        409,
        f"The policy '{policy}' cannot be deleted: still attached to some clusters.",
    )
    with services(client).database.read() as session:
        assert session.scalars(select(BindingRow)).first() is not None


def test_policy_types(client: TestClient) -> None:
    r = client.get("/v1/policy-types")
    names = [t["name"] for t in r.json()["policy_types"]]
    assert "senlin.policy.deletion-1.1" in names
    r = client.get("/v1/policy-types/senlin.policy.deletion-1.1", headers=mv("1.5"))
    assert r.status_code == 200
    assert r.json()["policy_type"]["name"] == "senlin.policy.deletion-1.1"
    assert client.get("/v1/policy-types/nope-1.0").status_code == 404
