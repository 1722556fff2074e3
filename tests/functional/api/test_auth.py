"""``auth: token``: tokens stored hashed, project isolation, admin's global view."""

from __future__ import annotations

import hashlib

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import SIM_SPEC, assert_error, issue_token, services

from herd.config import Settings
from herd.store import tokens
from herd.store.models import TokenRow


def test_tokens_are_stored_hashed(token_client: TestClient) -> None:
    headers = issue_token(token_client, "p1", "member")
    secret = headers["X-Auth-Token"]
    with services(token_client).database.read() as session:
        (row,) = tokens.list_tokens(session)
        assert isinstance(row, TokenRow)
        assert row.token_hash == hashlib.sha256(secret.encode()).hexdigest()
        assert secret not in (row.token_hash, row.id, row.name)
        assert tokens.lookup(session, secret) is not None
        assert tokens.lookup(session, secret + "x") is None
    with services(token_client).database.write() as session:
        assert tokens.revoke(session, row.id)
    assert token_client.get("/v1/profiles", headers=headers).status_code == 401


def test_unknown_role_is_rejected(token_client: TestClient) -> None:
    from herd.errors import InvalidRequest

    with services(token_client).database.write() as session, pytest.raises(InvalidRequest):
        tokens.create_token(session, "p1", "root", "x", 0.0)


def test_missing_or_bad_token_is_401(token_client: TestClient) -> None:
    r = token_client.get("/v1/clusters")
    assert r.status_code == 401
    assert r.json()["error"]["type"] == "Unauthorized"
    assert token_client.get("/v1/clusters", headers={"X-Auth-Token": "nope"}).status_code == 401
    # Versions and health need no token.
    assert token_client.get("/").status_code == 300
    assert token_client.get("/healthz").status_code == 200


def test_members_see_only_their_project(token_client: TestClient) -> None:
    alice = issue_token(token_client, "pa", "member")
    bob = issue_token(token_client, "pb", "member")
    admin = issue_token(token_client, "ops", "admin")
    r = token_client.post(
        "/v1/profiles", json={"profile": {"name": "pa-prof", "spec": SIM_SPEC}}, headers=alice
    )
    assert r.status_code == 201
    profile = r.json()["profile"]
    assert profile["project"] == "pa"
    pid = profile["id"]
    assert_error(
        token_client.get(f"/v1/profiles/{pid}", headers=bob),
        404,
        f"The profile '{pid}' could not be found.",
    )
    assert token_client.get("/v1/profiles/pa-prof", headers=bob).status_code == 404
    assert token_client.get("/v1/profiles", headers=bob).json()["profiles"] == []
    assert token_client.delete(f"/v1/profiles/{pid}", headers=bob).status_code == 404
    r = token_client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": pid}}, headers=bob
    )
    assert_error(r, 400, f"The specified profile '{pid}' could not be found.")
    assert_error(
        token_client.get("/v1/profiles?global_project=true", headers=bob),
        403,
        "You are not authorized to complete this operation.",
        "Forbidden",
    )
    # Admins see one resource by id anywhere, and every project with global_project.
    assert token_client.get(f"/v1/profiles/{pid}", headers=admin).status_code == 200
    assert token_client.get("/v1/profiles", headers=admin).json()["profiles"] == []
    r = token_client.get("/v1/profiles?global_project=true", headers=admin)
    assert [p["id"] for p in r.json()["profiles"]] == [pid]
    # An action on alice's cluster, started by the admin, belongs to alice's project.
    r = token_client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": pid}}, headers=alice
    )
    cid = r.json()["cluster"]["id"]
    assert token_client.get(f"/v1/clusters/{cid}", headers=bob).status_code == 404
    assert token_client.get("/v1/actions", headers=bob).json()["actions"] == []
    assert len(token_client.get("/v1/actions", headers=alice).json()["actions"]) == 1


def test_agent_may_list_globally(token_client: TestClient) -> None:
    agent = issue_token(token_client, "regions", "agent")
    assert token_client.get("/v1/clusters?global_project=true", headers=agent).status_code == 200


def test_settings_refuse_auth_none_off_loopback() -> None:
    from pydantic import ValidationError

    from herd.config import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    Settings(host="127.0.0.1", auth="none")
    Settings(host="0.0.0.0", auth="token")
    with pytest.raises(ValidationError, match=r"Refusing to serve with auth .none. on 0\.0\.0\.0"):
        Settings(host="0.0.0.0", auth="none")
