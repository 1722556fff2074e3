"""A cancelled NODE_DELETE is a deletion that did not finish, as a cancelled cluster delete.

Issue 24's leftover: a NODE_DELETE cancelled through ``PATCH /v1/actions/<id>`` kept its
node DELETING and its tombstone DELETING with nothing running, until the next DELETE or
an engine start. Now (``engine/stopped.py``, docs/api.md "Cancelling actions"):

* cancelled before its driver call: the node is ERROR ("Deletion cancelled; a new DELETE
  finishes it."), its resource untouched, its tombstone ERROR with the same reason; a
  cluster recover leaves it so (its user asked for it to go), and a new DELETE finishes it;
* cancelled while its driver call ran: the call finishes and is written, the node is gone,
  and so is its tombstone (a row deleted in bulk does not take its tombstone with it).

Through the real API with its engine, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import services
from tests.functional.conformance.conftest import Api, V, deletion_spec
from tests.waiting import wait_for

from herd.config import Settings
from herd.engine.stopped import NODE_DELETION_CANCELLED
from herd.store import tombstones
from herd.store.models import ActionRow, TombstoneRow
from herd.types import ResourceType

CANCEL = {"action": {"status": "CANCELLED"}}


@pytest.fixture
def api(api_client: ApiClientFactory, db_url: str, tmp_path: Path) -> Iterator[Api]:
    """The app with its engine, on SQLite or PostgreSQL (per ``db_url``)."""
    settings = Settings(data_dir=tmp_path / "data", db_url=db_url, run_engine=True, auth="none")
    yield Api(api_client(settings, start_engine=True))


def _delete(api: Api, node: str) -> str:
    r = api.client.delete(f"/v1/nodes/{node}", headers=V)
    assert r.status_code == 202, r.text
    return str(r.headers["Location"].rsplit("/", 1)[1])


def _cancel_when_running(api: Api, action: str) -> dict[str, object]:
    """Cancel ``action`` once its engine runs it; the action once it has ended."""
    wait_for(
        lambda: api.client.get(f"/v1/actions/{action}").json()["action"]["status"] == "RUNNING"
    )
    r = api.client.patch(f"/v1/actions/{action}", json=CANCEL, headers=V)
    assert r.status_code == 202, r.text
    return api.wait(action)


def _tombstone(api: Api, node: str) -> TombstoneRow | None:
    with services(api.client).database.read() as session:
        return tombstones.get(session, ResourceType.NODE, node)


def _servers(api: Api) -> set[str]:
    """The node ids the sim driver holds a server for."""
    return set(services(api.client).drivers.get("herd.sim-1.0").discover())


def test_cancelled_before_its_driver_call_the_node_is_error_and_deletable(api: Api) -> None:
    cluster = api.cluster(2, one_by_one=False)
    keep, node = api.member_ids(cluster)
    # The grace period holds the deletion before any child or driver call.
    policy = api.attach(cluster, deletion_spec("1.1", grace_period=300))
    action = _cancel_when_running(api, _delete(api, node))

    assert action["status"] == "CANCELLED", action["status_reason"]
    found = api.node(node)
    assert found is not None
    assert (found["status"], found["status_reason"]) == ("ERROR", NODE_DELETION_CANCELLED)
    tombstone = _tombstone(api, node)
    assert tombstone is not None
    assert (tombstone.status, tombstone.reason) == ("ERROR", NODE_DELETION_CANCELLED)
    assert _servers(api) == {keep, node}  # its server was never touched
    assert api.get_cluster(cluster)["desired_capacity"] == 2

    # A cluster recover does not bring back what its user asked to delete: it stays ERROR
    # with its reason and its resource (before, RECREATE made it ACTIVE on a new one).
    recovered = api.act(cluster, {"recover": {}})
    assert recovered["status"] == "SUCCEEDED", recovered["status_reason"]
    after = api.node(node)
    assert after is not None
    assert (after["status"], after["status_reason"], after["physical_id"]) == (
        "ERROR",
        NODE_DELETION_CANCELLED,
        found["physical_id"],
    )
    assert _servers(api) == {keep, node}

    # A new DELETE finishes it (the policy's grace period goes first).
    detach = api.act(cluster, {"policy_detach": {"policy_id": policy}})
    assert detach["status"] == "SUCCEEDED", detach
    again = api.wait(_delete(api, node))
    assert again["status"] == "SUCCEEDED", again["status_reason"]
    assert api.node(node) is None and _tombstone(api, node) is None
    assert _servers(api) == {keep}


def test_cancelled_while_its_driver_call_ran_the_node_and_its_tombstone_are_gone(
    api: Api,
) -> None:
    cluster = api.cluster(2, one_by_one=False, profile_id=api.profile(delete_latency=2.0))
    keep, node = api.member_ids(cluster)
    action_id = _delete(api, node)

    def child_running() -> bool:
        with services(api.client).database.read() as session:
            child = session.query(ActionRow).filter(ActionRow.parent_id == action_id).first()
            return child is not None and child.status == "RUNNING"

    wait_for(child_running)
    action = _cancel_when_running(api, action_id)

    # The call under way finished and was written: the node went with its server.
    assert action["status"] == "CANCELLED", action["status_reason"]
    assert api.node(node) is None
    assert _tombstone(api, node) is None
    assert _servers(api) == {keep}
    r = api.client.delete(f"/v1/nodes/{node}", headers=V)
    assert r.status_code == 404, r.text
    got = api.get_cluster(cluster)
    assert (got["desired_capacity"], got["status"]) == (1, "ACTIVE")
