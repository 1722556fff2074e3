"""What the dashboard polls (issue 26): ETags and 304s, member pages filtered on the server,
cluster views without member ids, the stored size history, request ids on actions and events,
and the access log line of each request."""

from __future__ import annotations

import io
import json
import logging

from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import (
    SIM_SPEC,
    assert_error,
    make_cluster,
    make_profile,
    mv,
    services,
)
from tests.waiting import wait_for_action

from herd.config import Settings
from herd.observability import logs
from herd.store import nodes as node_store
from herd.types import HealthStatus


def _members(client: TestClient, cluster_id: str, count: int) -> list[str]:
    """Member rows written straight to the store (the engine is not running here)."""
    with services(client).database.write() as session:
        cluster = client.get(f"/v1/clusters/{cluster_id}").json()["cluster"]
        rows = [
            node_store.planned_values(
                name=f"m{i:03d}",
                profile_id=cluster["profile_id"],
                cluster_id=cluster_id,
                index=i + 1,
                project=cluster["project"],
                user=cluster["user"],
                placement={"zone": f"z{i % 3}", "region_name": "east" if i % 2 else "west"},
                now=1000.0 + i,
            )
            for i in range(count)
        ]
        node_store.insert_many(session, rows)
        return [row["id"] for row in rows]


def test_an_unchanged_list_is_a_304_without_a_body(client: TestClient) -> None:
    cluster_id = make_cluster(client, make_profile(client))
    _members(client, cluster_id, 5)
    path = f"/v1/nodes?cluster_id={cluster_id}&limit=2&sort=index:asc"
    first = client.get(path)
    tag = first.headers["etag"]
    assert tag.startswith('W/"')
    again = client.get(path, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == tag
    # anything else changes the tag: another page, or a changed member
    assert client.get(f"{path}&marker={first.json()['nodes'][-1]['id']}").headers["etag"] != tag
    node = first.json()["nodes"][0]["id"]
    with services(client).database.write() as session:
        node_store.update_many(session, [{"id": node, "name": "renamed"}])
    changed = client.get(path, headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag
    # the cluster view is tagged too; errors are not
    one = client.get(f"/v1/clusters/{cluster_id}")
    assert (
        client.get(
            f"/v1/clusters/{cluster_id}", headers={"If-None-Match": one.headers["etag"]}
        ).status_code
        == 304
    )
    assert "etag" not in client.get("/v1/clusters/nope").headers


def test_member_pages_are_filtered_and_sorted_on_the_server(client: TestClient) -> None:
    cluster_id = make_cluster(client, make_profile(client))
    ids = _members(client, cluster_id, 12)
    base = f"/v1/nodes?cluster_id={cluster_id}"

    def names(query: str) -> list[str]:
        r = client.get(base + query)
        assert r.status_code == 200, r.text
        return [n["name"] for n in r.json()["nodes"]]

    assert names("&sort=index:desc&limit=3") == ["m011", "m010", "m009"]
    page = client.get(base + "&sort=index:asc&limit=5").json()["nodes"]
    assert names(f"&sort=index:asc&limit=5&marker={page[-1]['id']}") == [
        f"m{i:03d}" for i in range(5, 10)
    ]
    assert names("&zone=z1&sort=index:asc") == ["m001", "m004", "m007", "m010"]
    assert names("&region=east&zone=z0&sort=index:asc") == ["m003", "m009"]
    assert names("&name=m007") == ["m007"]
    with services(client).database.write() as session:
        node_store.update_many(
            session, [{"id": ids[4], "health": HealthStatus.CHECK_FAILED, "health_reason": "x"}]
        )
    assert names("&health=CHECK_FAILED") == ["m004"]
    assert names("&sort=health:asc,index:asc&limit=1") == ["m004"]
    assert_error(client.get(base + "&sort=zone"), 400, "Unsupported sort key 'zone' for 'sort'.")


def test_show_nodes_false_counts_the_members_instead(client: TestClient) -> None:
    cluster_id = make_cluster(client, make_profile(client))
    _members(client, cluster_id, 7)
    full = client.get(f"/v1/clusters/{cluster_id}").json()["cluster"]
    assert len(full["nodes"]) == 7 and "node_count" not in full
    counted = client.get(f"/v1/clusters/{cluster_id}?show_nodes=false").json()["cluster"]
    assert counted["node_count"] == 7 and "nodes" not in counted
    listed = client.get("/v1/clusters?show_nodes=false").json()["clusters"]
    assert [c["node_count"] for c in listed] == [7]
    assert_error(
        client.get(f"/v1/clusters/{cluster_id}?show_nodes=maybe"),
        400,
        "Invalid value 'maybe' specified for 'show_nodes'",
    )


def test_the_size_history_is_stored_as_data(client: TestClient) -> None:
    cluster_id = make_cluster(client, make_profile(client), desired_capacity=0)
    ids = _members(client, cluster_id, 4)
    with services(client).database.write() as session:
        node_store.delete_many(session, ids[:1])
    with services(client).database.write() as session:  # a health change is no size change
        node_store.update_many(session, [{"id": ids[1], "health": HealthStatus.CHECK_FAILED}])
    points = client.get(f"/v1/clusters/{cluster_id}/size-history").json()["size_history"]
    assert [(p["members"], p["desired_capacity"]) for p in points] == [(0, 0), (4, 0), (3, 0)]
    assert all(p["at"].endswith("Z") for p in points)
    newest = client.get(f"/v1/clusters/{cluster_id}/size-history?limit=1").json()["size_history"]
    assert [p["members"] for p in newest] == [3]
    assert_error(
        client.get(f"/v1/clusters/{cluster_id}/size-history?limit=0"),
        400,
        "Invalid value '0' specified for 'limit'",
    )
    assert_error(
        client.get(f"/v1/clusters/{cluster_id}/size-history?since=1"),
        400,
        "Invalid parameter since",
    )
    assert client.get("/v1/clusters/nope/size-history").status_code == 404


def test_actions_and_their_events_carry_the_request_id(
    api_client: ApiClientFactory, settings: Settings
) -> None:
    client = api_client(settings, start_engine=True)
    profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}})
    profile_id = profile.json()["profile"]["id"]
    r = client.post(
        "/v1/clusters",
        json={"cluster": {"name": "c", "profile_id": profile_id, "desired_capacity": 2}},
        headers={"X-Request-Id": "trace-create"},
    )
    cluster_id = r.json()["cluster"]["id"]
    action_id = r.headers["Location"].rsplit("/", 1)[1]
    action = wait_for_action(client, action_id)
    assert action["status"] == "SUCCEEDED" and action["request_id"] == "trace-create"
    # the children the engine made for it inherit the id, and so do the events they record
    caused = client.get("/v1/actions?request_id=trace-create").json()["actions"]
    assert {a["action"] for a in caused} >= {"CLUSTER_CREATE", "NODE_CREATE"}
    assert len(caused) == 3
    events = client.get("/v1/events?request_id=trace-create").json()["events"]
    assert {e["otype"] for e in events} >= {"CLUSTER", "NODE"}
    assert all(e["request_id"] == "trace-create" for e in events)
    # and the size history followed the creation
    points = client.get(f"/v1/clusters/{cluster_id}/size-history").json()["size_history"]
    assert points[-1]["members"] == 2 and points[-1]["desired_capacity"] == 2
    r = client.post(
        f"/v1/clusters/{cluster_id}/actions",
        json={"scale_in": {"count": 1}},
        headers={**mv("1.14"), "X-Request-Id": "trace-shrink"},
    )
    assert wait_for_action(client, r.json()["action"])["request_id"] == "trace-shrink"
    points = client.get(f"/v1/clusters/{cluster_id}/size-history").json()["size_history"]
    assert (points[-1]["members"], points[-1]["desired_capacity"]) == (1, 1)


def test_one_json_access_line_per_request_with_the_route_template(client: TestClient) -> None:
    stream = io.StringIO()
    logs.configure("json", stream=stream)
    try:
        cluster_id = make_cluster(client, make_profile(client))
        client.get(f"/v1/clusters/{cluster_id}", headers={"X-Request-Id": "trace-read"})
        client.get("/healthz", headers={"X-Request-Id": "trace-probe"})
        client.head(f"/v1/clusters/{cluster_id}", headers={"X-Request-Id": "trace-head"})
    finally:
        logs.configure("text")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    access = {line["request_id"]: line for line in lines if line["logger"] == "herd.access"}
    read = access["trace-read"]
    assert read["level"] == "INFO"
    assert (read["method"], read["route"], read["status"]) == (
        "GET",
        "/v1/clusters/{cluster_id}",
        200,
    )
    assert isinstance(read["duration_ms"], float) and read["duration_ms"] >= 0
    assert cluster_id not in read["message"]
    assert access["trace-head"]["route"] == "/v1/clusters/{cluster_id}"
    assert "trace-probe" not in access  # probes are DEBUG, under the INFO level set here


def test_http_client_lines_are_debug() -> None:
    stream = io.StringIO()
    logs.configure("json", stream=stream)
    try:
        logging.getLogger("httpx").info("HTTP Request: GET http://x/health 200 OK")
        logging.getLogger("httpx").warning("a client warning stays")
    finally:
        logs.configure("text")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["message"] for line in lines] == ["a client warning stays"]


def test_cluster_health_of_one_member(client: TestClient) -> None:
    cluster_id = make_cluster(client, make_profile(client))
    ids = _members(client, cluster_id, 3)
    one = client.get(f"/v1/clusters/{cluster_id}/health?member={ids[1]}").json()["cluster_health"]
    assert [m["id"] for m in one["members"]] == [ids[1]]
    assert one["summary"]["members"] == 1 and one["checking"] == "NO_POLICY"
    every = client.get(f"/v1/clusters/{cluster_id}/health").json()["cluster_health"]
    assert [m["id"] for m in every["members"]] == ids
    other = make_cluster(client, make_profile(client, "p2"), name="c2")
    assert_error(
        client.get(f"/v1/clusters/{other}/health?member={ids[1]}"),
        404,
        f"The node '{ids[1]}' is not a member of the cluster '{other}'.",
    )
    assert_error(
        client.get(f"/v1/clusters/{cluster_id}/health?node={ids[1]}"), 400, "Invalid parameter node"
    )
