"""Deletion-policy conformance through the real API: an in-process app with its engine (sim).

Every scenario drives ``/v1`` only: profiles, policies, clusters, cluster actions,
and then reads the action (``data``, ``outputs``), the members, the orphans, the
cluster and the events back through the API. Nodes are created one scale-out at a
time where a scenario needs a known age order, so OLDEST_FIRST/YOUNGEST_FIRST have a
deterministic answer without touching the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.waiting import wait_for_action

from herd.config import Settings

V = {"OpenStack-API-Version": "clustering 1.14"}


def deletion_spec(version: str = "1.1", **properties: Any) -> dict[str, Any]:
    return {"type": "senlin.policy.deletion", "version": version, "properties": properties}


def deletion_data(
    candidates: list[str],
    *,
    destroy: bool = True,
    grace: int = 0,
    reduce: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """``data['deletion']`` exactly as the spec (and Senlin's ``_update_action``) writes it."""
    return {
        "count": len(candidates),
        "candidates": candidates,
        "destroy_after_deletion": destroy,
        "grace_period": grace,
        "reduce_desired_capacity": reduce,
        **extra,
    }


class Api:
    """Thin helpers over the TestClient; every call goes through the HTTP API."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    # -- plumbing ------------------------------------------------------------------------

    def wait(self, action_id: str, timeout: float = 30.0) -> dict[str, Any]:
        return wait_for_action(self.client, action_id, headers=V, timeout=timeout)

    def act(self, cluster: str, body: dict[str, Any], **headers: str) -> dict[str, Any]:
        """Post a cluster action and wait for it to end."""
        r = self.client.post(f"/v1/clusters/{cluster}/actions", json=body, headers=V | headers)
        assert r.status_code == 202, r.text
        return self.wait(r.json()["action"])

    # -- resources -----------------------------------------------------------------------

    def profile(self, **properties: Any) -> str:
        spec = {"type": "herd.sim", "version": "1.0", "properties": properties}
        r = self.client.post("/v1/profiles", json={"profile": {"name": "sim", "spec": spec}})
        assert r.status_code == 201, r.text
        return str(r.json()["profile"]["id"])

    def cluster(self, size: int, *, one_by_one: bool = True, **fields: Any) -> str:
        """A cluster of ``size`` ACTIVE members; ``one_by_one`` gives them distinct ages."""
        profile = fields.pop("profile_id", None) or self.profile()
        first = max(1, int(fields.get("min_size", 0))) if one_by_one and size else size
        body = {"name": fields.pop("name", "c"), "profile_id": profile, "desired_capacity": first}
        r = self.client.post("/v1/clusters", json={"cluster": body | fields}, headers=V)
        assert r.status_code == 202, r.text
        assert self.wait(r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"
        cluster = str(r.json()["cluster"]["id"])
        for _ in range(size - first):
            assert self.act(cluster, {"scale_out": {"count": 1}})["status"] == "SUCCEEDED"
        return cluster

    def policy(self, spec: dict[str, Any], name: str = "pol") -> str:
        r = self.client.post("/v1/policies", json={"policy": {"name": name, "spec": spec}})
        assert r.status_code == 201, r.text
        return str(r.json()["policy"]["id"])

    def attach(self, cluster: str, spec: dict[str, Any], name: str = "pol") -> str:
        policy = self.policy(spec, name)
        action = self.act(cluster, {"policy_attach": {"policy_id": policy}})
        assert action["status"] == "SUCCEEDED", action
        return policy

    def get_cluster(self, cluster: str) -> dict[str, Any]:
        r = self.client.get(f"/v1/clusters/{cluster}", headers=V)
        assert r.status_code == 200, r.text
        return dict(r.json()["cluster"])

    def members(self, cluster: str) -> list[dict[str, Any]]:
        """Members ordered by age (oldest first), as created one by one."""
        r = self.client.get("/v1/nodes", params={"cluster_id": cluster, "sort": "index"})
        assert r.status_code == 200, r.text
        return list(r.json()["nodes"])

    def member_ids(self, cluster: str) -> list[str]:
        return [n["id"] for n in self.members(cluster)]

    def node(self, node_id: str) -> dict[str, Any] | None:
        r = self.client.get(f"/v1/nodes/{node_id}", headers=V)
        if r.status_code == 404:
            return None
        assert r.status_code == 200, r.text
        return dict(r.json()["node"])

    def set_metadata(self, node_id: str, metadata: dict[str, Any]) -> None:
        r = self.client.patch(f"/v1/nodes/{node_id}", json={"node": {"metadata": metadata}})
        assert r.status_code == 202, r.text
        assert self.wait(r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"

    def events(self, **filters: Any) -> list[dict[str, Any]]:
        r = self.client.get("/v1/events", params={"limit": 1000, **filters}, headers=V)
        assert r.status_code == 200, r.text
        return list(r.json()["events"])

    def node_events(self, node_id: str, action: str | None = None) -> list[tuple[str, str]]:
        found = self.events(oid=node_id)
        return [(e["status"], e["status_reason"]) for e in found if action in (None, e["action"])]


@pytest.fixture
def api(api_client: ApiClientFactory, tmp_path: Path) -> Iterator[Api]:
    """The app with its engine on a fresh SQLite database."""
    settings = Settings(
        data_dir=tmp_path / "data",
        db_url=f"sqlite:///{tmp_path / 'herd.db'}",
        run_engine=True,
        auth="none",
        webhook_retries=2,
        webhook_timeout=2.0,
    )
    yield Api(api_client(settings, start_engine=True))
