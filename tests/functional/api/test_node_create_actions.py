"""One NODE_CREATE action per node created through ``POST /v1/nodes`` (as Senlin)."""

from __future__ import annotations

from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import SIM_SPEC
from tests.waiting import wait_for_action

from herd.config import Settings


def test_a_node_created_into_a_cluster_records_one_action(
    api_client: ApiClientFactory, settings: Settings
) -> None:
    client = api_client(settings, start_engine=True)
    profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}})
    pid = profile.json()["profile"]["id"]
    made = client.post("/v1/clusters", json={"cluster": {"name": "c", "profile_id": pid}})
    cid = made.json()["cluster"]["id"]
    assert wait_for_action(client, made.headers["Location"].rsplit("/", 1)[1])["status"] == (
        "SUCCEEDED"
    )
    for name, cluster in (("member", cid), ("orphan", None)):
        node = client.post(
            "/v1/nodes", json={"node": {"name": name, "profile_id": pid, "cluster_id": cluster}}
        )
        assert node.status_code == 202, node.text
        action = wait_for_action(client, node.headers["Location"].rsplit("/", 1)[1])
        assert action["status"] == "SUCCEEDED", action
        node_id = node.json()["node"]["id"]
        creates = client.get("/v1/actions", params={"target": node_id}).json()["actions"]
        assert [a["action"] for a in creates] == ["NODE_CREATE"]
        assert creates[0]["depends_on"] == [] and creates[0]["owner"] is None
        shown = client.get(f"/v1/nodes/{node_id}").json()["node"]
        assert shown["status"] == "ACTIVE" and shown["physical_id"]
    cluster_row = client.get(f"/v1/clusters/{cid}").json()["cluster"]
    assert cluster_row["desired_capacity"] == 1 and len(cluster_row["nodes"]) == 1
