"""Receivers and the cluster they act on, with a real engine (issue 25)."""

from __future__ import annotations

from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import SIM_SPEC
from tests.waiting import wait_for_action

from herd.config import Settings


def test_a_clusters_receivers_are_deleted_with_it(
    api_client: ApiClientFactory, settings: Settings
) -> None:
    client = api_client(settings, start_engine=True)
    profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}})
    made = client.post(
        "/v1/clusters",
        json={"cluster": {"name": "c", "profile_id": profile.json()["profile"]["id"]}},
    )
    cid = made.json()["cluster"]["id"]
    assert wait_for_action(client, made.headers["Location"].rsplit("/", 1)[1])["status"] == (
        "SUCCEEDED"
    )
    receiver = {"name": "grow", "type": "webhook", "cluster_id": cid, "action": "CLUSTER_SCALE_OUT"}
    created = client.post("/v1/receivers", json={"receiver": receiver})
    assert created.status_code == 201, created.text
    rid = created.json()["receiver"]["id"]
    other = client.post("/v1/receivers", json={"receiver": {**receiver, "name": "keep"}})
    assert other.status_code == 201
    gone = client.delete(f"/v1/clusters/{cid}")
    assert wait_for_action(client, gone.headers["Location"].rsplit("/", 1)[1])["status"] == (
        "SUCCEEDED"
    )
    assert client.get(f"/v1/receivers/{rid}").status_code == 404
    assert client.get("/v1/receivers").json()["receivers"] == []
