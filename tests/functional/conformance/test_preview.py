"""``preview_scale_in`` names what the next scale-in removes, and changes nothing."""

from __future__ import annotations

from tests.functional.conformance.conftest import Api, deletion_spec


def preview(api: Api, cluster: str, count: int, **extra: object) -> list[dict[str, object]]:
    r = api.client.post(
        f"/v1/clusters/{cluster}/actions",
        json={"preview_scale_in": {"count": count, **extra}},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["action"] == "CLUSTER_SCALE_IN" and body["count"] == len(body["victims"])
    assert isinstance(body["seed"], int)
    return list(body["victims"])


def test_preview_matches_the_scale_in_that_follows(api: Api) -> None:
    cluster = api.cluster(5)
    n = api.member_ids(cluster)
    api.attach(cluster, deletion_spec(criteria="OLDEST_FIRST"))
    api.set_metadata(n[0], {"protected": True})
    api.set_metadata(n[3], {"deletion_cost": -1})
    victims = preview(api, cluster, 2)
    assert [(v["node_id"], v["rule"]) for v in victims] == [
        (n[3], "OLDEST_FIRST"),
        (n[1], "OLDEST_FIRST"),
    ]
    assert victims[0]["index"] == 4 and victims[0]["name"]
    # Nothing changed: no action, same members.
    assert api.member_ids(cluster) == n
    assert not [
        a
        for a in api.client.get("/v1/actions").json()["actions"]
        if a["action"] == "CLUSTER_SCALE_IN"
    ]
    action = api.act(cluster, {"scale_in": {"count": 2}})
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert action["data"]["deletion"]["candidates"] == [v["node_id"] for v in victims]
    assert api.member_ids(cluster) == [n[0], n[2], n[4]]


def test_preview_without_a_deletion_policy_matches_too(api: Api) -> None:
    cluster = api.cluster(6)
    victims = preview(api, cluster, 2, seed=1234)
    assert len(victims) == 2 and {v["rule"] for v in victims} == {"RANDOM"}
    # The same seed gives the same RANDOM choice, and the action run with it removes them.
    assert preview(api, cluster, 2, seed=1234) == victims
    action = api.act(cluster, {"scale_in": {"count": 2, "seed": 1234}})
    assert action["outputs"]["nodes_removed"] == sorted(str(v["node_id"]) for v in victims)
    assert action["outputs"]["shrink"]["seed"] == 1234
    assert action["outputs"]["shrink"]["victims"] == [v["node_id"] for v in victims]
    # Without a seed the preview picks one and says which.
    body = api.client.post(
        f"/v1/clusters/{cluster}/actions", json={"preview_scale_in": {"count": 1}}
    ).json()
    assert isinstance(body["seed"], int)
    target = api.member_ids(cluster)[2]
    r = api.client.patch(f"/v1/clusters/{cluster}/nodes/{target}", json={"mark_unhealthy": True})
    assert r.status_code == 200, r.text
    victims = preview(api, cluster, 1)
    assert [(v["node_id"], v["rule"]) for v in victims] == [
        (target, "marked unhealthy (CHECK_FAILED)")
    ]
    action = api.act(cluster, {"scale_in": {"count": 1}})
    assert action["outputs"]["nodes_removed"] == [target]
