"""Heat's ``OS::Senlin::*`` resources against herd: a real Heat, on a real Keystone.

One Keystone (``make keystone-bed``), one ``herd serve --auth keystone`` registered as the
``clustering`` service, and one Heat (``make heat-bed``: heat-api and heat-engine 22.0.1,
their database on the suite's PostgreSQL, a private RabbitMQ) for the module. alice, a
member of project ``demo``, drives Heat's REST API with her token; Heat calls herd with it
through the catalog, and the test reads herd's API as alice to see what Heat did.
"""

from __future__ import annotations

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

# Every OS::Senlin resource but the node, which Heat 22 cannot create (see the last test).
STACK = """
heat_template_version: 2018-08-31
parameters:
  capacity: {type: number, default: 2}
  zone: {type: string, default: zone-a}
  bound: {type: boolean, default: true}
conditions:
  policy_bound: {get_param: bound}
resources:
  profile:
    type: OS::Senlin::Profile
    properties:
      type: herd.sim-1.0
      properties: {zone: {get_param: zone}}
  cluster:
    type: OS::Senlin::Cluster
    properties:
      profile: {get_resource: profile}
      desired_capacity: {get_param: capacity}
      max_size: 10
  deletion:
    type: OS::Senlin::Policy
    properties:
      type: senlin.policy.deletion-1.1
      properties: {criteria: OLDEST_FIRST}
      bindings:
        if: [policy_bound, [{cluster: {get_resource: cluster}}], []]
  receiver:
    type: OS::Senlin::Receiver
    properties:
      cluster: {get_resource: cluster}
      action: CLUSTER_SCALE_OUT
      type: webhook
outputs:
  webhook: {value: {get_attr: [receiver, channel, alarm_url]}}
"""

NODE_STACK = """
heat_template_version: 2018-08-31
resources:
  profile:
    type: OS::Senlin::Profile
    properties: {type: herd.sim-1.0, properties: {}}
  node:
    type: OS::Senlin::Node
    properties:
      name: heat-made-node
      profile: {get_resource: profile}
"""

STACK_WAIT = 300.0  # a stack operation on a busy two-core machine


@pytest.fixture(scope="module")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeystoneBed]:
    with running_keystone(tmp_path_factory.mktemp("keystone")) as bed:
        yield bed


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory, keystone: KeystoneBed) -> Iterator[HerdServer]:
    with running_herd(tmp_path_factory.mktemp("herd") / "data", keystone.herd_env()) as server:
        keystone.register_service("herd", "clustering", server.url)
        yield server


@pytest.fixture(scope="module")
def heat(
    tmp_path_factory: pytest.TempPathFactory,
    keystone: KeystoneBed,
    herd: HerdServer,
    pg_server: PgServer,
) -> Iterator[HeatBed]:
    with running_heat(tmp_path_factory.mktemp("heat"), keystone, pg_server) as bed:
        yield bed


class Heat:
    """Heat's REST API (v1) as one user of one project."""

    def __init__(self, bed: HeatBed, token: str, project_id: str) -> None:
        self.http = httpx.Client(
            base_url=f"{bed.url}/v1/{project_id}",
            headers={"X-Auth-Token": token},
            timeout=120,
        )

    def create(self, name: str, template: str, **parameters: Any) -> str:
        """Create a stack; its path (``stacks/<name>/<id>``) once CREATE has ended."""
        body = {"stack_name": name, "template": template, "parameters": parameters}
        made = self.http.post("/stacks", json=body)
        assert made.status_code == 201, made.text
        path = f"stacks/{name}/{made.json()['stack']['id']}"
        self.wait(path, "CREATE")
        return path

    def stack(self, path: str) -> dict[str, Any]:
        answer = self.http.get(f"/{path}")
        assert answer.status_code == 200, answer.text
        stack: dict[str, Any] = answer.json()["stack"]
        return stack

    def wait(self, path: str, action: str) -> dict[str, Any]:
        """The stack once ``action`` has ended (COMPLETE or FAILED)."""

        def ended() -> dict[str, Any] | None:
            stack = self.stack(path)
            status = stack["stack_status"]
            return stack if status.startswith(action) and "IN_PROGRESS" not in status else None

        stack: dict[str, Any] = wait_for(ended, timeout=STACK_WAIT, interval=1.0)
        return stack

    def resource(self, path: str, name: str) -> dict[str, Any]:
        answer = self.http.get(f"/{path}/resources/{name}")
        assert answer.status_code == 200, answer.text
        resource: dict[str, Any] = answer.json()["resource"]
        return resource

    def output(self, path: str, key: str) -> Any:
        outputs = {o["output_key"]: o["output_value"] for o in self.stack(path)["outputs"]}
        return outputs[key]

    def delete(self, path: str) -> None:
        deleted = self.http.delete(f"/{path}")
        assert deleted.status_code == 204, deleted.text

        def gone() -> bool:
            answer = self.http.get(f"/{path}")
            if answer.status_code == 404:
                return True
            status = answer.json()["stack"]["stack_status"]
            assert status != "DELETE_FAILED", answer.json()["stack"]["stack_status_reason"]
            return bool(status == "DELETE_COMPLETE")

        wait_for(gone, timeout=STACK_WAIT, interval=1.0)


@pytest.fixture(scope="module")
def alice_token(keystone: KeystoneBed) -> str:
    return keystone.token("alice", "demo")


@pytest.fixture(scope="module")
def heat_api(heat: HeatBed, keystone: KeystoneBed, alice_token: str) -> Heat:
    return Heat(heat, alice_token, keystone.projects["demo"])


@pytest.fixture(scope="module")
def herd_api(herd: HerdServer, alice_token: str) -> httpx.Client:
    return httpx.Client(base_url=herd.url, headers={"X-Auth-Token": alice_token}, timeout=60)


def herd_get(herd_api: httpx.Client, path: str) -> dict[str, Any]:
    answer = herd_api.get(path)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def cluster_view(herd_api: httpx.Client, cluster_id: str) -> dict[str, Any]:
    cluster: dict[str, Any] = herd_get(herd_api, f"/v1/clusters/{cluster_id}")["cluster"]
    return cluster


def member_profiles(herd_api: httpx.Client, cluster_id: str) -> list[str]:
    nodes = herd_get(herd_api, f"/v1/nodes?cluster_id={cluster_id}")["nodes"]
    return sorted(node["profile_id"] for node in nodes if node["status"] == "ACTIVE")


def test_stack_creates_updates_replaces_and_deletes_herd_resources(
    heat_api: Heat, herd_api: httpx.Client, keystone: KeystoneBed
) -> None:
    # create: each resource's physical id is herd's id, made in alice's project
    path = heat_api.create("lifecycle", STACK)
    stack = heat_api.stack(path)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    ids = {
        name: heat_api.resource(path, name)["physical_resource_id"]
        for name in ("profile", "cluster", "deletion", "receiver")
    }
    profile = herd_get(herd_api, f"/v1/profiles/{ids['profile']}")["profile"]
    assert profile["type"] == "herd.sim-1.0"
    assert profile["spec"]["properties"] == {"zone": "zone-a"}
    assert profile["project"] == keystone.projects["demo"]
    cluster = cluster_view(herd_api, ids["cluster"])
    assert (cluster["status"], cluster["desired_capacity"], cluster["max_size"]) == (
        "ACTIVE",
        2,
        10,
    )
    assert member_profiles(herd_api, ids["cluster"]) == [ids["profile"]] * 2
    attached = herd_get(herd_api, f"/v1/clusters/{ids['cluster']}/policies")["cluster_policies"]
    assert [(p["policy_id"], p["enabled"]) for p in attached] == [(ids["deletion"], True)]
    receiver = herd_get(herd_api, f"/v1/receivers/{ids['receiver']}")["receiver"]
    assert (receiver["type"], receiver["action"], receiver["cluster_id"]) == (
        "webhook",
        "CLUSTER_SCALE_OUT",
        ids["cluster"],
    )
    assert heat_api.output(path, "webhook") == receiver["channel"]["alarm_url"]

    # update: a new size is a resize; a new profile property replaces the profile (not
    # updatable in Heat), and the cluster moves its members to the new one
    updated = heat_api.http.put(
        f"/{path}", json={"template": STACK, "parameters": {"capacity": 3, "zone": "zone-b"}}
    )
    assert updated.status_code == 202, updated.text
    stack = heat_api.wait(path, "UPDATE")
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    new_profile = heat_api.resource(path, "profile")["physical_resource_id"]
    assert new_profile != ids["profile"]
    assert herd_api.get(f"/v1/profiles/{ids['profile']}").status_code == 404
    assert herd_get(herd_api, f"/v1/profiles/{new_profile}")["profile"]["spec"]["properties"] == {
        "zone": "zone-b"
    }
    cluster = cluster_view(herd_api, ids["cluster"])
    assert (cluster["status"], cluster["desired_capacity"], cluster["profile_id"]) == (
        "ACTIVE",
        3,
        new_profile,
    )
    assert member_profiles(herd_api, ids["cluster"]) == [new_profile] * 3

    # mark-unhealthy: Heat records CHECK_FAILED and calls nothing; its next update replaces
    # the resource, and that reaches herd: a new cluster, the policy bound to it, a new
    # receiver for it, the old cluster and receiver deleted
    marked = heat_api.http.patch(
        f"/{path}/resources/cluster",
        json={"mark_unhealthy": True, "resource_status_reason": "members broken"},
    )
    assert marked.status_code == 200, marked.text
    resource = heat_api.resource(path, "cluster")
    assert (resource["resource_status"], resource["resource_status_reason"]) == (
        "CHECK_FAILED",
        "members broken",
    )
    assert cluster_view(herd_api, ids["cluster"])["status"] == "ACTIVE"  # nothing called yet
    patched = heat_api.http.patch(f"/{path}", json={"existing": True, "parameters": {}})
    assert patched.status_code == 202, patched.text
    stack = heat_api.wait(path, "UPDATE")
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    new_cluster = heat_api.resource(path, "cluster")["physical_resource_id"]
    assert new_cluster != ids["cluster"]
    assert herd_api.get(f"/v1/clusters/{ids['cluster']}").status_code == 404
    assert herd_api.get(f"/v1/receivers/{ids['receiver']}").status_code == 404
    cluster = cluster_view(herd_api, new_cluster)
    assert (cluster["status"], cluster["desired_capacity"], cluster["profile_id"]) == (
        "ACTIVE",
        3,
        new_profile,
    )
    attached = herd_get(herd_api, f"/v1/clusters/{new_cluster}/policies")["cluster_policies"]
    assert [p["policy_id"] for p in attached] == [ids["deletion"]]
    new_receiver = heat_api.resource(path, "receiver")["physical_resource_id"]
    assert herd_get(herd_api, f"/v1/receivers/{new_receiver}")["receiver"]["cluster_id"] == (
        new_cluster
    )

    # the webhook Heat's stack outputs works without a token
    triggered = httpx.post(heat_api.output(path, "webhook"), timeout=60)
    assert triggered.status_code == 202, triggered.text
    wait_for_action(herd_api, triggered.json()["action"], timeout=120)
    assert cluster_view(herd_api, new_cluster)["desired_capacity"] == 4

    # unbinding the policy first: Heat 22 cannot delete a policy that still has bindings, nor
    # herd (as Senlin) a cluster that still has policies (docs/heat.md)
    unbound = heat_api.http.patch(
        f"/{path}", json={"existing": True, "parameters": {"bound": False}}
    )
    assert unbound.status_code == 202, unbound.text
    stack = heat_api.wait(path, "UPDATE")
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert herd_get(herd_api, f"/v1/clusters/{new_cluster}/policies")["cluster_policies"] == []

    # delete: every herd resource of the stack is gone
    heat_api.delete(path)
    assert herd_api.get(f"/v1/clusters/{new_cluster}").status_code == 404
    nodes = herd_get(herd_api, "/v1/nodes")["nodes"]
    assert [n["id"] for n in nodes if n["cluster_id"] in (new_cluster, ids["cluster"])] == []
    for kind, made in (("profiles", new_profile), ("receivers", new_receiver)):
        assert herd_api.get(f"/v1/{kind}/{made}").status_code == 404, kind
    # ...but the policy: Heat 22 deletes a policy only while detaching its bindings, and it
    # has none by now, so Heat never sends the DELETE (docs/heat.md); herd still has it
    assert herd_api.get(f"/v1/policies/{ids['deletion']}").status_code == 200
    assert herd_api.delete(f"/v1/policies/{ids['deletion']}").status_code == 204


def test_node_resource_fails_inside_heat_after_herd_made_the_node(
    heat_api: Heat, herd_api: httpx.Client
) -> None:
    """Heat 22's OS::Senlin::Node reads the action id from ``node.location``, which
    openstacksdk fills with its computed location (a mapping of cloud,
    region and project), not the Location header: ``AttributeError: split``. herd made the
    node (answered 202 with its Location); Heat never stored its id, so deleting the stack
    would leave it (and its profile, which it holds), as it would have left Senlin's. If a
    Heat release fixes this, this test fails and the node joins the stack above (docs/heat.md).
    """
    path = heat_api.create("with-node", NODE_STACK)
    stack = heat_api.stack(path)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "resources.node: split" in stack["stack_status_reason"]
    node = heat_api.resource(path, "node")
    assert (node["resource_status"], node["physical_resource_id"]) == ("CREATE_FAILED", "")
    made = [n for n in herd_get(herd_api, "/v1/nodes")["nodes"] if n["name"] == "heat-made-node"]
    assert len(made) == 1
    profile = heat_api.resource(path, "profile")["physical_resource_id"]
    assert made[0]["profile_id"] == profile
    # the bed is thrown away with the module: the orphan and the stack are left as they are
