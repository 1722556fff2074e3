"""``PATCH /v1/actions/<id>`` (1.12) as Senlin: ActionImmutable, children, force."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient
from tests.functional.api.helpers import (
    assert_error,
    make_cluster,
    make_profile,
    mv,
    services,
    set_row,
)

from herd.store import actions as action_store
from herd.store.models import ActionRow, NodeLockRow
from herd.types import ActionCause, ActionControl, ActionName, ActionStatus

CANCEL = {"action": {"status": "CANCELLED"}}
V12 = mv("1.12")
ENGINE = "e" * 36


def _parent_with_children(client: TestClient, *child_states: str) -> tuple[str, list[str]]:
    make_cluster(client, make_profile(client))
    parent = client.get("/v1/actions").json()["actions"][0]
    set_row(client, ActionRow, parent["id"], status="RUNNING", owner=ENGINE)
    children = []
    with services(client).database.write() as session:
        for index, state in enumerate(child_states):
            child = action_store.new_action(
                action=ActionName.NODE_CREATE,
                target=f"node-{index}",
                cluster_id=parent["target"],
                project="default",
                cause=ActionCause.DERIVED,
                status=ActionStatus(state),
                parent_id=parent["id"],
                owner=ENGINE,
                now=time.time(),
            )
            session.add(child)
            session.add(NodeLockRow(node_id=f"node-{index}", action_id=child.id, updated_at=1.0))
            children.append(child.id)
    return parent["id"], children


def _row(client: TestClient, action_id: str) -> ActionRow:
    with services(client).database.read() as session:
        row = session.get(ActionRow, action_id)
        assert row is not None
        return row


def test_cancel_signals_the_running_parent_and_ends_waiting_children(client: TestClient) -> None:
    parent, (running, waiting, done) = _parent_with_children(
        client, "RUNNING", "WAITING_LIFECYCLE_COMPLETION", "SUCCEEDED"
    )
    r = client.patch(f"/v1/actions/{parent}", json=CANCEL, headers=V12)
    assert r.status_code == 202
    assert r.headers["Location"] == f"/v1/actions/{parent}"
    assert (_row(client, parent).status, _row(client, parent).control) == ("RUNNING", "CANCEL")
    assert (_row(client, running).status, _row(client, running).control) == ("RUNNING", "CANCEL")
    assert _row(client, waiting).status == "CANCELLED"
    assert _row(client, waiting).status_reason == "Action execution cancelled"
    assert _row(client, done).status == "SUCCEEDED"
    # the child that ended now holds its node no more (issue 24's cancel matrix found its
    # lock row left behind); the running one keeps its own until it stops
    with services(client).database.read() as session:
        held = {row.action_id for row in session.query(NodeLockRow)}
    assert waiting not in held and running in held


def test_cancel_keeps_the_mark_of_a_forced_delete(client: TestClient) -> None:
    # A running action a forced delete robbed (store/locks.py) keeps that mark when a user
    # then cancels it: its runner still ends it with the forced delete's reason.
    parent, _ = _parent_with_children(client)
    reason = "Cancelled: its cluster was deleted by force (action 01234567)."
    set_row(client, ActionRow, parent, control=ActionControl.FORCED_OUT, status_reason=reason)
    r = client.patch(f"/v1/actions/{parent}", json=CANCEL, headers=V12)
    assert r.status_code == 202
    row = _row(client, parent)
    assert (row.status, row.control, row.status_reason) == (
        "RUNNING",
        ActionControl.FORCED_OUT,
        reason,
    )
    # force-cancelled, it ends now with the user's reason, so the mark goes with it
    r = client.patch(f"/v1/actions/{parent}?force=true", json=CANCEL, headers=V12)
    row = _row(client, parent)
    assert (row.status, row.control, row.status_reason) == (
        "CANCELLED",
        ActionControl.CANCEL,
        "Action execution force cancelled",
    )


def test_force_cancel_ends_everything_and_releases_locks(client: TestClient) -> None:
    parent, children = _parent_with_children(client, "RUNNING", "READY")
    r = client.patch(f"/v1/actions/{parent}?force=true", json=CANCEL, headers=V12)
    assert r.status_code == 202
    for action_id in (parent, *children):
        row = _row(client, action_id)
        assert row.status == "CANCELLED"
        assert row.status_reason == "Action execution force cancelled"
        assert row.end_time is not None
    with services(client).database.read() as session:
        assert session.query(NodeLockRow).count() == 0
    events = client.get(f"/v1/events?oid={parent}").json()["events"]
    assert [(e["action"], e["status"]) for e in events] == [("CLUSTER_CREATE", "CANCELLED")]


def test_an_ended_action_is_immutable(client: TestClient) -> None:
    make_cluster(client, make_profile(client))
    action_id = client.get("/v1/actions").json()["actions"][0]["id"]
    set_row(client, ActionRow, action_id, status="SUCCEEDED")
    expected = (
        f"Action ({action_id[:8]}) is in status (SUCCEEDED) while expected status must be one "
        "of (INIT, WAITING, READY, RUNNING, WAITING_LIFECYCLE_COMPLETION)."
    )
    for query in ("", "?force=true"):
        r = client.patch(f"/v1/actions/{action_id}{query}", json=CANCEL, headers=V12)
        assert_error(r, 409, expected, "ActionImmutable")
    assert _row(client, action_id).status == "SUCCEEDED"


def test_update_body_errors(client: TestClient) -> None:
    make_cluster(client, make_profile(client))
    action_id = client.get("/v1/actions").json()["actions"][0]["id"]
    url = f"/v1/actions/{action_id}"
    assert_error(
        client.patch(url, json={"action": {"status": "CANCELLED", "owner": "x"}}, headers=V12),
        400,
        "Additional properties are not allowed ('owner' was unexpected)",
    )
    assert_error(
        client.patch(url, json={"action": {}}, headers=V12), 400, "'status' is a required property"
    )
    assert_error(
        client.patch(url, json={"status": "CANCELLED"}, headers=V12),
        400,
        "Malformed request data, missing 'action' key in request body.",
    )
    assert_error(
        client.patch(f"{url}?force=maybe", json=CANCEL, headers=V12),
        400,
        "Invalid value 'maybe' specified for 'force'",
    )
    assert_error(
        client.patch("/v1/actions/nope", json=CANCEL, headers=V12),
        404,
        "The action 'nope' could not be found.",
    )
    assert _row(client, action_id).status == "READY"
