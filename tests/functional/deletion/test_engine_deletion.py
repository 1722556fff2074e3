"""Deletions run by the embedded engine: member, regional copies, central row, tombstone."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from sqlalchemy import select
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import services
from tests.functional.deletion.conftest import Callers
from tests.functional.deletion.support import (
    SIM_SPEC,
    issue_tokens,
    region_configs,
    resurrections,
    wait_for_action,
)

from herd.agent.reconciler import Reconciler
from herd.config import Settings
from herd.store import tokens, tombstones
from herd.store.models import ActionRow, ClusterRow
from herd.types import ActionStatus, ResourceType

with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    from fastapi.testclient import TestClient

REGIONS = ("R1", "R2", "R3")
PLACEMENT = {
    "type": "senlin.policy.region_placement",
    "version": "1.0",
    "properties": {"regions": [{"name": r} for r in REGIONS]},
}


def _setup(api_client: ApiClientFactory, db_url: str, tmp_path: Path, **extra: Any) -> Callers:
    settings = Settings(
        data_dir=tmp_path / "data",
        db_url=db_url,
        auth="token",
        regions=region_configs(tmp_path, REGIONS),
        engine_heartbeat_interval=0.5,
        **extra,
    )
    client = api_client(settings, start_engine=True)
    return Callers(client, issue_tokens(services(client).database))


def _act(c: Callers, response: Any) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    return wait_for_action(c.client, response.headers["Location"], headers=c.member)


def _multi_region_cluster(c: Callers, spec: dict[str, Any] = SIM_SPEC) -> str:
    profile = c.client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": spec}}, headers=c.member
    ).json()["profile"]["id"]
    policy = c.client.post(
        "/v1/policies", json={"policy": {"name": "rp", "spec": PLACEMENT}}, headers=c.member
    ).json()["policy"]["id"]
    r = c.client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": profile}}, headers=c.member
    )
    cid = r.json()["cluster"]["id"]
    _act(c, r)
    path = f"/v1/clusters/{cid}/actions"
    attach = {"policy_attach": {"policy_id": policy}}
    assert _act(c, c.client.post(path, json=attach, headers=c.member))["status"] == "SUCCEEDED"
    scale = {"scale_out": {"count": 3}}
    assert _act(c, c.client.post(path, json=scale, headers=c.member))["status"] == "SUCCEEDED"
    detach = {"policy_detach": {"policy_id": policy}}
    assert _act(c, c.client.post(path, json=detach, headers=c.member))["status"] == "SUCCEEDED"
    nodes = c.client.get(f"/v1/nodes?cluster_id={cid}", headers=c.member).json()["nodes"]
    assert sorted(n["data"]["placement"]["region_name"] for n in nodes) == list(REGIONS)
    return str(cid)


def _agents(c: Callers) -> list[Reconciler]:
    """One agent per region, each with a token of its region alone (least privilege)."""
    svc = services(c.client)
    regions = svc.extra["regions"]
    agents = []
    for name in REGIONS:
        with svc.database.write() as session:
            _row, secret = tokens.create_token(
                session, "p1", "agent", f"agent-{name}", svc.now(), regions=[name]
            )
        client = TestClient(c.client.app, headers={"X-Auth-Token": secret})
        agents.append(Reconciler(name, regions.backends[name], client))
    return agents


def test_multi_region_delete(api_client: ApiClientFactory, db_url: str, tmp_path: Path) -> None:
    c = _setup(api_client, db_url, tmp_path)
    cid = _multi_region_cluster(c)
    agents = _agents(c)
    for agent in agents:
        assert agent.reconcile_once().created == [cid]
        assert agent.reconcile_once().created == []
    action = _act(c, c.client.delete(f"/v1/clusters/{cid}", headers=c.member))
    assert action["status"] == "SUCCEEDED", action
    assert c.client.get(f"/v1/clusters/{cid}", headers=c.member).status_code == 404
    with services(c.client).database.read() as session:
        assert tombstones.list_all(session) == []
    for agent in agents:
        assert agent.backend.get(cid) is None
        assert agent.ensure(cid) is None
        report = agent.reconcile_once()
        assert (report.created, report.removed, report.errors) == ([], [], [])
        ops = [(e.op, e.actor) for e in agent.backend.history()]
        assert ops == [("CREATE", f"agent-{agent.region}"), ("DELETE", "central")]
        assert resurrections(agent.backend) == []


def test_agent_removes_copies_central_no_longer_has(
    api_client: ApiClientFactory, db_url: str, tmp_path: Path
) -> None:
    c = _setup(api_client, db_url, tmp_path)
    (agent, *_) = _agents(c)
    from herd.regions import RegionalCopy

    agent.backend.create_from("x" * 36, lambda: RegionalCopy("x" * 36, "x", "p1", 0, "R1"), "t")
    assert agent.reconcile_once().removed == ["x" * 36]
    assert agent.backend.copies() == []


def test_failed_deletion_keeps_its_tombstone(
    api_client: ApiClientFactory, db_url: str, tmp_path: Path
) -> None:
    c = _setup(api_client, db_url, tmp_path)
    failing = {**SIM_SPEC, "properties": {"delete_failure_rate": 1}}
    cid = _multi_region_cluster(c, failing)
    agents = _agents(c)
    for agent in agents:
        agent.reconcile_once()
    action = _act(c, c.client.delete(f"/v1/clusters/{cid}", headers=c.member))
    assert action["status"] == "FAILED"
    with services(c.client).database.read() as session:
        stone = tombstones.get(session, ResourceType.CLUSTER, cid)
        assert stone is not None and stone.status == "ERROR"
        assert stone.reason.startswith("Failed in deleting nodes")
    view = c.client.get(f"/v1/clusters/{cid}", headers=c.member).json()["cluster"]
    assert view["status"] == "ERROR" and view["deleted_at"]
    # agents keep getting 404, so the copies go and do not come back
    assert c.client.get(f"/v1/clusters/{cid}", headers=c.agent).status_code == 404
    for agent in agents:
        assert agent.reconcile_once().removed == [cid]
        assert agent.ensure(cid) is None
    retry = c.client.delete(f"/v1/clusters/{cid}", headers=c.member)
    assert retry.status_code == 202
    assert retry.headers["Location"] != f"/v1/actions/{action['id']}"


def test_without_tombstones_agents_see_the_deleting_cluster(
    api_client: ApiClientFactory, db_url: str, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        db_url=db_url,
        auth="token",
        run_engine=False,
    )
    client = api_client(settings, tombstones=False)
    c = Callers(client, issue_tokens(services(client).database))
    profile = c.client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}}, headers=c.member
    ).json()["profile"]["id"]
    cid = c.client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": profile}}, headers=c.member
    ).json()["cluster"]["id"]
    assert c.client.delete(f"/v1/clusters/{cid}", headers=c.member).status_code == 202
    assert c.client.get(f"/v1/clusters/{cid}", headers=c.agent).status_code == 200
    # as before the feature: another DELETE queues another action
    assert c.client.delete(f"/v1/clusters/{cid}", headers=c.member).status_code == 202
    with services(client).database.read() as session:
        assert tombstones.list_all(session) == []


def test_restart_resumes_an_interrupted_deletion(
    api_client: ApiClientFactory, db_url: str, tmp_path: Path
) -> None:
    """A DELETING tombstone whose action ended unfinished gets a new action at start-up."""
    settings = Settings(data_dir=tmp_path / "data", db_url=db_url, auth="token", run_engine=False)
    client = api_client(settings)
    c = Callers(client, issue_tokens(services(client).database))
    profile = c.client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}}, headers=c.member
    ).json()["profile"]["id"]
    cid = c.client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": profile}}, headers=c.member
    ).json()["cluster"]["id"]
    with services(client).database.write() as session:
        for row in session.scalars(select(ActionRow)):
            row.status = ActionStatus.SUCCEEDED
        session.get(ClusterRow, cid).status = "ACTIVE"  # type: ignore[union-attr]
    first = c.client.delete(f"/v1/clusters/{cid}", headers=c.member).headers["Location"]
    with services(client).database.write() as session:
        session.get(ActionRow, first.rsplit("/", 1)[1]).status = "CANCELLED"  # type: ignore[union-attr]
    # an engine starts on the same database
    engine_client = api_client(settings, start_engine=True, database=services(client).database)
    from tests.functional.deletion.support import wait_for

    wait_for(lambda: engine_client.get(f"/v1/clusters/{cid}", headers=c.member).status_code == 404)

    def resumed_deletes() -> list[ActionRow]:
        # The row goes with its tombstone; the action ends in the transaction after.
        with services(client).database.read() as session:
            return [
                a
                for a in session.scalars(select(ActionRow).where(ActionRow.target == cid))
                if a.action == "CLUSTER_DELETE" and a.status == "SUCCEEDED"
            ]

    wait_for(lambda: len(resumed_deletes()) == 1)
    with services(client).database.read() as session:
        assert tombstones.list_all(session) == []
    assert len(resumed_deletes()) == 1
