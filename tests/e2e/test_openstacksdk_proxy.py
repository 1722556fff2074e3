"""Every public method of openstacksdk's clustering proxy against a real ``herd serve``.

The proxy is wrapped in a recorder; the scenario calls the methods with meaningful
arguments and asserts their results, and the last assertion compares the recorded
names with every public method of the installed ``openstack.clustering.v1._proxy.Proxy``
(its own and the ones it inherits), so a method a new openstacksdk adds is a failure
that names it, not silence.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import openstack
import pytest
from openstack.clustering.v1._proxy import Proxy
from tests.e2e.sdk import wait_action
from tests.e2e.server import HerdServer

pytestmark = pytest.mark.e2e

SIM_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {}}
SLOW_SIM_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {"create_latency": 8}}
BATCH_SPEC = {
    "type": "senlin.policy.batch",
    "version": "1.0",
    "properties": {"min_in_service": 1, "max_batch_size": 1, "pause_time": 0},
}
DELETION_SPEC = {
    "type": "senlin.policy.deletion",
    "version": "1.1",
    "properties": {"criteria": "OLDEST_FIRST", "destroy_after_deletion": True},
}

#: keystoneauth's service-catalog discovery: with ``auth_type=none`` there is no catalog
NEEDS_A_KEYSTONE_CATALOG = {"get_all_version_data"}


def public_methods() -> set[str]:
    return {
        name for name in dir(Proxy) if not name.startswith("_") and callable(getattr(Proxy, name))
    }


class Recorder:
    """The proxy, noting the name of every method called through it."""

    def __init__(self, proxy: Any) -> None:
        self._proxy = proxy
        self.called: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._proxy, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            self.called.add(name)
            return value(*args, **kwargs)

        return call


@pytest.fixture
def foreign_process() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(0.1)"],
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _latest(c: Any, target: str, name: str) -> Any:
    found = [a for a in c.actions(target=target, action=name, sort="created_at:desc")]
    assert found, f"no {name} action on {target}"
    return wait_action(c, found[0].id)


def _ok(c: Any, answer: Any) -> Any:
    action = wait_action(c, answer)
    assert action.status == "SUCCEEDED", action.status_reason
    return action


def test_every_proxy_method(herd_server: HerdServer, foreign_process: Any) -> None:
    url = herd_server.url
    conn = openstack.connect(
        auth_type="none",
        auth={"endpoint": url},
        clustering_endpoint_override=url,
        clustering_default_microversion="1.14",
    )
    c = Recorder(conn.clustering)

    # -- types, profiles, policies ---------------------------------------------------------
    # from 1.5 a type's name has no version (Senlin's; the version is its own field)
    assert {t.name for t in c.profile_types()} >= {"herd.process", "herd.sim", "os.nova.server"}
    assert "create_latency" in c.get_profile_type("herd.sim-1.0").schema
    ops = c.list_profile_type_operations("herd.sim-1.0")["operations"]
    assert set(ops) == {"reboot", "stop", "start", "signal", "pause", "unpause"}
    policy_type_names = {t.name for t in c.policy_types()}
    # from 1.5 a type's name has no version (Senlin's; the version is its own field)
    assert {
        "senlin.policy.deletion",
        "senlin.policy.batch",
        "senlin.policy.affinity",
        "senlin.policy.health",
    } <= policy_type_names
    assert "criteria" in c.get_policy_type("senlin.policy.deletion-1.1").schema
    assert c.validate_profile(spec=SIM_SPEC).type == "herd.sim-1.0"
    profile = c.create_profile(name="sim", spec=SIM_SPEC)
    slow = c.create_profile(name="slow", spec=SLOW_SIM_SPEC)
    assert c.get_profile(profile.id).name == "sim"
    assert c.find_profile("sim").id == profile.id
    assert {p.name for p in c.profiles()} == {"sim", "slow"}
    assert c.update_profile(profile, metadata={"team": "a"}).metadata == {"team": "a"}
    assert c.validate_policy(spec=DELETION_SPEC).type == "senlin.policy.deletion-1.1"
    policy = c.create_policy(name="del", spec=DELETION_SPEC)
    assert c.get_policy(policy.id).name == "del"
    assert c.find_policy("del").id == policy.id
    assert [p.name for p in c.policies()] == ["del"]
    assert c.update_policy(policy, name="deletion").name == "deletion"

    # -- clusters --------------------------------------------------------------------------
    cluster = c.create_cluster(name="web", profile_id=profile.id, desired_capacity=2)
    assert _latest(c, cluster.id, "CLUSTER_CREATE").status == "SUCCEEDED"
    cluster = c.wait_for_status(c.get_cluster(cluster.id), "ACTIVE", wait=60, interval=0.2)
    assert len(cluster.node_ids) == 2
    assert c.find_cluster("web").id == cluster.id
    assert [x.name for x in c.clusters()] == ["web"]
    c.update_cluster(cluster, metadata={"tier": "front"})
    assert _latest(c, cluster.id, "CLUSTER_UPDATE").status == "SUCCEEDED"
    assert c.fetch_cluster_metadata(cluster.id).metadata == {"tier": "front"}
    c.set_cluster_metadata(cluster.id, owner="ops")
    assert c.get_cluster_metadata(cluster.id).metadata == {"tier": "front", "owner": "ops"}
    c.delete_cluster_metadata(cluster.id, ["tier"])
    assert c.fetch_cluster_metadata(cluster.id).metadata == {"owner": "ops"}
    c.delete_cluster_metadata(cluster.id)
    assert c.fetch_cluster_metadata(cluster.id).metadata == {}

    # A rolling update under the batch policy, then a profile-only update (issue 25).
    sim2 = c.create_profile(name="sim2", spec=SIM_SPEC)
    batch = c.create_policy(name="batch", spec=BATCH_SPEC)
    _ok(c, c.attach_policy_to_cluster(cluster, batch.id, enabled=True))
    c.update_cluster(cluster, profile_id=sim2.id)
    rolled = _latest(c, cluster.id, "CLUSTER_UPDATE")
    assert rolled.status == "SUCCEEDED", rolled.status_reason
    assert rolled.owner_id is None  # a finished action belongs to no engine
    plan = c.get(f"/actions/{rolled.id}").json()["action"]["data"]["update"]["plan"]
    assert [len(b) for b in plan] == [1, 1]
    assert {c.get_node(n).profile_id for n in cluster.node_ids} == {sim2.id}
    c.update_cluster(cluster.id, profile_id=profile.id, profile_only=True)
    assert _latest(c, cluster.id, "CLUSTER_UPDATE").status == "SUCCEEDED"
    assert c.get_cluster(cluster.id).profile_id == profile.id
    assert {c.get_node(n).profile_id for n in cluster.node_ids} == {sim2.id}
    _ok(c, c.detach_policy_from_cluster(cluster, batch.id))
    c.delete_policy(batch)

    _ok(c, c.attach_policy_to_cluster(cluster, policy.id, enabled=True))
    (binding,) = list(c.cluster_policies(cluster.id))
    assert binding.policy_name == "deletion" and binding.is_enabled
    assert c.get_cluster_policy(policy.id, cluster.id).policy_id == policy.id
    _ok(c, c.update_cluster_policy(cluster, policy.id, enabled=False))
    assert not c.get_cluster_policy(policy.id, cluster.id).is_enabled

    _ok(c, c.scale_out_cluster(cluster, 2))
    _ok(c, c.scale_in_cluster(cluster, 1))
    _ok(c, c.resize_cluster(cluster, adjustment_type="EXACT_CAPACITY", number=2))
    assert len(c.get_cluster(cluster.id).node_ids) == 2
    _ok(c, c.check_cluster(cluster))
    _ok(c, c.recover_cluster(cluster))
    _ok(c, c.perform_operation_on_cluster(cluster, "signal", signal="SIGHUP"))
    names = [a.attr_value for a in c.collect_cluster_attrs(cluster.id, "name")]
    assert sorted(names) == sorted(n.name for n in c.nodes(cluster_id=cluster.id))

    # -- nodes -----------------------------------------------------------------------------
    members = list(c.nodes(cluster_id=cluster.id))
    assert len(members) == 2
    orphan = c.create_node(name="spare", profile_id=profile.id)
    assert _latest(c, orphan.id, "NODE_CREATE").status == "SUCCEEDED"
    spare = c.get_node(orphan.id, details=True)
    assert spare.status == "ACTIVE" and "placement" in spare.details
    assert c.find_node("spare").id == orphan.id
    c.update_node(orphan, role="standby")
    assert _latest(c, orphan.id, "NODE_UPDATE").status == "SUCCEEDED"
    assert c.get_node(orphan.id).role == "standby"
    _ok(c, c.check_node(orphan))
    _ok(c, c.recover_node(orphan))
    _ok(c, c.perform_operation_on_node(orphan, "reboot"))
    assert c.get_node(orphan.id).data["reboots"] == 1
    _ok(c, c.add_nodes_to_cluster(cluster, [orphan.id]))
    _ok(c, c.remove_nodes_from_cluster(cluster, [orphan.id], destroy_after_deletion=False))
    assert c.get_node(orphan.id).cluster_id == ""
    _ok(c, c.replace_nodes_in_cluster(cluster, {members[0].id: orphan.id}))
    assert orphan.id in c.get_cluster(cluster.id).node_ids
    left = c.get_node(members[0].id)  # Senlin's REPLACE_NODES: the original is an orphan now
    assert (left.cluster_id, left.index, left.status) == ("", -1, "ACTIVE")

    preview = c.adopt_node(preview=True, identity=str(foreign_process.pid), type="herd.process-1.0")
    assert preview["node_profile"]["node_preview"]["properties"]["command"] == sys.executable
    adopted = c.adopt_node(identity=str(foreign_process.pid), type="herd.process-1.0", name="old")
    assert adopted.status == "ACTIVE" and adopted.physical_id.startswith(f"{foreign_process.pid}:")
    c.delete_node(adopted)
    c.wait_for_delete(adopted, wait=30, interval=0.2)
    assert foreign_process.wait(timeout=20) is not None

    # -- actions, events, services, build info ---------------------------------------------
    slow_node = c.create_node(name="slow", profile_id=slow.id)
    (creating,) = [a for a in c.actions(target=slow_node.id) if a.cause == "RPC Request"]
    c.update_action(creating.id, status="CANCELLED")
    cancelled = wait_action(c, creating.id)
    assert cancelled.status == "CANCELLED"
    assert c.get_action(cancelled.id).status_reason
    with pytest.raises(openstack.exceptions.ConflictException) as ended:
        c.update_action(cancelled.id, status="CANCELLED")
    assert "(INIT, WAITING, READY, RUNNING, WAITING_LIFECYCLE_COMPLETION)" in str(ended.value)
    action_names = {a.action for a in c.actions()}
    assert {"CLUSTER_OPERATION", "NODE_OPERATION", "CLUSTER_REPLACE_NODES"} <= action_names
    events = list(c.events(cluster_id=cluster.id))
    assert events and c.get_event(events[0].id).cluster_id == cluster.id
    assert {s.binary for s in c.services()} == {"herd-engine", "herd-api"}
    assert all(s.state == "up" for s in c.services())
    assert c.get_build_info().api["version"]

    # -- receivers -------------------------------------------------------------------------
    receiver = c.create_receiver(
        name="r",
        cluster_id=cluster.id,
        type="webhook",
        action="CLUSTER_SCALE_OUT",
        params={"count": "1"},
    )
    alarm_url = receiver.channel["alarm_url"]
    assert f"/v1/webhooks/{receiver.id}/trigger?V=2&" in alarm_url
    assert [r.name for r in c.receivers()] == ["r"]
    assert c.get_receiver("r").action == "CLUSTER_SCALE_OUT"
    assert c.find_receiver("r", ignore_missing=False).id == receiver.id
    assert c.update_receiver("r", name="r2").name == "r2"
    assert c.get_receiver(receiver.id).name == "r2"
    c.delete_receiver("r2", ignore_missing=False)
    with pytest.raises(openstack.exceptions.NotFoundException):
        c.get_receiver(receiver.id)

    # -- the generic adapter methods the proxy inherits ------------------------------------
    assert c.get_endpoint().rstrip("/") == f"{url}/v1"
    assert c.get_endpoint_data().max_microversion == (1, 14)
    assert c.get_api_major_version() == (1, 0)
    assert c.get("/build-info").json()["build_info"]["api"]["revision"]
    assert c.head("/clusters").status_code == 200
    assert c.request("/clusters", "GET").json()["clusters"][0]["id"] == cluster.id
    created = c.post("/profiles", json={"profile": {"name": "raw", "spec": SIM_SPEC}})
    assert created.status_code == 201
    raw_id = created.json()["profile"]["id"]
    assert c.patch(f"/profiles/{raw_id}", json={"profile": {"name": "raw2"}}).status_code == 200
    put = c.put(f"/clusters/{cluster.id}/metadata", json={"metadata": {"k": "v"}})
    assert put.json() == {"metadata": {"k": "v"}}
    assert c.delete(f"/profiles/{raw_id}").status_code == 204
    assert c.get_project_id() is None and c.get_user_id() is None  # auth none: nobody
    assert c.get_token() == "notused"
    assert c.invalidate() is False
    assert c.should_skip_resource_cleanup("cluster", ["clustering.cluster"]) is True
    parser = argparse.ArgumentParser()
    c.register_argparse_arguments(parser, "clustering")
    options = parser.parse_args(["--os-endpoint-override", url])
    assert options.os_endpoint_override == url
    parser = argparse.ArgumentParser()
    c.register_service_argparse_arguments(parser, "clustering")
    options = parser.parse_args(["--os-clustering-api-version", "1.14"])
    assert options.os_clustering_api_version == "1.14"
    with pytest.raises(Exception):  # noqa: B017 - keystoneauth raises various catalog errors
        c.get_all_version_data()

    # -- teardown through the proxy --------------------------------------------------------
    _ok(c, c.detach_policy_from_cluster(cluster, policy.id))
    doomed_cluster, doomed_node = c.get_cluster(cluster.id), c.get_node(slow_node.id)
    kept = c.create_receiver(
        name="gone-with-cluster", cluster_id=cluster.id, type="webhook", action="CLUSTER_CHECK"
    )
    c.delete_cluster(doomed_cluster, force_delete=False)
    c.wait_for_delete(doomed_cluster, wait=60, interval=0.2)
    with pytest.raises(openstack.exceptions.NotFoundException):
        c.get_receiver(kept.id)  # receivers are deleted with their cluster (as Senlin)
    left_behind = c.get_node(members[0].id)  # replaced earlier: an orphan, deleted here
    c.delete_node(left_behind.id)
    c.wait_for_delete(left_behind, wait=30, interval=0.2)
    c.delete_node(doomed_node.id, ignore_missing=True, force_delete=True)
    c.wait_for_delete(doomed_node, wait=30, interval=0.2)
    c.delete_policy(policy)
    for p in (profile, slow, sim2):
        c.delete_profile(p)
    c.delete_profile(
        c.get_profile(c.find_profile("prof-old", ignore_missing=True).id)
    ) if c.find_profile("prof-old", ignore_missing=True) else None
    assert list(c.clusters()) == [] and list(c.nodes()) == []

    missing = public_methods() - c.called
    assert not missing, f"proxy methods this test does not call: {sorted(missing)}"
