"""Small helpers for the API tests: bodies, error assertions, direct row changes."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from httpx import Response

from herd.api.deps import Services
from herd.store import tokens

SIM_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {}}
DELETION_SPEC = {
    "type": "senlin.policy.deletion",
    "version": "1.1",
    "properties": {"criteria": "OLDEST_FIRST"},
}


def mv(version: str) -> dict[str, str]:
    return {"OpenStack-API-Version": f"clustering {version}"}


def assert_error(
    response: Response, status: int, message: str, error_type: str | None = None
) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status
    assert body["error"]["code"] == status
    assert body["error"]["message"] == message, body["error"]["message"]
    assert body["title"]
    assert "explanation" in body
    if error_type is not None:
        assert body["error"]["type"] == error_type


def services(client: TestClient) -> Services:
    app: Any = client.app
    result: Services = app.state.herd
    return result


def issue_token(client: TestClient, project: str, role: str) -> dict[str, str]:
    """The headers of a new token of ``role`` in ``project`` (for ``auth: token`` clients)."""
    svc = services(client)
    with svc.database.write() as session:
        _row, secret = tokens.create_token(session, project, role, f"{project}-{role}", svc.now())
    return {"X-Auth-Token": secret}


def make_profile(client: TestClient, name: str = "prof", spec: dict[str, Any] | None = None) -> str:
    r = client.post("/v1/profiles", json={"profile": {"name": name, "spec": spec or SIM_SPEC}})
    assert r.status_code == 201, r.text
    return str(r.json()["profile"]["id"])


def make_policy(client: TestClient, name: str = "dp") -> str:
    r = client.post("/v1/policies", json={"policy": {"name": name, "spec": DELETION_SPEC}})
    assert r.status_code == 201, r.text
    return str(r.json()["policy"]["id"])


def make_cluster(client: TestClient, profile: str, name: str = "c1", **fields: Any) -> str:
    r = client.post(
        "/v1/clusters", json={"cluster": {"name": name, "profile_id": profile, **fields}}
    )
    assert r.status_code == 202, r.text
    return str(r.json()["cluster"]["id"])


def make_node(client: TestClient, profile: str, name: str = "n1", **fields: Any) -> str:
    r = client.post("/v1/nodes", json={"node": {"name": name, "profile_id": profile, **fields}})
    assert r.status_code == 202, r.text
    return str(r.json()["node"]["id"])


def finish_actions(client: TestClient, status: str = "SUCCEEDED") -> None:
    """Play the engine: end every queued action, so the next request is not a conflict."""
    from sqlalchemy import update

    from herd.store.models import ActionRow

    with services(client).database.write() as session:
        session.execute(
            update(ActionRow)
            .where(ActionRow.status.in_(["READY", "RUNNING", "WAITING"]))
            .values(status=status, end_time=1.0)
        )


def set_row(client: TestClient, model: Any, row_id: str, **values: Any) -> None:
    with services(client).database.write() as session:
        row = session.get(model, row_id)
        assert row is not None
        for key, value in values.items():
            setattr(row, key, value)


def action_of(response: Response) -> dict[str, Any]:
    return dict(response.json())
