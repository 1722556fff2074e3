"""Regional agent tokens (issue 24): an agent token reads only its regions' nodes and the
clusters spanning them; everything else is 404 (never 403) and lists leave it out."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import SIM_SPEC, assert_error, issue_token, services

from herd.errors import InvalidRequest
from herd.store import tokens
from herd.store.models import NodeRow


def _agent(client: TestClient, regions: list[str] | None) -> dict[str, str]:
    with services(client).database.write() as session:
        _row, secret = tokens.create_token(
            session, "p1", "agent", "a", time.time(), regions=regions
        )
    return {"X-Auth-Token": secret}


def _cluster(client: TestClient, admin: dict[str, str], profile: str, name: str) -> str:
    r = client.post(
        "/v1/clusters", json={"cluster": {"name": name, "profile_id": profile}}, headers=admin
    )
    assert r.status_code == 202, r.text
    return str(r.json()["cluster"]["id"])


def _node(client: TestClient, node_id: str, name: str, cluster: str, region: str) -> None:
    profile = client.get(f"/v1/clusters/{cluster}", headers=issue_token(client, "p1", "admin"))
    with services(client).database.write() as session:
        session.add(
            NodeRow(
                id=node_id,
                name=name,
                cluster_id=cluster,
                profile_id=profile.json()["cluster"]["profile_id"],
                init_at=time.time(),
                project="p1",
                data={"placement": {"region_name": region, "zone": None}},
            )
        )


@pytest.fixture
def world(token_client: TestClient) -> dict[str, Any]:
    """Cluster ``both`` has a member in A and one in B; ``only_b`` has one in B."""
    admin = issue_token(token_client, "p1", "admin")
    profile = token_client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}}, headers=admin
    ).json()["profile"]["id"]
    both = _cluster(token_client, admin, profile, "both")
    only_b = _cluster(token_client, admin, profile, "only-b")
    ids = {"a1": "a" * 36, "b1": "b" * 36, "b2": "c" * 36}
    _node(token_client, ids["a1"], "shared", both, "A")
    _node(token_client, ids["b1"], "shared", both, "B")
    _node(token_client, ids["b2"], "b-only", only_b, "B")
    return {"admin": admin, "both": both, "only_b": only_b, **ids}


def test_a_region_a_token_cannot_read_region_b_nodes(
    token_client: TestClient, world: dict[str, Any]
) -> None:
    agent_a = _agent(token_client, ["A"])
    listed = token_client.get("/v1/nodes?global_project=true", headers=agent_a)
    assert listed.status_code == 200, listed.text
    assert [n["id"] for n in listed.json()["nodes"]] == [world["a1"]]
    # a region filter cannot widen the view
    listed = token_client.get("/v1/nodes?global_project=true&region=B", headers=agent_a)
    assert listed.json()["nodes"] == []
    assert token_client.get(f"/v1/nodes/{world['a1']}", headers=agent_a).status_code == 200
    for identity in (world["b1"], world["b2"], "b-only", "bbbbbbbb"):
        assert_error(
            token_client.get(f"/v1/nodes/{identity}", headers=agent_a),
            404,
            f"The node '{identity}' could not be found.",
        )
    # the other region's node of the same name neither makes it ambiguous nor shows
    shown = token_client.get("/v1/nodes/shared", headers=agent_a)
    assert shown.status_code == 200, shown.text
    assert shown.json()["node"]["id"] == world["a1"]
    # the admin sees both regions: the name is ambiguous to it
    assert token_client.get("/v1/nodes/shared", headers=world["admin"]).status_code == 400


def test_a_regional_token_reads_only_clusters_spanning_its_regions(
    token_client: TestClient, world: dict[str, Any]
) -> None:
    agent_a = _agent(token_client, ["A"])
    listed = token_client.get("/v1/clusters?global_project=true", headers=agent_a)
    assert [(c["id"], c["nodes"]) for c in listed.json()["clusters"]] == [
        (world["both"], [world["a1"]])  # region B's member id is left out too
    ]
    shown = token_client.get(f"/v1/clusters/{world['both']}", headers=agent_a)
    assert shown.json()["cluster"]["nodes"] == [world["a1"]]
    counted = token_client.get(f"/v1/clusters/{world['both']}?show_nodes=false", headers=agent_a)
    assert counted.json()["cluster"]["node_count"] == 1
    assert_error(
        token_client.get(f"/v1/clusters/{world['only_b']}", headers=agent_a),
        404,
        f"The cluster '{world['only_b']}' could not be found.",
    )
    assert_error(
        token_client.get(f"/v1/nodes?cluster_id={world['only_b']}", headers=agent_a),
        400,
        f"Cannot find the given cluster: {world['only_b']}.",
    )
    # as herd agent --region A lists them
    listed = token_client.get("/v1/clusters?global_project=true&region=B", headers=agent_a)
    assert [c["id"] for c in listed.json()["clusters"]] == [world["both"]]


def test_tokens_of_several_or_all_regions(token_client: TestClient, world: dict[str, Any]) -> None:
    every = sorted([world["a1"], world["b1"], world["b2"]])
    for regions in (["A", "B"], None):
        agent = _agent(token_client, regions)
        listed = token_client.get("/v1/nodes?global_project=true", headers=agent)
        assert sorted(n["id"] for n in listed.json()["nodes"]) == every, regions
        clusters = token_client.get("/v1/clusters?global_project=true", headers=agent)
        assert len(clusters.json()["clusters"]) == 2
        shown = token_client.get(f"/v1/clusters/{world['both']}", headers=agent)
        assert sorted(shown.json()["cluster"]["nodes"]) == sorted([world["a1"], world["b1"]])


@pytest.mark.parametrize(
    ("role", "regions", "message"),
    [
        ("member", ["A"], "Only agent tokens carry regions; a member token sees every region."),
        ("agent", [], "An agent token limited to regions needs one."),
        ("agent", ["A", " "], "A region name must not be empty."),
    ],
)
def test_token_regions_are_checked(
    token_client: TestClient, role: str, regions: list[str], message: str
) -> None:
    with services(token_client).database.write() as session:
        with pytest.raises(InvalidRequest) as caught:
            tokens.create_token(session, "p", role, "x", 0.0, regions=regions)
        assert caught.value.message == message
        assert tokens.list_tokens(session) == []
