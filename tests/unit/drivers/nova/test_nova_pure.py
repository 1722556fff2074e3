"""The pure parts of the Nova driver: boot arguments, node data, notifications, retries.

Calls against a real Nova are in tests/e2e/nova; here nothing talks to a cloud.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from herd.drivers.base import NodeRequest, ServerGroup
from herd.drivers.nova.cloud import NovaCloud, NovaOptions, nova_message
from herd.drivers.nova.groups import group_of
from herd.drivers.nova.notifications import failure_of
from herd.drivers.nova.servers import boot_arguments, node_data
from herd.drivers.nova.spec import validate_server_properties
from herd.errors import DriverError
from herd.json_types import dig


def _request(placement: dict[str, Any] | None = None, **props: Any) -> NodeRequest:
    properties = validate_server_properties({"flavor": "m1", "image": "cirros", **props})
    return NodeRequest("node-1", "web-3", 3, "cluster-1", properties, placement or {})


def test_boot_arguments_carry_the_node_identity_and_the_profile() -> None:
    kwargs = boot_arguments(
        _request(
            metadata={"team": "a"},
            user_data="#!/bin/sh\n",
            security_groups=["web"],
            key_name="k",
            admin_pass="pw",
            config_drive=True,
            scheduler_hints={"group": "g"},
        ),
        flavor_id="f-1",
        image_id="i-1",
        owner_tag="herd-abc",
        networks="none",
    )
    assert kwargs["name"] == "web-3"  # the node's name when the profile gives none
    assert kwargs["flavor_id"] == "f-1" and kwargs["image_id"] == "i-1"
    assert kwargs["metadata"] == {
        "team": "a",
        "cluster_node_id": "node-1",
        "cluster_id": "cluster-1",
        "cluster_node_index": "3",
    }
    assert kwargs["tags"] == ["herd-abc", "herd-node-node-1"]
    user_data = kwargs["user_data"]
    assert isinstance(user_data, str) and base64.b64decode(user_data) == b"#!/bin/sh\n"
    assert kwargs["security_groups"] == [{"name": "web"}]
    assert kwargs["key_name"] == "k" and kwargs["admin_password"] == "pw"
    assert kwargs["config_drive"] is True and kwargs["disk_config"] == "AUTO"
    assert kwargs["scheduler_hints"] == {"group": "g"}
    assert kwargs["networks"] == "none"
    assert "availability_zone" not in kwargs


def test_zone_placement_wins_over_the_profile_zone() -> None:
    args = {"flavor_id": "f", "image_id": "i", "owner_tag": "t", "networks": "none"}
    placed = boot_arguments(_request({"zone": "az2"}, availability_zone="az1"), **args)
    assert placed["availability_zone"] == "az2"
    assert boot_arguments(_request(availability_zone="az1"), **args)["availability_zone"] == "az1"
    named = boot_arguments(_request(name="fixed"), **args)
    assert named["name"] == "fixed"


def test_the_affinity_policys_group_joins_the_profiles_hints() -> None:
    args = {"flavor_id": "f", "image_id": "i", "owner_tag": "t", "networks": "none"}
    grouped = _request(
        {"servergroup": "sg-1"}, scheduler_hints={"same_host": ["a"], "group": "mine"}
    )
    assert boot_arguments(grouped, **args)["scheduler_hints"] == {
        "same_host": ["a"],
        "group": "sg-1",  # the policy's group wins over a group the profile hints
    }


def test_server_groups_read_at_either_microversion() -> None:
    new = SimpleNamespace(id="g1", name="web", policy="anti-affinity", policies=None)
    old = SimpleNamespace(id="g2", name="db", policy=None, policies=["affinity"])
    assert group_of(new) == ServerGroup("g1", "web", "anti-affinity")
    assert group_of(old) == ServerGroup("g2", "db", "affinity")


def test_node_data_is_senlin_like_and_keeps_no_password() -> None:
    server = SimpleNamespace(
        id="s-1",
        name="web-3",
        status="ACTIVE",
        availability_zone="az2",
        addresses={"private": [{"addr": "10.0.0.3", "version": 4}]},
        flavor={"original_name": "m1.tiny"},
        image={"id": "img-1"},
        compute_host="compute2",
        hypervisor_hostname=None,
        admin_password="secret",
    )
    data = node_data(server, "RegionOne")
    assert data["placement"] == {"zone": "az2", "region_name": "RegionOne"}
    assert data["server_id"] == "s-1" and data["host"] == "compute2"
    assert data["flavor"] == "m1.tiny" and data["image"] == "img-1"
    assert dig(data, "addresses", "private", 0, "addr") == "10.0.0.3"
    assert "secret" not in json.dumps(data)


def _notification(event: str, **data: Any) -> bytes:
    inner = {
        "event_type": event,
        "publisher_id": "nova-compute:compute1",
        "payload": {"nova_object.name": "InstanceActionPayload", "nova_object.data": data},
    }
    return json.dumps({"oslo.version": "2.0", "oslo.message": json.dumps(inner)}).encode()


def test_failures_in_nova_notifications() -> None:
    assert failure_of(_notification("instance.delete.end", uuid="s-1", state="deleted")) == (
        "s-1",
        "server s-1 was deleted (Nova: instance.delete.end)",
    )
    found = failure_of(_notification("instance.power_off.end", uuid="s-2"))
    assert found is not None and found[0] == "s-2" and "powered off" in found[1]
    fault = {"nova_object.data": {"message": "disk died"}}
    errored = failure_of(_notification("instance.update", uuid="s-3", state="error", fault=fault))
    assert errored == ("s-3", "server s-3 went to ERROR (Nova: instance.update): disk died")
    assert failure_of(_notification("instance.update", uuid="s-3", state="active")) is None
    assert failure_of(_notification("instance.create.end", uuid="s-4")) is None
    started = failure_of(_notification("instance.delete.start", uuid="s-5"))
    assert started == ("s-5", "server s-5 is being deleted (Nova: instance.delete.start)")
    # a delete's shutdown is said by the delete's own events
    assert failure_of(_notification("instance.shutdown.end", uuid="s-5")) is None
    assert failure_of(b"not json") is None
    assert failure_of(_notification("instance.delete.end")) is None  # no uuid


class _Refusal(Exception):
    def __init__(self, status: int, details: str) -> None:
        super().__init__(f"{status}: Client Error for url: http://nova/servers, {details}")
        self.status_code = status
        self.details = details


def test_retries_later_answers_with_back_off_and_names_the_refusal(tmp_path: Path) -> None:
    slept: list[float] = []
    cloud = NovaCloud(NovaOptions(retries=3, retry_delay=0.5), sleep=slept.append)
    answers: list[Any] = [_Refusal(409, "busy"), _Refusal(503, "down"), "done"]

    def flaky() -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert cloud.call("creating", flaky) == "done"
    assert slept == [0.5, 1.0]
    with pytest.raises(DriverError) as caught:
        cloud.call("resizing", lambda: (_ for _ in ()).throw(_Refusal(400, "Invalid flavor")))
    assert str(caught.value) == "resizing: Invalid flavor (HTTP 400)"
    slept.clear()
    with pytest.raises(DriverError, match="still busy"):
        cloud.call_once("creating", lambda: (_ for _ in ()).throw(_Refusal(409, "still busy")))
    assert slept == []  # a create is never sent twice
    assert nova_message(RuntimeError("boom")) == "boom"


def test_owner_tags_differ_per_data_dir(tmp_path: Path) -> None:
    one = NovaOptions.for_data_dir(tmp_path / "a")
    two = NovaOptions.for_data_dir(tmp_path / "b")
    assert one.owner_tag != two.owner_tag and one.owner_tag.startswith("herd-")
    assert len(one.owner_tag) <= 60
    assert NovaOptions.for_data_dir(tmp_path, owner="mine").owner == "mine"


def test_no_cloud_configured_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OS_CLOUD", "OS_AUTH_URL"):
        monkeypatch.delenv(name, raising=False)
    cloud = NovaCloud(NovaOptions())
    assert not cloud.configured
    with pytest.raises(DriverError, match="no OpenStack cloud is configured"):
        cloud.connection()


def test_a_reset_connection_is_retried_for_reads_never_for_a_create() -> None:
    from keystoneauth1.exceptions.connection import ConnectFailure

    slept: list[float] = []
    cloud = NovaCloud(NovaOptions(retries=2, retry_delay=0.5), sleep=slept.append)
    answers: list[Any] = [ConnectFailure("Connection reset by peer"), "server"]

    def read() -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert cloud.call("reading the server", read) == "server"
    assert slept == [0.5]
    with pytest.raises(DriverError, match="reset"):
        cloud.call_once("creating", lambda: (_ for _ in ()).throw(ConnectFailure("reset")))


def test_a_service_that_did_not_answer_its_version_document_is_asked_again() -> None:
    from keystoneauth1.exceptions.discovery import DiscoveryFailure

    slept: list[float] = []
    cloud = NovaCloud(NovaOptions(retries=2, retry_delay=0.5), sleep=slept.append)
    failures = [DiscoveryFailure("Unable to find a version discovery document")]

    def listing() -> list[str]:
        if failures:
            raise failures.pop()
        return ["net"]

    assert cloud.call("listing networks", listing) == ["net"]
    assert slept == [0.5]


def test_region_placement_wins_over_the_profile_context() -> None:
    from herd.drivers.nova.placement import region_of

    props = validate_server_properties(
        {"flavor": "m1", "image": "i", "context": {"region_name": "RegionTwo"}}
    )
    assert region_of({}, props) == "RegionTwo"
    assert region_of({"region_name": "RegionThree"}, props) == "RegionThree"
    assert region_of({}, validate_server_properties({"flavor": "m1", "image": "i"})) is None


def test_connections_are_made_per_region(monkeypatch: pytest.MonkeyPatch) -> None:
    """Region placement sends a node to its region's endpoints (openstacksdk region_name)."""
    made: list[dict[str, Any]] = []

    def connect(**kwargs: Any) -> Any:
        made.append(kwargs)
        return SimpleNamespace(close=lambda: None)

    monkeypatch.setenv("OS_CLOUD", "mycloud")
    cloud = NovaCloud(NovaOptions(request_timeout=7.5), connect=connect)
    one = cloud.connection("RegionTwo")
    assert cloud.connection("RegionTwo") is one  # kept
    cloud.connection(None)
    # every request is bounded: a cloud that stops answering cannot hold a thread for ever
    assert made == [
        {"cloud": "mycloud", "api_timeout": 7.5, "region_name": "RegionTwo"},
        {"cloud": "mycloud", "api_timeout": 7.5},
    ]
    cloud.close()


def test_the_default_owner_is_the_database(tmp_path: Path) -> None:
    from herd.config import Settings

    shared = "postgresql://herd:pw@db.example/herd"
    one = NovaOptions.from_settings(Settings(data_dir=tmp_path / "a", db_url=shared))
    two = NovaOptions.from_settings(Settings(data_dir=tmp_path / "b", db_url=shared))
    assert one.owner_tag == two.owner_tag  # engines sharing a database are one herd
    alone = NovaOptions.from_settings(Settings(data_dir=tmp_path / "a"))
    assert alone.owner_tag != one.owner_tag and "pw" not in alone.owner_tag
    given = NovaOptions.from_settings(Settings(data_dir=tmp_path, nova_owner="team-a"))
    assert given.owner == "team-a"


def test_a_reboot_type_outside_senlins_allowed_values_is_refused_with_its_text() -> None:
    from herd.drivers.nova.operations import NOVA_OPERATIONS
    from herd.drivers.operations import validate_operation
    from herd.errors import InvalidRequest

    def check(params: dict[str, Any]) -> dict[str, Any]:
        return validate_operation(
            "os.nova.server-1.0", NOVA_OPERATIONS, "reboot", params, allow_uncatchable=False
        )

    assert check({"type": "HARD"}) == {"type": "HARD"}
    with pytest.raises(
        InvalidRequest, match=r"^'Unknown' must be one of the allowed values: SOFT, HARD\.$"
    ):
        check({"type": "Unknown"})
    with pytest.raises(
        InvalidRequest,
        match=(
            r"^The requested operation 'dance' is not supported by the profile type "
            r"'os.nova.server-1.0'\.$"
        ),
    ):
        validate_operation(
            "os.nova.server-1.0", NOVA_OPERATIONS, "dance", {}, allow_uncatchable=False
        )
