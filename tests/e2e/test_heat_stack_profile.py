"""``os.heat.stack`` nodes against a real Heat: one Keystone, one Heat (``make heat-bed``), one
``herd serve --auth keystone`` whose cloud (the ``OS_*`` variables) is alice in project
``demo`` of that Keystone.

The templates hold only ``OS::Heat::RandomString``, ``OS::Heat::None`` and
``OS::Heat::TestResource`` (whose ``fail: true`` makes Heat fail the create), so no Nova is
needed. The test reads Heat's REST API as alice to see what herd did there.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.e2e.server import HerdServer, running_herd
from tests.heat_bed import HeatBed, missing_reason, running_heat
from tests.keystone_bed import KeystoneBed, running_keystone
from tests.postgres import PgServer
from tests.waiting import wait_for, wait_for_action

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.timeout(900),
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
]

V = {"OpenStack-API-Version": "clustering 1.14"}
ACTION_WAIT = 300.0  # stacks on a busy two-core machine


def template(length: int = 16, extra: bool = False) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "random": {"type": "OS::Heat::RandomString", "properties": {"length": length}}
    }
    if extra:
        resources["marker"] = {"type": "OS::Heat::None"}
    return {
        "heat_template_version": "2018-08-31",
        "resources": resources,
        "outputs": {"value": {"value": {"get_attr": ["random", "value"]}}},
    }


def spec(body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "os.heat.stack", "version": "1.0", "properties": {"template": body}}


FAILING = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "boom": {"type": "OS::Heat::TestResource", "properties": {"fail": True, "value": "x"}}
    },
}

# a create Heat cannot finish within the profile's one-minute timeout
SLOW = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "slow": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": "x", "action_wait_secs": {"create": 3600}},
        }
    },
}


@pytest.fixture(scope="module")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeystoneBed]:
    with running_keystone(tmp_path_factory.mktemp("keystone")) as bed:
        yield bed


@pytest.fixture(scope="module")
def heat(
    tmp_path_factory: pytest.TempPathFactory, keystone: KeystoneBed, pg_server: PgServer
) -> Iterator[HeatBed]:
    with running_heat(tmp_path_factory.mktemp("heat"), keystone, pg_server) as bed:
        yield bed


@pytest.fixture(scope="module")
def herd(
    tmp_path_factory: pytest.TempPathFactory, keystone: KeystoneBed, heat: HeatBed
) -> Iterator[HerdServer]:
    env = keystone.herd_env() | keystone.openstack_env("alice", "demo")
    env["HERD_NOVA_TIMEOUT"] = "300"
    with running_herd(tmp_path_factory.mktemp("herd") / "data", env) as server:
        keystone.register_service("herd", "clustering", server.url)
        yield server


@pytest.fixture(scope="module")
def api(herd: HerdServer, keystone: KeystoneBed) -> httpx.Client:
    token = keystone.token("alice", "demo")
    return httpx.Client(base_url=herd.url, headers={"X-Auth-Token": token, **V}, timeout=120)


@pytest.fixture(scope="module")
def heat_api(heat: HeatBed, keystone: KeystoneBed) -> httpx.Client:
    token = keystone.token("alice", "demo")
    return httpx.Client(
        base_url=f"{heat.url}/v1/{keystone.projects['demo']}",
        headers={"X-Auth-Token": token},
        timeout=120,
        follow_redirects=True,
    )


def stacks(heat_api: httpx.Client) -> dict[str, dict[str, Any]]:
    """alice's stacks in Heat (deleted ones are not listed), by id."""
    answer = heat_api.get("/stacks")
    assert answer.status_code == 200, answer.text
    return {s["id"]: s for s in answer.json()["stacks"]}


def stack(heat_api: httpx.Client, stack_id: str) -> dict[str, Any]:
    answer = heat_api.get(f"/stacks/{stack_id}")
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()["stack"]
    return body


def profile(api: httpx.Client, name: str, body: dict[str, Any]) -> str:
    answer = api.post("/v1/profiles", json={"profile": {"name": name, "spec": spec(body)}})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["profile"]["id"])


def finish(api: httpx.Client, answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 202, answer.text
    return wait_for_action(api, answer.headers["Location"], timeout=ACTION_WAIT)


def members(api: httpx.Client, cluster_id: str) -> list[dict[str, Any]]:
    answer = api.get(f"/v1/nodes?cluster_id={cluster_id}&show_details=true")
    assert answer.status_code == 200, answer.text
    return list(answer.json()["nodes"])


def test_profile_create_and_validate_ask_heat(api: httpx.Client, heat_api: httpx.Client) -> None:
    assert (
        api.post("/v1/profiles/validate", json={"profile": {"spec": spec(template())}}).status_code
        == 200
    )
    bad = template()
    bad["resources"]["random"]["type"] = "OS::Nope::Missing"
    for path, body in (
        ("/v1/profiles", {"profile": {"name": "bad", "spec": spec(bad)}}),
        ("/v1/profiles/validate", {"profile": {"spec": spec(bad)}}),
    ):
        answer = api.post(path, json=body)
        assert answer.status_code == 400, answer.text
        message = answer.json()["error"]["message"]
        assert message.startswith("properties.template: Failed in validating template: "), message
        assert "OS::Nope::Missing" in message
    # a preview makes nothing
    assert stacks(heat_api) == {}


def test_a_cluster_of_stacks_scales_updates_and_leaves_nothing_behind(
    api: httpx.Client, heat_api: httpx.Client
) -> None:
    first = profile(api, "stack-v1", template(16))
    made = api.post(
        "/v1/clusters",
        json={"cluster": {"name": "stacks", "profile_id": first, "desired_capacity": 2}},
    )
    action = finish(api, made)
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    cluster_id = made.json()["cluster"]["id"]
    nodes = members(api, cluster_id)
    assert [n["status"] for n in nodes] == ["ACTIVE", "ACTIVE"]
    in_heat = stacks(heat_api)
    assert set(in_heat) == {n["physical_id"] for n in nodes}
    for node in nodes:
        shown = stack(heat_api, node["physical_id"])
        assert shown["stack_status"] == "CREATE_COMPLETE"
        assert f"cluster_node_id={node['id']}" in shown["tags"]
        assert f"cluster_id={cluster_id}" in shown["tags"]
        assert shown["stack_name"].startswith(node["name"])
        details = node["details"]
        assert details["stack_id"] == node["physical_id"]
        assert details["stack_status"] == "CREATE_COMPLETE"
        [output] = details["outputs"]
        assert output["output_key"] == "value" and len(output["output_value"]) == 16

    # scale out and in: the new member is a new stack, the removed one is gone from Heat
    action = finish(api, api.post(f"/v1/clusters/{cluster_id}/actions", json={"scale_out": {}}))
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    nodes = members(api, cluster_id)
    assert len(nodes) == 3 and set(stacks(heat_api)) == {n["physical_id"] for n in nodes}
    action = finish(
        api, api.post(f"/v1/clusters/{cluster_id}/actions", json={"scale_in": {"count": 2}})
    )
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    [kept] = members(api, cluster_id)
    assert set(stacks(heat_api)) == {kept["physical_id"]}

    # a node update to a new template is a stack update: same stack, new resources
    second = profile(api, "stack-v2", template(24, extra=True))
    action = finish(
        api, api.patch(f"/v1/nodes/{kept['id']}", json={"node": {"profile_id": second}})
    )
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    shown = stack(heat_api, kept["physical_id"])
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    resources = heat_api.get(f"/stacks/{kept['physical_id']}/resources").json()["resources"]
    assert sorted(r["resource_name"] for r in resources) == ["marker", "random"]
    node = api.get(f"/v1/nodes/{kept['id']}?show_details=true").json()["node"]
    assert node["profile_id"] == second and node["physical_id"] == kept["physical_id"]
    assert len(node["details"]["outputs"][0]["output_value"]) == 24

    # check: Heat's status
    action = finish(api, api.post(f"/v1/nodes/{kept['id']}/actions", json={"check": {}}))
    assert action["status"] == "SUCCEEDED", action["status_reason"]

    action = finish(api, api.delete(f"/v1/clusters/{cluster_id}"))
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert stacks(heat_api) == {}


def test_a_stack_heat_fails_makes_an_error_node_and_leaves_nothing(
    api: httpx.Client, heat_api: httpx.Client
) -> None:
    failing = profile(api, "stack-fails", FAILING)
    made = api.post("/v1/nodes", json={"node": {"name": "doomed", "profile_id": failing}})
    action = finish(api, made)
    assert action["status"] == "FAILED", action["status_reason"]
    node = api.get(f"/v1/nodes/{made.json()['node']['id']}").json()["node"]
    assert node["status"] == "ERROR"
    assert "CREATE_FAILED" in node["status_reason"], node["status_reason"]
    assert "Test Resource failed" in node["status_reason"], node["status_reason"]
    assert "was deleted" in node["status_reason"]
    assert stacks(heat_api) == {}
    action = finish(api, api.delete(f"/v1/nodes/{node['id']}"))
    assert action["status"] == "SUCCEEDED", action["status_reason"]


def test_a_node_shown_with_details_reads_its_stack_from_heat(
    api: httpx.Client, heat_api: httpx.Client, heat: HeatBed
) -> None:
    made = api.post(
        "/v1/nodes",
        json={"node": {"name": "shown", "profile_id": profile(api, "stack-shown", template(10))}},
    )
    assert finish(api, made)["status"] == "SUCCEEDED"
    node_id = made.json()["node"]["id"]
    stack_id = api.get(f"/v1/nodes/{node_id}").json()["node"]["physical_id"]
    name = stack(heat_api, stack_id)["stack_name"]

    # someone updates the stack in Heat, not through herd
    changed = heat_api.patch(f"/stacks/{name}/{stack_id}", json={"template": template(20)})
    assert changed.status_code == 202, changed.text
    wait_for(
        lambda: stack(heat_api, stack_id)["stack_status"] == "UPDATE_COMPLETE", ACTION_WAIT, 1.0
    )
    details = api.get(f"/v1/nodes/{node_id}?show_details=true").json()["node"]["details"]
    assert details["stack_status"] == "UPDATE_COMPLETE" and "Error" not in details, details
    assert len(details["outputs"][0]["output_value"]) == 20
    assert f"cluster_node_id={node_id}" in details["tags"]
    # a list shows what herd stored (one Heat read per listed node would be too many)
    [listed] = [
        n for n in api.get("/v1/nodes?show_details=true").json()["nodes"] if n["id"] == node_id
    ]
    assert listed["details"]["stack_status"] == "CREATE_COMPLETE"

    # heat-api stopped (SIGSTOP: connections are accepted, nothing answers): the stored
    # details after herd's bound, saying so
    api_group = next(s for s in heat.services if s.name == "heat-api").pid
    os.killpg(api_group, signal.SIGSTOP)
    try:
        details = api.get(f"/v1/nodes/{node_id}?show_details=true").json()["node"]["details"]
    finally:
        os.killpg(api_group, signal.SIGCONT)
    assert details["Error"]["code"] == 504, details
    assert details["Error"]["message"].startswith(
        "the os.heat.stack backend did not answer in 10 s; "
    ), details
    assert details["stack_status"] == "CREATE_COMPLETE"

    # the stack deleted in Heat: the stored details, and Heat's answer saying so
    assert heat_api.delete(f"/stacks/{name}/{stack_id}").status_code == 204
    wait_for(lambda: stack_id not in stacks(heat_api), ACTION_WAIT, 1.0)
    details = api.get(f"/v1/nodes/{node_id}?show_details=true").json()["node"]["details"]
    assert details["Error"]["code"] == 404, details
    assert f"stack {stack_id} does not exist" in details["Error"]["message"]
    assert details["stack_status"] == "CREATE_COMPLETE"  # the last ones herd knew
    action = finish(api, api.delete(f"/v1/nodes/{node_id}"))
    assert action["status"] == "SUCCEEDED", action["status_reason"]


def test_a_stack_past_its_timeout_makes_an_error_node_and_leaves_nothing(
    api: httpx.Client, heat_api: httpx.Client
) -> None:
    body = spec(SLOW)
    body["properties"]["timeout"] = 1  # minutes: Heat's timeout_mins, and herd's wait
    made = api.post("/v1/profiles", json={"profile": {"name": "stack-slow", "spec": body}})
    assert made.status_code == 201, made.text
    made = api.post(
        "/v1/nodes", json={"node": {"name": "slow", "profile_id": made.json()["profile"]["id"]}}
    )
    action = finish(api, made)
    assert action["status"] == "FAILED", action["status_reason"]
    node = api.get(f"/v1/nodes/{made.json()['node']['id']}").json()["node"]
    assert node["status"] == "ERROR"
    reason = node["status_reason"]
    # Heat's own verdict ("Create timed out"), or herd's when Heat is late to give it
    assert "timed out" in reason, reason
    assert "was deleted" in reason, reason
    assert stacks(heat_api) == {}
    action = finish(api, api.delete(f"/v1/nodes/{node['id']}"))
    assert action["status"] == "SUCCEEDED", action["status_reason"]


def test_a_stack_made_in_heat_is_adopted_and_deleted_with_its_node(
    api: httpx.Client, heat_api: httpx.Client
) -> None:
    body = {
        "stack_name": "outside",
        "template": template(12),
        "parameters": {},
        "tags": "team-a",
        "timeout_mins": 7,
    }
    made = heat_api.post("/stacks", json=body)
    assert made.status_code == 201, made.text
    stack_id = made.json()["stack"]["id"]
    wait_for(
        lambda: stack(heat_api, stack_id)["stack_status"] == "CREATE_COMPLETE", ACTION_WAIT, 1.0
    )
    request = {"identity": stack_id, "type": "os.heat.stack-1.0"}
    preview = api.post("/v1/nodes/adopt-preview", json=request)
    assert preview.status_code == 200, preview.text
    spec_seen = preview.json()["node_profile"]["node_preview"]
    assert (spec_seen["type"], spec_seen["version"]) == ("os.heat.stack", "1.0")
    properties = spec_seen["properties"]
    assert properties["template"]["resources"] == template(12)["resources"]
    assert properties["timeout"] == 7 and properties["disable_rollback"] is True

    adopted = api.post("/v1/nodes/adopt", json={**request, "name": "adopted"})
    assert adopted.status_code == 200, adopted.text
    node = adopted.json()["node"]
    assert node["status"] == "ACTIVE" and node["physical_id"] == stack_id
    tags = stack(heat_api, stack_id)["tags"]
    assert "team-a" in tags and f"cluster_node_id={node['id']}" in tags
    again = api.post("/v1/nodes/adopt", json={**request, "name": "twice"})
    assert again.status_code == 409, again.text

    action = finish(api, api.delete(f"/v1/nodes/{node['id']}"))
    assert action["status"] == "SUCCEEDED", action["status_reason"]
    assert stacks(heat_api) == {}
