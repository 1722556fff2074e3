"""The Nova driver with trusts: whose trust acts, and the reasons when none can.

Keystone here is a stand-in HTTP server on 127.0.0.1 (tests/loopback.py: Keystone is
outside this unit) that refuses every authentication the way Keystone refuses a deleted
trust (401 with Keystone's error body): the real refusal, by a real Keystone whose user
was deleted, is in tests/e2e/test_nova_trusts.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from openstack.connection import Connection
from tests.loopback import answer_json, serving

from herd.drivers.base import NodeRequest, ResourceRef
from herd.drivers.nova.cloud import NovaCloud, NovaOptions
from herd.drivers.nova.driver import NovaServerDriver
from herd.drivers.nova.sdk import NovaConnection
from herd.drivers.nova.trusts import (
    NodeTrust,
    TrustAuth,
    TrustedConnections,
    TrustNotValid,
    no_trust_reason,
    not_valid_reason,
)
from herd.errors import DriverError, InvalidRequest


class Source:
    def __init__(self, trusts: dict[str, NodeTrust]) -> None:
        self.trusts = trusts
        self.asked: list[str] = []

    def trust_for_node(self, node_id: str) -> NodeTrust:
        self.asked.append(node_id)
        return self.trusts[node_id]


class Refusing(BaseHTTPRequestHandler):
    """Keystone answering every token request as for a deleted trust."""

    requests: list[str] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.requests.append(self.rfile.read(length).decode())
        message = "The request you have made requires authentication."
        answer_json(
            self, 401, {"error": {"code": 401, "title": "Unauthorized", "message": message}}
        )

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def keystone() -> Iterator[str]:
    Refusing.requests = []
    with serving(Refusing) as url:
        yield f"{url}/v3"


def _auth(url: str = "http://127.0.0.1:9/v3") -> TrustAuth:
    return TrustAuth(auth_url=url, username="herd", password="s3cret")


def test_the_reasons_name_the_user_the_project_and_the_trust() -> None:
    assert no_trust_reason("u-1", "p-1") == (
        "herd holds no Keystone trust from user u-1 in project p-1, so it cannot act for them "
        "on the cloud (the trust is made when that user creates the cluster or node with "
        "their own Keystone token)"
    )
    assert not_valid_reason("u-1", "p-1", "Could not find trust (HTTP 404)") == (
        "the Keystone trust from user u-1 in project p-1 is no longer valid (Keystone refused "
        "it: Could not find trust (HTTP 404)); the trust or its user was deleted or disabled, "
        "and herd does not act with any other credentials"
    )
    assert "s3cret" not in repr(_auth())


def test_a_node_without_a_stored_trust_is_refused_without_asking_keystone() -> None:
    source = Source({"n1": NodeTrust("u-1", "p-1", None)})
    connections = TrustedConnections(_auth(), source)
    with pytest.raises(DriverError) as caught:
        connections.connection("n1", None)
    assert str(caught.value) == no_trust_reason("u-1", "p-1")
    assert caught.value.retryable is False
    assert source.asked == ["n1"]


def test_keystone_refusing_the_trust_is_the_clear_reason_never_a_retry(keystone: str) -> None:
    source = Source({"n1": NodeTrust("u-1", "p-1", "trust-1")})
    connections = TrustedConnections(_auth(keystone), source)
    try:
        conn = connections.connection("n1", "RegionOne")
        assert connections.connection("n1", "RegionOne") is conn  # one per trust and region
        assert isinstance(conn, Connection)  # openstacksdk's own, with its session
        with pytest.raises(TrustNotValid) as caught:
            conn.session.get_token()
    finally:
        connections.close()
    message = str(caught.value)
    assert message.startswith("the Keystone trust from user u-1 in project p-1 is no longer valid")
    assert message.count("(HTTP 401)") == 1
    assert caught.value.retryable is False
    # herd's service user asked with the trust, and with nothing else
    sent = json.loads(Refusing.requests[0])["auth"]
    assert sent["scope"] == {"OS-TRUST:trust": {"id": "trust-1"}}
    assert sent["identity"]["password"]["user"]["name"] == "herd"


def test_recheck_is_a_login_through_the_trust_each_time(keystone: str) -> None:
    """What Heat's create is preceded by (a cached token might still pass Heat's cache);
    a token held before the recheck is the e2e test's case (tests/e2e/test_heat_trusts.py)."""
    source = Source({"n1": NodeTrust("u-1", "p-1", "trust-1")})
    connections = TrustedConnections(_auth(keystone), source)
    try:
        with pytest.raises(TrustNotValid):
            connections.recheck("n1", None)
        with pytest.raises(TrustNotValid):
            connections.recheck("n1", None)
    finally:
        connections.close()
    assert len(Refusing.requests) == 2  # one login per recheck


def test_a_refused_trust_fails_the_create_through_the_driver(keystone: str) -> None:
    source = Source({"n1": NodeTrust("u-1", "p-1", "trust-1")})
    driver = NovaServerDriver(
        NovaOptions(retries=3, retry_delay=0.0),
        trusts=TrustedConnections(_auth(keystone), source),
    )
    properties = driver.validate_properties({"flavor": "m1", "image": "cirros"})
    try:
        with pytest.raises(DriverError, match="is no longer valid") as caught:
            driver.create(NodeRequest("n1", "web-1", 1, "c1", properties))
    finally:
        driver.close()
    assert "user u-1 in project p-1" in str(caught.value)
    assert caught.value.retryable is False
    # one attempt, never retried: the create's first call (its look for a server an earlier
    # run made) failed, and nothing was booted
    assert len(Refusing.requests) == 1


def test_with_trusts_nothing_uses_the_configured_cloud(tmp_path: Path) -> None:
    def connect(**kwargs: object) -> NovaConnection:
        raise AssertionError(f"the clouds.yaml cloud was used: {kwargs}")

    options = NovaOptions(cloud="somewhere")
    driver = NovaServerDriver(
        options,
        cloud=NovaCloud(options, connect=connect),
        trusts=TrustedConnections(_auth(), Source({"n1": NodeTrust("u", "p", None)})),
    )
    properties = driver.validate_properties({"flavor": "m1", "image": "cirros"})
    driver.check_against_backend(properties)  # checked at boot, through the trust
    assert driver.discover() == {}
    refused = "not available when herd acts through Keystone"
    with pytest.raises(DriverError, match=refused):
        driver.find_server_group("g", properties)
    with pytest.raises(DriverError, match=refused):
        driver.create_server_group("g", "anti-affinity", properties)
    with pytest.raises(DriverError, match=refused):
        driver.delete_server_group("g", properties)
    with pytest.raises(InvalidRequest, match=refused):
        driver.adopt_preview("server-1", None, False)
    with pytest.raises(DriverError, match="holds no Keystone trust from user u in project p"):
        driver.delete(ResourceRef("n1", "server-1", {}, properties))
    driver.close()
