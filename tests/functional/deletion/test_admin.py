"""``GET /v1/deletions`` and ``DELETE /v1/deletions/<type>/<id>?force=true`` (admin only)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from sqlalchemy import select
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import assert_error, services
from tests.functional.deletion.conftest import Callers
from tests.functional.deletion.support import SIM_SPEC, issue_tokens, region_configs
from tests.waiting import wait_for_action

from herd.api.auth import AGENT_REFUSED
from herd.config import Settings
from herd.regions import RegionalCopy
from herd.store import actions as action_store
from herd.store import locks, tombstones
from herd.store.models import ActionRow, ClusterLockRow, ClusterRow, EngineRow, EventRow, NodeRow
from herd.types import ActionName, ActionStatus, LockScope, NodeStatus


def _deleting_cluster(c: Callers) -> tuple[str, str]:
    profile = c.client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}}, headers=c.member
    ).json()["profile"]["id"]
    created = c.client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": profile}}, headers=c.member
    )
    cid = created.json()["cluster"]["id"]
    with services(c.client).database.write() as session:
        # As if an engine had created it: ACTIVE, its create action done.
        session.get(ClusterRow, cid).status = "ACTIVE"  # type: ignore[union-attr]
        create = session.get(ActionRow, created.headers["Location"].rsplit("/", 1)[1])
        assert create is not None
        create.status = ActionStatus.SUCCEEDED
        session.add(
            NodeRow(
                id="m" * 36, name="m", cluster_id=cid, profile_id=profile, init_at=1.0, project="p1"
            )
        )
    r = c.client.delete(f"/v1/clusters/{cid}", headers=c.member)
    assert r.status_code == 202
    return cid, r.headers["Location"].rsplit("/", 1)[1]


def test_list_deletions(callers: Callers) -> None:
    c = callers
    cid, action_id = _deleting_cluster(c)
    assert_error(
        c.client.get("/v1/deletions", headers=c.member),
        403,
        "You are not authorized to complete this operation.",
    )
    assert_error(c.client.get("/v1/deletions", headers=c.agent), 403, AGENT_REFUSED)
    (item,) = c.client.get("/v1/deletions", headers=c.admin).json()["deletions"]
    assert item["resource_type"] == "cluster" and item["resource_id"] == cid
    assert item["status"] == "DELETING" and item["reason"] == ""
    assert item["action_id"] == action_id and item["requested_by"]
    assert item["deleted_at"].endswith("Z") and item["age"] >= 0
    r = c.client.get("/v1/deletions?resource_type=node", headers=c.admin)
    assert r.json()["deletions"] == []
    assert_error(
        c.client.get("/v1/deletions?resource_type=bogus", headers=c.admin),
        400,
        "Invalid value 'bogus' specified for 'resource_type': must be one of cluster, node, "
        "profile, policy.",
    )
    assert_error(c.client.get("/v1/deletions?x=1", headers=c.admin), 400, "Invalid parameter x")


def test_purge_refusals(callers: Callers) -> None:
    c = callers
    cid, _ = _deleting_cluster(c)
    path = f"/v1/deletions/cluster/{cid}"
    assert c.client.delete(f"{path}?force=true", headers=c.member).status_code == 403
    r = c.client.delete(path, headers=c.admin)
    assert r.status_code == 400 and "force=true" in r.json()["error"]["message"]
    r = c.client.delete(f"{path}?force=true", headers=c.admin)
    assert r.status_code == 409
    assert "is not stuck" in r.json()["error"]["message"]
    assert "deletion_stuck_after (3600s)" in r.json()["error"]["message"]
    assert (
        c.client.delete("/v1/deletions/cluster/nope?force=true", headers=c.admin).status_code == 404
    )
    assert c.client.delete("/v1/deletions/thing/x?force=true", headers=c.admin).status_code == 400


def _stuck(c: Callers, action_id: str) -> None:
    """Make a deletion's action look stuck: RUNNING on a live engine that never finishes it."""
    with services(c.client).database.write() as session:
        session.add(
            EngineRow(
                id="stuck-engine",
                host=socket.gethostname(),
                pid=os.getpid(),
                started_at=time.time(),
                heartbeat_at=time.time() + 3600,
            )
        )
        action = session.get(ActionRow, action_id)
        assert action is not None
        action.status, action.owner = ActionStatus.RUNNING, "stuck-engine"
        assert locks.acquire_cluster(
            session, action.target, action.id, LockScope.CLUSTER, time.time(), 0.0
        )


def test_purge_a_stuck_deletion(api_client: ApiClientFactory, db_url: str, tmp_path: Path) -> None:
    configs = region_configs(tmp_path, ("R1", "R2"))
    settings = Settings(
        data_dir=tmp_path / "data",
        db_url=db_url,
        run_engine=False,
        auth="token",
        deletion_stuck_after=0,
        regions=configs,
    )
    client = api_client(settings)
    c = Callers(client, issue_tokens(services(client).database))
    cid, action_id = _deleting_cluster(c)
    _stuck(c, action_id)
    with services(client).database.write() as session:
        # An action queued on the cluster behind the deletion (waiting, never run)
        waiting = action_store.new_action(
            action=ActionName.CLUSTER_CHECK,
            target=cid,
            cluster_id=cid,
            project="p1",
            status=ActionStatus.WAITING,
            now=time.time(),
        )
        session.add(waiting)
        # The deletion's child, deleting the member when its engine got stuck
        session.add(
            action_store.new_action(
                action=ActionName.NODE_DELETE,
                target="m" * 36,
                cluster_id=cid,
                project="p1",
                status=ActionStatus.RUNNING,
                parent_id=action_id,
                now=time.time(),
            )
        )
        member_row = session.get(NodeRow, "m" * 36)
        assert member_row is not None
        member_row.status = NodeStatus.DELETING
        # A member the deletion marked before its engine stopped, no child made for it yet
        session.add(
            NodeRow(
                id="n" * 36,
                name="n",
                cluster_id=cid,
                profile_id=member_row.profile_id,
                init_at=1.0,
                project="p1",
                status=NodeStatus.DELETING,
            )
        )
    regions = services(client).extra["regions"]
    for backend in regions.backends.values():
        backend.create_from(cid, lambda: RegionalCopy(cid, "c", "p1", 0, "x"), "test")
    r = c.client.delete(f"/v1/deletions/cluster/{cid}?force=true", headers=c.admin)
    assert r.status_code == 202, r.text
    body = r.json()["deletion"]
    assert body["status"] == "PURGING" and body["resource_id"] == cid
    assert r.headers["Location"] == f"/v1/actions/{body['action']}"
    # The request only handed the deletion over: nothing is cleaned until the action runs.
    assert all(b.get(cid) is not None for b in regions.backends.values())
    (item,) = c.client.get("/v1/deletions", headers=c.admin).json()["deletions"]
    assert item["status"] == "PURGING" and item["action_id"] == body["action"]
    again = c.client.delete(f"/v1/deletions/cluster/{cid}?force=true", headers=c.admin)
    assert_error(
        again,
        409,
        f"The deletion of cluster '{cid}' is already being purged (action {body['action']}).",
    )

    # An engine runs the purge.
    engine = Callers(
        api_client(settings, start_engine=True),
        {"admin": c.admin, "member": c.member, "agent": c.agent},
    )
    purge = wait_for_action(engine.client, body["action"], headers=c.admin)
    assert purge["action"] == "DELETION_PURGE" and purge["status"] == "SUCCEEDED", purge
    cleaned = purge["outputs"]["cleaned"]
    assert f"action {action_id} cancelled" in cleaned
    assert "regional copies" in cleaned and "cluster row" in cleaned
    assert "2 member(s) made orphans" in cleaned
    assert "1 other action(s) cancelled" in cleaned
    assert "1 child action(s) cancelled" in cleaned
    queued = c.client.get(f"/v1/actions/{waiting.id}", headers=c.admin).json()["action"]
    assert queued["status"] == "CANCELLED"
    assert all(b.get(cid) is None for b in regions.backends.values())
    assert c.client.get(f"/v1/clusters/{cid}", headers=c.member).status_code == 404
    stopped = c.client.get(f"/v1/actions/{action_id}", headers=c.admin).json()["action"]
    assert stopped["status"] == "CANCELLED"
    assert c.client.get("/v1/deletions", headers=c.admin).json()["deletions"] == []
    member = c.client.get(f"/v1/nodes/{'m' * 36}", headers=c.member).json()["node"]
    assert member["cluster_id"] == ""  # an orphan now, its real resource untouched
    # its deletion was stopped half-way: no action will finish it, so it is not DELETING
    assert member["status"] == "ERROR"
    # nor is the member whose deletion never began
    marked = c.client.get(f"/v1/nodes/{'n' * 36}", headers=c.member).json()["node"]
    assert (marked["cluster_id"], marked["status"], marked["status_reason"]) == (
        "",
        "ERROR",
        "Interrupted: its deletion was purged before it finished.",
    )
    with services(client).database.read() as session:
        (event,) = session.scalars(
            select(EventRow).where(EventRow.action == "DELETION_PURGE", EventRow.status == "PURGED")
        ).all()
        assert event.oid == cid and event.level == "WARNING"
        assert tombstones.list_all(session) == []
        assert session.get(ClusterLockRow, cid) is None


def test_a_purge_that_ended_unfinished_is_resumed(
    api_client: ApiClientFactory, db_url: str, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        db_url=db_url,
        run_engine=False,
        auth="token",
        deletion_stuck_after=0,
    )
    client = api_client(settings)
    c = Callers(client, issue_tokens(services(client).database))
    cid, action_id = _deleting_cluster(c)
    _stuck(c, action_id)
    r = c.client.delete(f"/v1/deletions/cluster/{cid}?force=true", headers=c.admin)
    first = r.json()["deletion"]["action"]
    with services(client).database.write() as session:  # its engine stopped mid-way
        action = session.get(ActionRow, first)
        assert action is not None
        action.status = ActionStatus.CANCELLED
    engine = api_client(settings, start_engine=True)  # start-up resumes the purge
    with services(engine).database.read() as session:
        resumed = session.scalars(
            select(ActionRow).where(ActionRow.action == "DELETION_PURGE", ActionRow.id != first)
        ).one()
    done = wait_for_action(engine, resumed.id, headers=c.admin)
    assert done["status"] == "SUCCEEDED", done
    assert f"action {action_id} cancelled" in done["outputs"]["cleaned"]
    assert c.client.get("/v1/deletions", headers=c.admin).json()["deletions"] == []
