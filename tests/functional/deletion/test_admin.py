"""``GET /v1/deletions`` and ``DELETE /v1/deletions/<type>/<id>?force=true`` (admin only)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import assert_error, services
from tests.functional.deletion.conftest import Callers
from tests.functional.deletion.support import SIM_SPEC, issue_tokens, region_configs

from herd.api.auth import AGENT_REFUSED
from herd.config import Settings
from herd.regions import RegionalCopy
from herd.store import tombstones
from herd.store.models import ClusterRow, EventRow, NodeRow


def _deleting_cluster(c: Callers) -> tuple[str, str]:
    profile = c.client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}}, headers=c.member
    ).json()["profile"]["id"]
    cid = c.client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": profile}}, headers=c.member
    ).json()["cluster"]["id"]
    with services(c.client).database.write() as session:
        session.get(ClusterRow, cid).status = "ACTIVE"  # type: ignore[union-attr]
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
    regions = services(client).extra["regions"]
    for backend in regions.backends.values():
        backend.create_from(cid, lambda: RegionalCopy(cid, "c", "p1", 0, "x"), "test")
    r = c.client.delete(f"/v1/deletions/cluster/{cid}?force=true", headers=c.admin)
    assert r.status_code == 200, r.text
    body = r.json()["deletion"]
    assert body["status"] == "PURGED" and body["resource_id"] == cid
    assert f"action {action_id} cancelled" in body["cleaned"]
    assert "regional copies" in body["cleaned"] and "cluster row" in body["cleaned"]
    assert all(b.get(cid) is None for b in regions.backends.values())
    assert c.client.get(f"/v1/clusters/{cid}", headers=c.member).status_code == 404
    assert (
        c.client.get(f"/v1/actions/{action_id}", headers=c.admin).json()["action"]["status"]
        == "CANCELLED"
    )
    assert c.client.get("/v1/deletions", headers=c.admin).json()["deletions"] == []
    member = c.client.get(f"/v1/nodes/{'m' * 36}", headers=c.member).json()["node"]
    assert member["cluster_id"] == ""  # an orphan now, its real resource untouched
    with services(client).database.read() as session:
        (event,) = session.scalars(
            select(EventRow).where(EventRow.action == "DELETION_PURGE")
        ).all()
        assert event.oid == cid and event.status == "PURGED" and event.level == "WARNING"
        assert tombstones.list_all(session) == []
