"""``GET /v1/services``, ``GET /v1/build-info`` and the out-of-range microversion."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import assert_error, issue_token, mv, services

import herd
from herd.api.app import create_app
from herd.config import Settings
from herd.store.models import ApiServiceRow, EngineRow


def _add_engine(client: TestClient, engine_id: str, heartbeat_at: float) -> None:
    with services(client).database.write() as session:
        session.add(
            EngineRow(
                id=engine_id,
                host="h1",
                pid=4242,
                started_at=heartbeat_at,
                heartbeat_at=heartbeat_at,
            )
        )


def test_services_lists_engines_and_this_api_process(client: TestClient) -> None:
    now = time.time()
    _add_engine(client, "e" * 36, now)
    _add_engine(client, "d" * 36, now - 3600)  # its heartbeat stopped an hour ago
    r = client.get("/v1/services")
    assert r.status_code == 200, r.text
    listed = r.json()["services"]
    by_id = {s["id"]: s for s in listed}
    assert by_id["e" * 36] == {
        "id": "e" * 36,
        "host": "h1",
        "binary": "herd-engine",
        "topic": "herd-engine",
        "status": "enabled",
        "disabled_reason": None,
        "state": "up",
        "updated_at": by_id["e" * 36]["updated_at"],
    }
    assert by_id["e" * 36]["updated_at"].endswith("Z")
    assert by_id["d" * 36]["state"] == "down"
    (api,) = [s for s in listed if s["binary"] == "herd-api"]
    assert api["state"] == "up"
    assert api["host"] == socket.gethostname()
    with services(client).database.read() as session:
        row = session.get(ApiServiceRow, api["id"])
        assert row is not None and row.pid == os.getpid()


def test_services_is_admin_only(api_client: ApiClientFactory, settings: Settings) -> None:
    client = api_client(settings.model_copy(update={"auth": "token"}))
    assert_error(
        client.get("/v1/services", headers=issue_token(client, "p1", "member")),
        403,
        "You are not authorized to complete this operation.",
        "Forbidden",
    )
    assert client.get("/v1/services", headers=issue_token(client, "p1", "admin")).status_code == 200


def test_api_row_is_refreshed_and_removed_at_stop(settings: Settings) -> None:
    fast = settings.model_copy(update={"engine_heartbeat_interval": 0.05})
    app = create_app(fast, start_engine=False)
    with TestClient(app) as client:
        (api,) = client.get("/v1/services").json()["services"]
        with services(client).database.read() as session:
            first = session.get(ApiServiceRow, api["id"])
        assert first is not None
        end = time.time() + 20
        while True:
            with services(client).database.read() as session:
                row = session.get(ApiServiceRow, api["id"])
            assert row is not None
            if row.heartbeat_at > first.heartbeat_at:
                break
            assert time.time() < end, "the heartbeat was never refreshed"
            time.sleep(0.05)
    database = app.state.herd.database
    with database.read() as session:
        assert session.get(ApiServiceRow, api["id"]) is None


def test_build_info_reports_version_and_git_revision(client: TestClient) -> None:
    from importlib.metadata import version

    info = client.get("/v1/build-info").json()["build_info"]
    source = Path(herd.__file__).resolve().parent
    git = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    commit = git.stdout.strip() if git.returncode == 0 else None
    assert info["api"]["version"] == version("herd")
    assert info["api"]["git_revision"] == commit
    expected = f"{version('herd')}+g{commit[:12]}" if commit else version("herd")
    assert info["api"]["revision"] == expected
    assert info["engine"]["revision"] == expected
    assert info["engine"]["engines_up"] == 0
    _add_engine(client, "e" * 36, time.time())
    assert client.get("/v1/build-info").json()["build_info"]["engine"]["engines_up"] == 1


def test_out_of_range_microversion_is_senlins_406(client: TestClient) -> None:
    for requested in ("1.15", "2.0", "1.99"):
        assert_error(
            client.get("/v1/clusters", headers=mv(requested)),
            406,
            f"Version '{requested}' is not supported by the API. Minimum is '1.0' and maximum "
            "is '1.14'.",
            "InvalidGlobalAPIVersion",
        )


def test_head_answers_like_get_without_a_body(client: TestClient) -> None:
    get = client.get("/v1/clusters")
    head = client.head("/v1/clusters")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert client.head("/v1/clusters/nope").status_code == 404
