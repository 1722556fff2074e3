"""Receivers end to end: openstacksdk against a real ``herd serve`` (``auth: token``) of real
processes, and a plain HTTP POST, without any token, to the receiver's ``alarm_url``."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import PgServer, free_port
from tests.e2e.conftest import _kill_node_processes
from tests.e2e.sdk import node_processes, process_profile_spec, wait_action
from tests.e2e.server import HerdServer

from herd.store import tokens
from herd.store.database import Database

pytestmark = pytest.mark.e2e

SCALE_OUT_POLICY = {
    "type": "senlin.policy.scaling",
    "version": "1.0",
    "properties": {
        "event": "CLUSTER_SCALE_OUT",
        # long enough that the second trigger below is surely inside it
        "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": 1, "cooldown": 600},
    },
}


class Live:
    def __init__(self, server: HerdServer, secret: str) -> None:
        self.server = server
        self.secret = secret


def _token(db_url: str) -> str:
    database = Database(db_url)
    try:
        database.migrate()
        with database.write() as session:
            _row, secret = tokens.create_token(session, "pa", "member", "alice", time.time())
    finally:
        database.dispose()
    return secret


@pytest.fixture(
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    """``herd serve --auth token`` with one member token of project ``pa``."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    name: str | None = None
    pg: PgServer | None = None
    if request.param == "postgres":
        pg = request.getfixturevalue("pg_server")
        name = pg.create_database()
        db_url = pg.url_for(name)
    else:
        db_url = f"sqlite:///{data_dir / 'herd.db'}"
    secret = _token(db_url)
    server = HerdServer(data_dir, free_port(), db_url=db_url, HERD_AUTH="token")
    try:
        yield Live(server.start(), secret)
    finally:
        server.stop()
        _kill_node_processes(data_dir)
        if pg is not None and name is not None:
            pg.drop_database(name)


def connect(url: str, token: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import openstack

        conn = openstack.connect(
            auth_type="admin_token",
            auth={"token": token, "endpoint": f"{url}/v1"},
            clustering_endpoint_override=f"{url}/v1",
            # receiver update is microversion 1.7, as in Senlin
            clustering_default_microversion="1.7",
        )
    return conn.clustering


def members(clustering: Any, cluster_id: str) -> list[Any]:
    return list(clustering.nodes(cluster_id=cluster_id))


def test_receivers_with_openstacksdk_and_a_plain_post(live: Live) -> None:
    c = connect(live.server.url, live.secret)
    profile = c.create_profile(name="web", spec=process_profile_spec())
    cluster = c.create_cluster(
        name="web", profile_id=profile.id, desired_capacity=1, min_size=1, max_size=5
    )
    create = [a for a in c.actions() if a.action == "CLUSTER_CREATE"]
    assert wait_action(c, create[0].id).status == "SUCCEEDED"
    policy = c.create_policy(name="grow-slowly", spec=SCALE_OUT_POLICY)
    assert wait_action(c, c.attach_policy_to_cluster(cluster, policy.id)).status == "SUCCEEDED"

    receiver = c.create_receiver(
        name="grow",
        cluster_id=cluster.id,
        action="CLUSTER_SCALE_OUT",
        type="webhook",
        params={"count": 1},
    )
    assert (receiver.type, receiver.action, receiver.cluster_id) == (
        "webhook",
        "CLUSTER_SCALE_OUT",
        cluster.id,
    )
    assert receiver.project_id == "pa" and receiver.params == {"count": 1}
    alarm_url = receiver.channel["alarm_url"]
    assert alarm_url.startswith(f"{live.server.url}/v1/webhooks/{receiver.id}/trigger?V=2&secret=")

    # The alarm: a plain POST, no token, no microversion.
    started = time.monotonic()
    r = httpx.post(alarm_url, timeout=10)
    assert r.status_code == 202, r.text
    assert r.headers["Location"] == f"/v1/actions/{r.json()['action']}"
    action = wait_action(c, r.json()["action"])
    print(f"\nwebhook scale-out took {time.monotonic() - started:.2f}s (POST to SUCCEEDED)")
    assert action.status == "SUCCEEDED", action.status_reason
    assert action.name == f"webhook_{receiver.id[:8]}"
    assert len(members(c, cluster.id)) == 2
    assert set(node_processes(live.server.data_dir)) == {n.id for n in members(c, cluster.id)}

    # A wrong secret is the same 404 as an unknown receiver.
    wrong = alarm_url[:-4] + ("aaaa" if not alarm_url.endswith("aaaa") else "bbbb")
    r = httpx.post(wrong, timeout=10)
    assert r.status_code == 404
    assert r.json()["error"]["message"] == f"The receiver '{receiver.id}' could not be found."
    assert httpx.post(alarm_url.split("&secret=")[0], timeout=10).status_code == 404

    # Inside the scaling policy's cooldown the trigger is accepted and its action fails.
    r = httpx.post(alarm_url, json={"params": {"count": 2}}, timeout=10)
    assert r.status_code == 202, r.text
    action = wait_action(c, r.json()["action"])
    assert action.status == "FAILED"
    assert action.status_reason == (
        f"Policy check failure: Failed policy 'grow-slowly': Policy {policy.id} cooldown is "
        "still in progress."
    )
    assert len(members(c, cluster.id)) == 2

    # list, get, find, update, delete through the SDK.
    assert [r.id for r in c.receivers()] == [receiver.id]
    assert [r.id for r in c.receivers(action="CLUSTER_SCALE_IN")] == []
    shown = c.get_receiver(receiver.id)
    assert shown.channel["alarm_url"] == alarm_url
    assert c.find_receiver("grow").id == receiver.id
    updated = c.update_receiver(receiver, name="grow-more", params={"count": 2})
    assert (updated.name, updated.params) == ("grow-more", {"count": 2})
    assert c.get_receiver(receiver.id).name == "grow-more"
    c.delete_receiver(receiver.id, ignore_missing=False)
    assert c.find_receiver(receiver.id) is None
    assert httpx.post(alarm_url, timeout=10).status_code == 404
