"""The API with the embedded engine running: the action contract end to end (sim driver)."""

from __future__ import annotations

import importlib.util

import pytest
from tests.clusters import create_cluster
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import mv
from tests.waiting import wait_for_action

from herd.config import Settings

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("herd.engine.service") is None,
    reason="herd.engine.service does not exist yet",
)


def test_create_scale_and_delete_with_engine(
    api_client: ApiClientFactory, settings: Settings
) -> None:
    client = api_client(settings, start_engine=True)
    cid = create_cluster(client, 2)
    cluster = client.get(f"/v1/clusters/{cid}").json()["cluster"]
    assert cluster["status"] == "ACTIVE" and len(cluster["nodes"]) == 2
    r = client.post(f"/v1/clusters/{cid}/actions", json={"scale_out": {"count": 1}})
    assert wait_for_action(client, r.json()["action"])["status"] == "SUCCEEDED"
    assert len(client.get(f"/v1/clusters/{cid}").json()["cluster"]["nodes"]) == 3
    r = client.post(
        f"/v1/clusters/{cid}/actions", json={"scale_in": {"count": 2}}, headers=mv("1.14")
    )
    assert wait_for_action(client, r.json()["action"])["status"] == "SUCCEEDED"
    assert len(client.get(f"/v1/clusters/{cid}").json()["cluster"]["nodes"]) == 1
    r = client.delete(f"/v1/clusters/{cid}")
    assert wait_for_action(client, r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"
    assert client.get(f"/v1/clusters/{cid}").status_code == 404
