"""herd's ``summary=true`` on the action reads (issue 26): the dashboard's first load at 10,000
members was 845 KB, most of it one creation's ``depends_on`` and ``outputs.nodes_added``.

The engine is not running here: the actions' dependencies and outputs are written to the store
as the engine writes them, so each list is far longer than what a summary keeps.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update
from tests.functional.api.helpers import assert_error, make_cluster, make_profile, services

from herd.api.action_summary import KEEP
from herd.store.models import ActionRow, DependencyRow
from herd.types import ActionCause, ActionName, ActionStatus

CHILDREN = KEEP * 3 + 1


def _a_big_creation(client: TestClient) -> tuple[str, str, list[str]]:
    """A cluster whose creation action depends on CHILDREN actions and added CHILDREN members."""
    r = client.post(
        "/v1/clusters",
        json={"cluster": {"name": "big", "profile_id": make_profile(client)}},
    )
    cluster_id = r.json()["cluster"]["id"]
    action_id = r.headers["Location"].rsplit("/", 1)[1]
    children = [f"{i:08d}-0000-4000-8000-000000000000" for i in range(CHILDREN)]
    added = [f"node-{i:04d}" for i in range(CHILDREN)]
    victims = [f"victim-{i:04d}" for i in range(CHILDREN)]
    outputs = {
        "nodes_added": added,
        "shrink": {"victims": victims, "rules": [f"rule {i}" for i in range(CHILDREN)]},
        "lifecycle_hooks": {v: {"node_name": v.upper(), "result": "CONTINUE"} for v in victims},
        "grace_period_waited": 0,
    }
    with services(client).database.write() as session:
        session.execute(update(ActionRow).where(ActionRow.id == action_id).values(outputs=outputs))
        session.add_all(DependencyRow(depended=child, dependent=action_id) for child in children)
    return cluster_id, action_id, children


def _only(client: TestClient, path: str) -> dict[str, Any]:
    r = client.get(path)
    assert r.status_code == 200, r.text
    body = r.json()
    one: dict[str, Any] = body["actions"][0] if "actions" in body else body["action"]
    return one


def test_a_summary_keeps_the_first_items_of_each_long_list_and_says_how_many(
    client: TestClient,
) -> None:
    cluster_id, action_id, children = _a_big_creation(client)
    full = _only(client, f"/v1/actions/{action_id}")
    for path in (
        f"/v1/actions/{action_id}?summary=true",
        f"/v1/actions?cluster_id={cluster_id}&summary=1",
    ):
        summary = _only(client, path)
        assert summary["truncated"] == {
            "depends_on": CHILDREN,
            "outputs.lifecycle_hooks": CHILDREN,
            "outputs.nodes_added": CHILDREN,
            "outputs.shrink.rules": CHILDREN,
            "outputs.shrink.victims": CHILDREN,
        }
        assert summary["depends_on"] == children[:KEEP]  # in the order they were stored
        out = summary["outputs"]
        assert out["nodes_added"] == full["outputs"]["nodes_added"][:KEEP]
        # parallel lists stay aligned: the n-th victim keeps its rule
        assert out["shrink"]["victims"] == full["outputs"]["shrink"]["victims"][:KEEP]
        assert out["shrink"]["rules"] == full["outputs"]["shrink"]["rules"][:KEEP]
        assert list(out["lifecycle_hooks"]) == out["shrink"]["victims"]
        assert out["lifecycle_hooks"]["victim-0000"] == {
            "node_name": "VICTIM-0000",
            "result": "CONTINUE",
        }
        assert out["grace_period_waited"] == 0
        # everything else is the full view's
        rest = {k: v for k, v in summary.items() if k not in ("depends_on", "outputs", "truncated")}
        assert rest == {k: v for k, v in full.items() if k not in ("depends_on", "outputs")}
    # the full view is Senlin's, unchanged: every id, no ``truncated``
    assert sorted(full["depends_on"]) == sorted(children) and "truncated" not in full
    assert len(full["outputs"]["nodes_added"]) == CHILDREN
    # an action on the other side of the dependencies is cut by ``depended_by``
    child = _child(client, children[0], action_id)
    assert child["depended_by"] == [action_id] and child["truncated"] == {}


def _child(client: TestClient, child_id: str, parent_id: str) -> dict[str, Any]:
    """Give a child id a row (a node action of the cluster), then read its summary."""
    with services(client).database.write() as session:
        parent = session.get(ActionRow, parent_id)
        assert parent is not None
        session.add(
            ActionRow(
                id=child_id,
                name="child",
                action=ActionName.NODE_CREATE,
                target=parent.target,
                cause=ActionCause.DERIVED,
                user=parent.user,
                project=parent.project,
                status=ActionStatus.SUCCEEDED,
                created_at=parent.created_at,
            )
        )
    return _only(client, f"/v1/actions/{child_id}?summary=yes")


def test_short_lists_are_whole_and_a_bad_summary_value_is_a_400(client: TestClient) -> None:
    cluster_id = make_cluster(client, make_profile(client))
    small = _only(client, f"/v1/actions?cluster_id={cluster_id}&summary=true")
    full = _only(client, f"/v1/actions?cluster_id={cluster_id}")
    assert small == {**full, "truncated": {}}
    assert _only(client, f"/v1/actions?cluster_id={cluster_id}&summary=false") == full
    for path in ("/v1/actions?summary=maybe", f"/v1/actions/{small['id']}?summary=maybe"):
        assert_error(client.get(path), 400, "Invalid value 'maybe' specified for 'summary'")
