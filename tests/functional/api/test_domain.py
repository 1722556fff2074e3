"""``domain``: the requester's project domain (``auth: keystone``), else empty as before.

The Keystone half runs on a real Keystone in tests/e2e/test_nova_trusts.py; here the
services are called with a context as ``auth: keystone`` builds it, and through the API
with ``auth: none``.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import APIVersion
from herd.api.schemas.clusters import ClusterCreate
from herd.api.schemas.nodes import NodeCreate
from herd.api.services import clusters, nodes

SIM = {"type": "herd.sim", "version": "1.0", "properties": {}}


def test_auth_none_keeps_an_empty_domain(client: TestClient) -> None:
    made = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": SIM}})
    assert made.status_code == 201 and made.json()["profile"]["domain"] == ""
    body = {"cluster": {"name": "c", "profile_id": made.json()["profile"]["id"]}}
    made = client.post("/v1/clusters", json=body)
    assert made.status_code == 202 and made.json()["cluster"]["domain"] == ""


def test_a_keystone_callers_domain_is_stored_and_members_take_their_clusters(
    client: TestClient,
) -> None:
    services: Services = client.app.state.herd  # type: ignore[attr-defined]
    profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": SIM}})
    profile_id = profile.json()["profile"]["id"]
    version = APIVersion(1, 14)
    keystone = RequestContext("u1", "default", ("member",), version, domain="dom-1")
    other = RequestContext("u2", "default", ("member",), version, domain="dom-2")
    with services.database.write() as session:
        cluster, _ = clusters.create_cluster(
            session, services, keystone, ClusterCreate(name="c", profile_id=profile_id)
        )
        member, _ = nodes.create_node(
            session,
            services,
            other,
            NodeCreate(name="m", profile_id=profile_id, cluster_id=cluster.id),
        )
        lone, _ = nodes.create_node(
            session, services, other, NodeCreate(name="n", profile_id=profile_id)
        )
        ids = cluster.id, member.id, lone.id
    assert client.get(f"/v1/clusters/{ids[0]}").json()["cluster"]["domain"] == "dom-1"
    assert client.get(f"/v1/nodes/{ids[1]}").json()["node"]["domain"] == "dom-1"
    assert client.get(f"/v1/nodes/{ids[2]}").json()["node"]["domain"] == "dom-2"
