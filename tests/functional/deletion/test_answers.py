"""What DELETE, GET and lists answer while a resource is being deleted, for users and agents.

The engine is off: a deletion stays in progress (its action READY) for as long as the test wants.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from tests.functional.api.helpers import assert_error, services
from tests.functional.deletion.conftest import Callers
from tests.functional.deletion.support import SIM_SPEC

from herd.store import tombstones
from herd.store.models import ActionRow, ClusterRow, NodeRow, TombstoneRow
from herd.types import ActionStatus, ClusterStatus, ResourceType

DELETION_POLICY = {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}}


def _profile(c: Callers, name: str = "prof") -> str:
    r = c.client.post(
        "/v1/profiles", json={"profile": {"name": name, "spec": SIM_SPEC}}, headers=c.member
    )
    assert r.status_code == 201, r.text
    return str(r.json()["profile"]["id"])


def _cluster(c: Callers, profile: str, name: str = "c1") -> str:
    r = c.client.post(
        "/v1/clusters", json={"cluster": {"name": name, "profile_id": profile}}, headers=c.member
    )
    assert r.status_code == 202, r.text
    cid = str(r.json()["cluster"]["id"])
    _finish(c, ClusterStatus.ACTIVE, cid)
    return cid


def _finish(c: Callers, status: ClusterStatus, cluster_id: str | None = None) -> None:
    """Play the engine: end queued actions (and make a cluster ACTIVE)."""
    with services(c.client).database.write() as session:
        for row in session.scalars(select(ActionRow).where(ActionRow.status == "READY")):
            row.status = ActionStatus.SUCCEEDED
        if cluster_id:
            cluster = session.get(ClusterRow, cluster_id)
            assert cluster is not None
            cluster.status = status


def _actions(c: Callers, target: str) -> int:
    with services(c.client).database.read() as session:
        return int(session.scalar(select(func.count()).where(ActionRow.target == target)) or 0)


def _tombstone(c: Callers, kind: ResourceType, rid: str) -> TombstoneRow | None:
    with services(c.client).database.read() as session:
        return tombstones.get(session, kind, rid)


def test_cluster_delete_answers(callers: Callers) -> None:
    c = callers
    cid = _cluster(c, _profile(c))
    r = c.client.delete(f"/v1/clusters/{cid}", headers=c.member)
    assert r.status_code == 202
    action_id = r.headers["Location"].rsplit("/", 1)[1]
    stone = _tombstone(c, ResourceType.CLUSTER, cid)
    assert stone is not None
    assert (stone.status, stone.action_id, stone.project) == ("DELETING", action_id, "p1")
    before = _actions(c, cid)

    # users see it, DELETING, with deleted_at
    for who in (c.member, c.admin):
        view = c.client.get(f"/v1/clusters/{cid}", headers=who).json()["cluster"]
        assert view["status"] == "DELETING"
        assert view["deleted_at"] and view["deleted_at"].endswith("Z")
        listed = c.client.get("/v1/clusters", headers=who).json()["clusters"]
        assert [x["id"] for x in listed] == [cid]
        assert listed[0]["status"] == "DELETING"

    # agents: 404 and omitted, also with global_project
    assert_error(
        c.client.get(f"/v1/clusters/{cid}", headers=c.agent),
        404,
        f"The cluster '{cid}' could not be found.",
        "ResourceNotFound",
    )
    for query in ("", "?global_project=true"):
        assert c.client.get(f"/v1/clusters{query}", headers=c.agent).json()["clusters"] == []

    # a repeated DELETE starts nothing
    for _ in range(3):
        r = c.client.delete(f"/v1/clusters/{cid}", headers=c.member)
        assert r.status_code == 204 and "Location" not in r.headers and r.content == b""
    assert _actions(c, cid) == before

    # the deletion finishes: gone for everyone
    with services(c.client).database.write() as session:
        session.delete(session.get(ClusterRow, cid))
    assert _tombstone(c, ResourceType.CLUSTER, cid) is None
    for who in (c.member, c.agent):
        assert c.client.get(f"/v1/clusters/{cid}", headers=who).status_code == 404
    assert c.client.delete(f"/v1/clusters/{cid}", headers=c.member).status_code == 404


def test_failed_deletion_is_retried(callers: Callers) -> None:
    c = callers
    cid = _cluster(c, _profile(c))
    first = c.client.delete(f"/v1/clusters/{cid}", headers=c.member)
    # the engine failed it: action FAILED, tombstone kept as ERROR, cluster ERROR
    with services(c.client).database.write() as session:
        session.get(ActionRow, first.headers["Location"].rsplit("/", 1)[1]).status = "FAILED"  # type: ignore[union-attr]
        tombstones.mark_error(session, ResourceType.CLUSTER, cid, "Failed in deleting nodes: boom")
        session.get(ClusterRow, cid).status = "ERROR"  # type: ignore[union-attr]
    stone = _tombstone(c, ResourceType.CLUSTER, cid)
    assert stone is not None and (stone.status, stone.reason) == (
        "ERROR",
        "Failed in deleting nodes: boom",
    )
    # still hidden from agents
    assert c.client.get(f"/v1/clusters/{cid}", headers=c.agent).status_code == 404
    retry = c.client.delete(f"/v1/clusters/{cid}", headers=c.member)
    assert retry.status_code == 202
    new_action = retry.headers["Location"].rsplit("/", 1)[1]
    stone = _tombstone(c, ResourceType.CLUSTER, cid)
    assert stone is not None and (stone.status, stone.action_id, stone.reason) == (
        "DELETING",
        new_action,
        "",
    )
    assert (
        c.client.get(f"/v1/clusters/{cid}", headers=c.member).json()["cluster"]["status"]
        == "DELETING"
    )
    assert c.client.delete(f"/v1/clusters/{cid}", headers=c.member).status_code == 204
    # an action that ended without finishing (cancelled, timed out) is retried as well
    with services(c.client).database.write() as session:
        session.get(ActionRow, new_action).status = "CANCELLED"  # type: ignore[union-attr]
    assert c.client.delete(f"/v1/clusters/{cid}", headers=c.member).status_code == 202


def test_references_to_a_deleting_resource_are_409(callers: Callers) -> None:
    c = callers
    profile = _profile(c)
    cid = _cluster(c, profile)
    r = c.client.post(
        "/v1/nodes",
        json={"node": {"name": "n1", "profile_id": profile, "cluster_id": cid}},
        headers=c.member,
    )
    assert r.status_code == 202
    nid = r.json()["node"]["id"]
    _finish(c, ClusterStatus.ACTIVE, cid)
    policy = c.client.post(
        "/v1/policies", json={"policy": {"name": "dp", "spec": DELETION_POLICY}}, headers=c.member
    ).json()["policy"]["id"]
    assert c.client.delete(f"/v1/clusters/{cid}", headers=c.member).status_code == 202
    deleting = f"The cluster '{cid}' is being deleted: it cannot be used or changed."

    def conflict(response: Any, message: str = deleting) -> None:
        assert_error(response, 409, message, "ResourceIsDeleting")

    conflict(
        c.client.post(
            "/v1/nodes",
            json={"node": {"name": "n2", "profile_id": profile, "cluster_id": cid}},
            headers=c.member,
        )
    )
    conflict(
        c.client.patch(f"/v1/clusters/{cid}", json={"cluster": {"name": "x"}}, headers=c.member)
    )
    bodies: list[dict[str, Any]] = [
        {"scale_out": {"count": 1}},
        {"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 2}},
        {"check": {}},
        {"policy_attach": {"policy_id": policy}},
    ]
    for body in bodies:
        conflict(c.client.post(f"/v1/clusters/{cid}/actions", json=body, headers=c.member))
    conflict(c.client.patch(f"/v1/nodes/{nid}", json={"node": {"name": "y"}}, headers=c.member))
    conflict(c.client.post(f"/v1/nodes/{nid}/actions", json={"check": {}}, headers=c.member))
    conflict(c.client.delete(f"/v1/nodes/{nid}", headers=c.member))
    # its members are hidden from agents too
    assert c.client.get(f"/v1/nodes/{nid}", headers=c.agent).status_code == 404
    assert c.client.get("/v1/nodes", headers=c.agent).json()["nodes"] == []
    assert [n["id"] for n in c.client.get("/v1/nodes", headers=c.member).json()["nodes"]] == [nid]

    # a tombstoned profile or policy (as a crashed purge could leave) cannot be referred to
    other = _cluster(c, profile, "c2")
    with services(c.client).database.write() as session:
        for kind, rid in ((ResourceType.PROFILE, profile), (ResourceType.POLICY, policy)):
            assert tombstones.insert(
                session,
                resource_type=kind,
                resource_id=rid,
                project="p1",
                requested_by="t",
                action_id=None,
                now=1.0,
            )
    conflict(
        c.client.post(
            "/v1/clusters",
            json={"cluster": {"name": "c3", "profile_id": profile}},
            headers=c.member,
        ),
        f"The profile '{profile}' is being deleted: it cannot be used or changed.",
    )
    conflict(
        c.client.post(
            f"/v1/clusters/{other}/actions",
            json={"policy_attach": {"policy_id": policy}},
            headers=c.member,
        ),
        f"The policy '{policy}' is being deleted: it cannot be used or changed.",
    )
    conflict(
        c.client.patch(f"/v1/policies/{policy}", json={"policy": {"name": "z"}}, headers=c.member),
        f"The policy '{policy}' is being deleted: it cannot be used or changed.",
    )
    assert c.client.get(f"/v1/profiles/{profile}", headers=c.agent).status_code == 404
    assert c.client.get("/v1/policies", headers=c.agent).json()["policies"] == []
    assert c.client.get(f"/v1/profiles/{profile}", headers=c.member).status_code == 200


def test_node_delete_answers(callers: Callers) -> None:
    c = callers
    profile = _profile(c)
    r = c.client.post(
        "/v1/nodes", json={"node": {"name": "n1", "profile_id": profile}}, headers=c.member
    )
    nid = r.json()["node"]["id"]
    with services(c.client).database.write() as session:
        session.get(NodeRow, nid).status = "ACTIVE"  # type: ignore[union-attr]
    _finish(c, ClusterStatus.ACTIVE)
    r = c.client.delete(f"/v1/nodes/{nid}", headers=c.member)
    assert r.status_code == 202 and r.headers["Location"].startswith("/v1/actions/")
    view = c.client.get(f"/v1/nodes/{nid}", headers=c.member).json()["node"]
    assert view["status"] == "DELETING" and view["deleted_at"]
    assert c.client.get(f"/v1/nodes/{nid}", headers=c.agent).status_code == 404
    assert c.client.get("/v1/nodes?global_project=true", headers=c.agent).json()["nodes"] == []
    assert c.client.delete(f"/v1/nodes/{nid}", headers=c.member).status_code == 204
    with services(c.client).database.write() as session:
        session.delete(session.get(NodeRow, nid))
    assert _tombstone(c, ResourceType.NODE, nid) is None
    assert c.client.delete(f"/v1/nodes/{nid}", headers=c.member).status_code == 404


def test_profile_and_policy_deletes_are_synchronous(callers: Callers) -> None:
    c = callers
    profile = _profile(c)
    policy = c.client.post(
        "/v1/policies", json={"policy": {"name": "dp", "spec": DELETION_POLICY}}, headers=c.member
    ).json()["policy"]["id"]
    for path in (f"/v1/profiles/{profile}", f"/v1/policies/{policy}"):
        assert c.client.delete(path, headers=c.member).status_code == 204
        assert c.client.get(path, headers=c.member).status_code == 404
        assert c.client.delete(path, headers=c.member).status_code == 404
    with services(c.client).database.read() as session:
        assert tombstones.list_all(session) == []
    used = _profile(c, "used")
    _cluster(c, used)
    assert_error(
        c.client.delete(f"/v1/profiles/{used}", headers=c.member),
        409,
        f"The profile '{used}' cannot be deleted: still referenced by some clusters and/or nodes.",
        "ResourceInUse",
    )


def test_region_filter(callers: Callers) -> None:
    c = callers
    profile = _profile(c)
    spans_by_member, spans_by_record, elsewhere = (
        _cluster(c, profile, name) for name in ("a", "b", "c")
    )
    with services(c.client).database.write() as session:
        session.add(
            NodeRow(
                id="n" * 36,
                name="m",
                cluster_id=spans_by_member,
                profile_id=profile,
                init_at=1.0,
                project="p1",
                data={"placement": {"region_name": "R1", "zone": None}},
            )
        )
        session.get(ClusterRow, spans_by_record).data = {"regions": ["R0", "R1"]}  # type: ignore[union-attr]
        session.get(ClusterRow, elsewhere).data = {"regions": ["R2"]}  # type: ignore[union-attr]
    listed = c.client.get("/v1/clusters?region=R1&global_project=true", headers=c.agent)
    assert sorted(x["id"] for x in listed.json()["clusters"]) == sorted(
        [spans_by_member, spans_by_record]
    )
    assert [
        x["id"] for x in c.client.get("/v1/clusters?region=R2", headers=c.member).json()["clusters"]
    ] == [elsewhere]
    assert c.client.get("/v1/clusters?region=R9", headers=c.member).json()["clusters"] == []
    c.client.delete(f"/v1/clusters/{spans_by_record}", headers=c.member)
    listed = c.client.get("/v1/clusters?region=R1", headers=c.agent)
    assert [x["id"] for x in listed.json()["clusters"]] == [spans_by_member]
