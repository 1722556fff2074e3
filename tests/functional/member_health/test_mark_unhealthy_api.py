"""``PATCH /v1/clusters/<c>/nodes/<n>``: Heat's mark-unhealthy body, texts and transitions."""

from __future__ import annotations

from typing import Any

import pytest
from tests.functional.conformance.conftest import Api

DEFAULT_REASON = "state changed by resource_mark_unhealthy api"


def patch(api: Api, cluster: str, node: str, body: Any) -> Any:
    return api.client.patch(f"/v1/clusters/{cluster}/nodes/{node}", json=body)


def error(response: Any, status: int, message: str, kind: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status and body["error"]["code"] == status
    assert body["error"]["message"] == message
    assert body["error"]["type"] == kind


def mark_events(api: Api, node: str) -> list[tuple[str, str, str]]:
    return [
        (e["action"], e["status"], e["status_reason"])
        for e in api.events(oid=node)
        if e["action"] in ("NODE_MARK_UNHEALTHY", "NODE_MARK_HEALTHY")
    ]


@pytest.fixture
def member(api: Api) -> tuple[str, str]:
    cluster = api.cluster(2, one_by_one=False)
    return cluster, api.member_ids(cluster)[0]


BAD_BODIES = [
    (
        {"mark_unhealthy": True, "invalid_key1": 1, "invalid_key2": 2},
        "Invalid keys in resource mark unhealthy {'invalid_key1', 'invalid_key2'}",
    ),
    # Unknown keys are checked first, so they win over a missing mark_unhealthy.
    ({"unhealthy": True}, "Invalid keys in resource mark unhealthy {'unhealthy'}"),
    ({}, "Missing mandatory (mark_unhealthy) key from mark unhealthy request"),
    (
        {"resource_status_reason": "broken"},
        "Missing mandatory (mark_unhealthy) key from mark unhealthy request",
    ),
    *[
        (
            {"mark_unhealthy": value},
            f'Unrecognized value "{shown}" for "mark_unhealthy", '
            "acceptable values are: true, false.",
        )
        for value, shown in [
            (1, "1"),
            (0, "0"),
            ("yes", "yes"),
            ("no", "no"),
            (None, "None"),
            ("", ""),
            (1.0, "1.0"),
        ]
    ],
    (
        {"mark_unhealthy": True, "resource_status_reason": 5},
        "The value for resource_status_reason must be a string.",
    ),
    (
        {"mark_unhealthy": True, "resource_status_reason": ["a"]},
        "The value for resource_status_reason must be a string.",
    ),
    (
        [{"mark_unhealthy": True}],
        "The request body must be a JSON object with a 'mark_unhealthy' key.",
    ),
]


def test_every_bad_body_is_400_with_heats_text_and_changes_nothing(
    api: Api, member: tuple[str, str]
) -> None:
    cluster, node = member
    before = api.node(node)
    for body, message in BAD_BODIES:
        error(patch(api, cluster, node, body), 400, message, "BadRequest")
    r = api.client.patch(
        f"/v1/clusters/{cluster}/nodes/{node}",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 400, r.text
    assert api.node(node) == before
    assert mark_events(api, node) == []


@pytest.mark.parametrize(("value", "unhealthy"), [("True", True), ("FALSE", False), ("true", True)])
def test_boolean_strings_are_accepted_case_insensitively(
    api: Api, member: tuple[str, str], value: str, unhealthy: bool
) -> None:
    cluster, node = member
    assert patch(api, cluster, node, {"mark_unhealthy": True}).status_code == 200
    r = patch(api, cluster, node, {"mark_unhealthy": value})
    assert r.status_code == 200, r.text
    assert r.json()["node"]["health"] == ("CHECK_FAILED" if unhealthy else "CHECK_COMPLETE")


def test_transitions_default_reason_and_events(api: Api, member: tuple[str, str]) -> None:
    cluster, node = member
    start = api.node(node)
    assert start is not None and start["health"] != "CHECK_FAILED"

    # false on a member that is not CHECK_FAILED: nothing changes.
    r = patch(api, cluster, node, {"mark_unhealthy": False})
    assert r.status_code == 200, r.text
    assert r.json()["changed"] is False
    assert r.json()["message"] == "The node is not marked unhealthy; nothing changed."
    assert api.node(node) == start

    # true, no reason (and an empty one): the default reason.
    for body in ({"mark_unhealthy": True}, {"mark_unhealthy": True, "resource_status_reason": ""}):
        r = patch(api, cluster, node, body)
        assert r.status_code == 200, r.text
        view = r.json()["node"]
        assert view["id"] == node and view["health"] == "CHECK_FAILED"
        assert view["health_reason"] == DEFAULT_REASON
        assert view["health_marked_by"] and view["health_marked_at"]
        assert view["status"] == "ACTIVE"  # the node's own status is not touched
    assert mark_events(api, node) == [("NODE_MARK_UNHEALTHY", "CHECK_FAILED", DEFAULT_REASON)]

    # a new reason is a change (and an event); the same one again is not.
    for _ in range(2):
        r = patch(api, cluster, node, {"mark_unhealthy": True, "resource_status_reason": "disk"})
    assert r.json()["changed"] is False
    assert api.node(node)["health_reason"] == "disk"  # type: ignore[index]

    r = patch(api, cluster, node, {"mark_unhealthy": False, "resource_status_reason": "fixed"})
    assert r.status_code == 200 and r.json()["changed"] is True
    assert r.json()["node"]["health"] == "CHECK_COMPLETE"
    assert r.json()["node"]["health_reason"] == "fixed"
    assert mark_events(api, node) == [
        ("NODE_MARK_UNHEALTHY", "CHECK_FAILED", DEFAULT_REASON),
        ("NODE_MARK_UNHEALTHY", "CHECK_FAILED", "disk"),
        ("NODE_MARK_HEALTHY", "CHECK_COMPLETE", "fixed"),
    ]
    # false again: CHECK_COMPLETE stays, no event.
    assert patch(api, cluster, node, {"mark_unhealthy": False}).json()["changed"] is False
    assert len(mark_events(api, node)) == 3
    shown = api.node(node)
    assert shown is not None and shown["health"] == "CHECK_COMPLETE"


def test_lookup_by_name_and_short_id_and_404s(api: Api, member: tuple[str, str]) -> None:
    cluster, node = member
    other = api.cluster(1, name="other", one_by_one=False)
    foreign = api.member_ids(other)[0]
    name = api.node(node)["name"]  # type: ignore[index]
    r = patch(api, cluster, name, {"mark_unhealthy": True})
    assert r.status_code == 200 and r.json()["node"]["id"] == node
    r = patch(api, cluster, node[:8], {"mark_unhealthy": False})
    assert r.status_code == 200 and r.json()["node"]["id"] == node
    r = patch(api, "other", foreign, {"mark_unhealthy": True})  # the cluster by name
    assert r.status_code == 200 and r.json()["node"]["health"] == "CHECK_FAILED"

    c_name = api.get_cluster(cluster)["name"]
    for identity in (foreign, api.node(foreign)["name"], foreign[:8], "nope"):  # type: ignore[index]
        error(
            patch(api, cluster, identity, {"mark_unhealthy": True}),
            404,
            f"The node '{identity}' is not a member of cluster '{c_name}'.",
            "ResourceNotFound",
        )
    error(
        patch(api, "missing", node, {"mark_unhealthy": True}),
        404,
        "The cluster 'missing' could not be found.",
        "ResourceNotFound",
    )
    # An orphan (a node in no cluster) is not a member either.
    profile = api.profile()
    r = api.client.post("/v1/nodes", json={"node": {"name": "lone", "profile_id": profile}})
    lone = r.json()["node"]["id"]
    api.wait(r.headers["Location"].rsplit("/", 1)[1])
    error(
        patch(api, cluster, lone, {"mark_unhealthy": True}),
        404,
        f"The node '{lone}' is not a member of cluster '{c_name}'.",
        "ResourceNotFound",
    )
    assert api.node(foreign)["health"] == "CHECK_FAILED"  # type: ignore[index]
    assert api.node(lone)["health"] != "CHECK_FAILED"  # type: ignore[index]
