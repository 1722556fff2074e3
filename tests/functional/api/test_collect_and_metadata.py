"""Cluster collect with Senlin's JSONPath forms, and the cluster metadata endpoints."""

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

V12 = mv("1.2")


def _cluster_with_members(client: TestClient) -> tuple[str, list[str]]:
    profile = make_profile(client)
    cluster = make_cluster(client, profile, "c1")
    nodes = []
    for i, zone in enumerate(("z1", "z2", None)):
        node = make_node(client, profile, f"n{i}", cluster_id=cluster)
        data: dict[str, Any] = {"placement": {"zone": zone}, "port": 8000 + i} if zone else {}
        meta = {"role": f"r{i}", "a.b": i} if i < 2 else {}
        set_row(client, NodeRow, node, data=data, meta_data=meta, physical_id=f"sim-{i}")
        nodes.append(node)
    finish_actions(client)
    return cluster, nodes


def _collect(client: TestClient, cluster: str, path: str) -> list[tuple[str, Any]]:
    r = client.get(f"/v1/clusters/{cluster}/attrs/{path}", headers=V12)
    assert r.status_code == 200, r.text
    return [(item["id"], item["value"]) for item in r.json()["cluster_attributes"]]


def test_collect_path_forms(client: TestClient) -> None:
    cluster, (n0, n1, n2) = _cluster_with_members(client)
    assert _collect(client, cluster, "name") == [(n0, "n0"), (n1, "n1"), (n2, "n2")]
    assert _collect(client, cluster, "$.name") == [(n0, "n0"), (n1, "n1"), (n2, "n2")]
    assert _collect(client, cluster, "metadata.role") == [(n0, "r0"), (n1, "r1")]
    assert _collect(client, cluster, 'metadata."a.b"') == [(n0, 0), (n1, 1)]
    assert _collect(client, cluster, "details.placement.zone") == [(n0, "z1"), (n1, "z2")]
    assert _collect(client, cluster, "details..zone") == [(n0, "z1"), (n1, "z2")]
    assert _collect(client, cluster, "details.port") == [(n0, 8000), (n1, 8001)]
    # Senlin answers the first match of a path that matches several values.
    assert _collect(client, cluster, "metadata.*") == [(n0, "r0"), (n1, "r1")]
    assert _collect(client, cluster, "data.placement") == [
        (n0, {"zone": "z1"}),
        (n1, {"zone": "z2"}),
    ]
    assert _collect(client, cluster, "physical_id") == [(n0, "sim-0"), (n1, "sim-1"), (n2, "sim-2")]
    assert _collect(client, cluster, "nothing.here") == []
    # Without 'details' in the path the driver's details are not included.
    assert _collect(client, cluster, "$..port") == [(n0, 8000), (n1, 8001)]


def test_collect_errors(client: TestClient) -> None:
    cluster, _ = _cluster_with_members(client)
    for blank in ("%20", "None"):
        assert_error(
            client.get(f"/v1/clusters/{cluster}/attrs/{blank}", headers=V12),
            400,
            "Required path attribute is missing.",
        )
    r = client.get(f"/v1/clusters/{cluster}/attrs/name[", headers=V12)
    assert_error(r, 400, "Invalid attribute path - Parse error near the end of string!")
    assert_error(
        client.get(f"/v1/clusters/{cluster}/attrs/name"),
        400,
        "API version '1.0' is not supported on this method.",
    )
    assert_error(
        client.get("/v1/clusters/nope/attrs/name", headers=V12),
        404,
        "The cluster 'nope' could not be found.",
    )


def test_cluster_metadata_endpoints(client: TestClient) -> None:
    cluster = make_cluster(client, make_profile(client), "c1", metadata={"a": 1})
    finish_actions(client)
    url = f"/v1/clusters/{cluster}/metadata"
    assert client.get(url).json() == {"metadata": {"a": 1}}
    r = client.post(url, json={"metadata": {"b": 2}})
    assert r.status_code == 200 and r.json() == {"metadata": {"a": 1, "b": 2}}
    assert client.get(f"/v1/clusters/{cluster}").json()["cluster"]["metadata"] == {"a": 1, "b": 2}
    assert client.put(url, json={"metadata": {"c": 3}}).json() == {"metadata": {"c": 3}}
    assert client.get(f"{url}/c").json() == {"meta": {"c": 3}}
    assert client.put(f"{url}/d", json={"meta": {"d": [4]}}).json() == {"meta": {"d": [4]}}
    assert client.get(url).json() == {"metadata": {"c": 3, "d": [4]}}
    assert client.delete(f"{url}/c").status_code == 204
    assert client.get(url).json() == {"metadata": {"d": [4]}}
    assert_error(client.delete(f"{url}/c"), 404, "The metadata key 'c' could not be found.")
    assert_error(client.get(f"{url}/zz"), 404, "The metadata key 'zz' could not be found.")
    assert_error(
        client.put(f"{url}/d", json={"meta": {"e": 1}}),
        400,
        'The body must be {"meta": {"d": <value>}}.',
    )
    assert_error(
        client.post(url, json={"metadata": "x"}),
        400,
        "The value (x) is not a valid JSON map for 'metadata'.",
    )
    assert_error(
        client.post(url, json={"metadata": {}, "other": 1}),
        400,
        "Additional properties are not allowed ('other' was unexpected)",
    )
    assert client.put(url, json={"metadata": {}}).json() == {"metadata": {}}
    assert_error(
        client.get("/v1/clusters/nope/metadata"), 404, "The cluster 'nope' could not be found."
    )
