"""Hostile input: nothing a tenant sends can hurt herd or reach inside (issue 24).

Each section is one promise of docs/security.md; the pure parts are tested in
tests/unit/engine/test_outbound.py and tests/unit/api/test_hostile_bodies.py.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
import uvicorn
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory, free_port
from tests.functional.api.helpers import SIM_SPEC, make_cluster, make_profile, services
from tests.waiting import wait_for

from herd.api.app import create_app
from herd.config import Settings
from herd.errors import InvalidRequest
from herd.store import tokens
from herd.store.models import ActionRow, ClusterRow, NodeRow

SIM = json.dumps(SIM_SPEC)


def _health_spec(poll_url: str) -> dict[str, Any]:
    return {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {
                "detection_modes": [
                    {"type": "NODE_STATUS_POLL_URL", "options": {"poll_url": poll_url}}
                ]
            }
        },
    }


def _hook_spec(url: str) -> dict[str, Any]:
    return {
        "type": "senlin.policy.deletion",
        "version": "1.1",
        "properties": {"hooks": {"type": "webhook", "params": {"url": url}, "timeout": 5}},
    }


POLL_FIELD = "properties.detection.detection_modes[0].options.poll_url"
HOOK_FIELD = "properties.hooks.params.url"


@pytest.fixture
def default_client(api_client: ApiClientFactory, db_url: str, tmp_path: Path) -> TestClient:
    """herd as shipped: no outbound allow-list (the suite's own settings allow loopback)."""
    default = Settings.model_fields["outbound_allow"].get_default(call_default_factory=True)
    assert default == []
    settings = Settings(data_dir=tmp_path / "data", db_url=db_url, run_engine=False)
    return api_client(settings.model_copy(update={"outbound_allow": default}))


# -- the outbound guard --------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/health",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0177.0.0.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/",
        "http://localhost/",
    ],
)
def test_policies_that_would_reach_inside_are_refused(default_client: TestClient, url: str) -> None:
    for spec, field in ((_health_spec(url), POLL_FIELD), (_hook_spec(url), HOOK_FIELD)):
        answer = default_client.post("/v1/policies", json={"policy": {"name": "p", "spec": spec}})
        assert answer.status_code == 400, answer.text
        message = answer.json()["error"]["message"]
        assert message.startswith(f"{field}: herd does not call"), message
    assert default_client.get("/v1/policies").json()["policies"] == []


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://example.com/", "ftp://x/"])
def test_poll_urls_are_http_or_https(default_client: TestClient, url: str) -> None:
    answer = default_client.post(
        "/v1/policies", json={"policy": {"name": "p", "spec": _health_spec(url)}}
    )
    assert answer.status_code == 400, answer.text
    assert POLL_FIELD in answer.json()["error"]["message"]


def test_the_operator_allow_list_lets_loopback_through(client: TestClient) -> None:
    """The suite's settings allow 127.0.0.0/8 (tests/conftest.py): local receivers work."""
    for spec in (_health_spec("http://127.0.0.1:9/h"), _hook_spec("http://127.0.0.1:9/hook")):
        answer = client.post("/v1/policies", json={"policy": {"name": "p", "spec": spec}})
        assert answer.status_code == 201, answer.text


# -- poisoned input ------------------------------------------------------------------------

LONE = "\\ud800"  # as it is written in JSON: a lone UTF-16 surrogate, not a character


def _raw(client: TestClient, method: str, url: str, text: str) -> Any:
    return client.request(
        method, url, content=text.encode("ascii"), headers={"Content-Type": "application/json"}
    )


def test_lone_surrogates_are_refused_everywhere(client: TestClient) -> None:
    profile = make_profile(client)
    cluster = make_cluster(client, profile)
    cases = [
        (
            "POST",
            "/v1/profiles",
            f'{{"profile": {{"name": "{LONE}", "spec": {SIM}}}}}',
            "profile.name",
        ),
        (
            "POST",
            "/v1/clusters",
            f'{{"cluster": {{"name": "x", "profile_id": "{profile}", '
            f'"metadata": {{"{LONE}": 1}}}}}}',
            "cluster.metadata.\\ud800",
        ),
        (
            "PATCH",
            f"/v1/clusters/{cluster}",
            f'{{"cluster": {{"name": "a{LONE}b"}}}}',
            "cluster.name",
        ),
        (
            "PATCH",
            f"/v1/clusters/{cluster}",
            f'{{"cluster": {{"metadata": {{"k": ["{LONE}"]}}}}}}',
            "cluster.metadata.k[0]",
        ),
        (
            "PUT",
            f"/v1/clusters/{cluster}/metadata",
            f'{{"metadata": {{"{LONE}": "v"}}}}',
            "metadata.\\ud800",
        ),
        (
            "POST",
            f"/v1/clusters/{cluster}/actions",
            f'{{"scale_out": {{"count": "{LONE}"}}}}',
            "count",
        ),
    ]
    for method, url, text, field in cases:
        answer = _raw(client, method, url, text)
        assert answer.status_code == 400, (url, answer.text)
        message = answer.json()["error"]["message"]
        assert "lone UTF-16 surrogates" in message, message
        assert message.startswith(f"Invalid value for '{field}': "), message
    listed = client.get("/v1/clusters").json()["clusters"]
    assert [c["metadata"] for c in listed] == [{}]
    assert [c["name"] for c in listed] == ["c1"]


@pytest.mark.parametrize("number", ["NaN", "nan", "Infinity", "-inf", "1e999"])
def test_resize_numbers_must_be_numbers(client: TestClient, number: str) -> None:
    cluster = make_cluster(client, make_profile(client))
    answer = client.post(
        f"/v1/clusters/{cluster}/actions",
        json={"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": number}},
    )
    assert answer.status_code == 400, answer.text
    assert (
        answer.json()["error"]["message"] == f"The value for number must be a number: '{number}'."
    )


def test_json_nan_literals_are_refused(client: TestClient) -> None:
    cluster = make_cluster(client, make_profile(client))
    answer = _raw(
        client,
        "POST",
        f"/v1/clusters/{cluster}/actions",
        '{"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": NaN}}',
    )
    assert answer.status_code == 400, answer.text
    assert "NaN and Infinity" in answer.json()["error"]["message"]


def test_a_stored_lone_surrogate_never_breaks_a_read(client: TestClient) -> None:
    """Rows written before the door was shut (or by hand) are still served.

    Each lone surrogate reads as U+FFFD (store/database.py).

    Only JSON columns could take one (text columns refuse it on write).
    """
    cluster = make_cluster(client, make_profile(client))
    poison = chr(0xD800)
    with services(client).database.write() as session:
        row = session.get(ClusterRow, cluster)
        assert row is not None
        row.meta_data = {poison: f"v{poison}"}
        for action in session.scalars(sqlalchemy.select(ActionRow)):
            action.inputs = {"note": poison}
    for url in ("/v1/actions", "/v1/clusters", f"/v1/clusters/{cluster}"):
        answer = client.get(url)
        assert answer.status_code == 200, (url, answer.text)
    detail = client.get(f"/v1/clusters/{cluster}").json()["cluster"]
    assert detail["metadata"] == {"\ufffd": "v\ufffd"}
    actions = client.get("/v1/actions").json()["actions"]
    assert actions and all(a["inputs"].get("note") == "\ufffd" for a in actions)
    one = client.get(f"/v1/actions/{actions[0]['id']}")
    assert one.status_code == 200, one.text


def test_an_unexpected_error_keeps_the_connection(tmp_path: Path) -> None:
    """A 500 is answered with Senlin's body on the same keep-alive connection.

    The failing route is added for the test: herd has no known 500 left to provoke.
    """
    settings = Settings(data_dir=tmp_path / "data", run_engine=False)
    app = create_app(settings)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    with _running(app) as port, socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        first = _exchange(conn, "/boom")
        assert first.startswith(b"HTTP/1.1 500"), first
        assert b'"type":"InternalError"' in first and b"a bug" not in first
        second = _exchange(conn, "/healthz")  # the same connection answers again
        assert second.startswith(b"HTTP/1.1 200"), second


def _exchange(conn: socket.socket, path: str) -> bytes:
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: herd\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            line.split(b":", 1)[1]
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        assert chunk, "connection closed mid-body"
        body += chunk
    return head + b"\r\n\r\n" + body


# -- limits --------------------------------------------------------------------------------


@pytest.fixture
def small_client(api_client: ApiClientFactory, db_url: str, tmp_path: Path) -> TestClient:
    """herd with small limits, so that the tests do not send megabytes."""
    settings = Settings(
        data_dir=tmp_path / "data",
        db_url=db_url,
        run_engine=False,
        max_request_body_bytes=4096,
        max_metadata_keys=3,
        max_metadata_key_length=8,
        max_metadata_value_bytes=32,
        max_clusters_per_project=2,
        max_nodes_per_project=3,
    )
    return api_client(settings)


def test_a_body_past_the_limit_is_a_413(small_client: TestClient) -> None:
    big = {"profile": {"name": "p", "spec": SIM_SPEC, "metadata": {"k": "x" * 5000}}}
    answer = small_client.post("/v1/profiles", json=big)
    assert answer.status_code == 413, answer.text
    body = answer.json()
    assert body["code"] == 413 and body["title"] == "Request Entity Too Large"
    assert body["error"] == {
        "code": 413,
        "message": "Request limit exceeded: the request body is larger than 4096 bytes "
        "(max_request_body_bytes).",
        "type": "RequestLimitExceeded",
    }
    assert small_client.get("/v1/profiles").json()["profiles"] == []


def test_a_streamed_body_is_cut_off_at_the_limit(tmp_path: Path) -> None:
    """No Content-Length (chunked): refused once it streams past the limit, not read whole.

    A real server: the test client would read the whole body before the app saw it.
    """
    settings = Settings(data_dir=tmp_path / "data", run_engine=False, max_request_body_bytes=4096)
    with (
        _running(create_app(settings)) as port,
        socket.create_connection(("127.0.0.1", port), timeout=10) as conn,
    ):
        conn.sendall(
            b"POST /v1/profiles HTTP/1.1\r\nHost: herd\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"x" * 1024
        sent = 0
        answer = b""
        with contextlib.suppress(OSError):  # the server may close once it has answered
            while sent < 10_000 and not answer:  # 10 MB if it were all read
                conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += 1
                ready, _, _ = select.select([conn], [], [], 0.01 if sent > 8 else 0)
                if ready:
                    answer = conn.recv(65536)
        conn.settimeout(30)
        while b"}}" not in answer:  # the head and the body may come apart
            more = conn.recv(65536)
            if not more:
                break
            answer += more
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"type":"RequestLimitExceeded"' in answer
    assert sent < 10_000  # answered long before 10 MB were sent


@contextlib.contextmanager
def _running(app: Any) -> Iterator[int]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, timeout=30)
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_metadata_is_bounded(small_client: TestClient) -> None:
    profile = make_profile(small_client)
    cases = {
        "more than 3 keys (max_metadata_keys)": {"a": 1, "b": 2, "c": 3, "d": 4},
        "a key is longer than 8 characters (max_metadata_key_length)": {"k" * 9: 1},
        "the value is larger than 32 bytes as JSON (max_metadata_value_bytes)": {"k": "v" * 40},
    }
    for why, metadata in cases.items():
        answer = small_client.post(
            "/v1/clusters",
            json={"cluster": {"name": "c", "profile_id": profile, "metadata": metadata}},
        )
        assert answer.status_code == 400, answer.text
        message = answer.json()["error"]["message"]
        assert message.startswith("Invalid value for 'cluster.metadata") and why in message
    assert small_client.get("/v1/clusters").json()["clusters"] == []


@pytest.mark.parametrize("value", [1e30, 2147483648, "2147483648", 604801])
def test_durations_have_an_upper_bound(client: TestClient, value: Any) -> None:
    specs = {
        "grace_period": {
            "type": "senlin.policy.deletion",
            "version": "1.1",
            "properties": {"grace_period": value},
        },
        "timeout": _hook_spec("http://127.0.0.1:9/h")
        | {
            "properties": {
                "hooks": {"type": "webhook", "params": {"url": "http://127.0.0.1:9/h"}}
                | {"timeout": value}
            }
        },
        "cooldown": {
            "type": "senlin.policy.scaling",
            "version": "1.0",
            "properties": {"event": "CLUSTER_SCALE_IN", "adjustment": {"cooldown": value}},
        },
        "interval": _health_spec("http://127.0.0.1:9/h")
        | {
            "properties": {
                "detection": {
                    "interval": value,
                    "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
                }
            }
        },
    }
    for key, spec in specs.items():
        answer = client.post("/v1/policies", json={"policy": {"name": "p", "spec": spec}})
        assert answer.status_code == 400, (key, answer.text)
        message = answer.json()["error"]["message"]
        assert message.endswith(f"of '{key}' must be less than or equal to 604800."), message
    profile = make_profile(client)
    answer = client.post(
        "/v1/clusters", json={"cluster": {"name": "c", "profile_id": profile, "timeout": value}}
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"] in (
        "The value for the timeout field must be less than or equal to 604800.",
        f"The value for timeout must be an integer: '{value}'.",
    )


def test_project_quotas(small_client: TestClient) -> None:
    profile = make_profile(small_client)
    make_cluster(small_client, profile, "one", desired_capacity=1)
    make_cluster(small_client, profile, "two", desired_capacity=1)
    third = small_client.post(
        "/v1/clusters", json={"cluster": {"name": "three", "profile_id": profile}}
    )
    assert third.status_code == 403, third.text
    assert third.json()["error"]["message"] == "Quota exceeded for resources."
    # Two nodes asked for by the clusters (their rows come with the engine); the count
    # is of node rows, so make them by hand here: one more node passes, two do not.
    node = small_client.post("/v1/nodes", json={"node": {"name": "n", "profile_id": profile}})
    assert node.status_code == 202, node.text
    clusters = small_client.get("/v1/clusters").json()["clusters"]
    grow = small_client.post(
        f"/v1/clusters/{clusters[0]['id']}/actions", json={"scale_out": {"count": 3}}
    )
    assert grow.status_code == 403, grow.text
    assert grow.json()["error"]["message"] == "Quota exceeded for resources."
    resize = small_client.post(
        f"/v1/clusters/{clusters[0]['id']}/actions",
        json={"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5}},
    )
    assert resize.status_code == 403, resize.text
    shrink = small_client.post(
        f"/v1/clusters/{clusters[0]['id']}/actions",
        json={"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 0}},
    )
    # Shrinking is never over quota; it passes the quota and meets the cluster's queued
    # create (no engine runs here), a 409.
    assert shrink.status_code == 409, shrink.text
    assert shrink.json()["error"]["type"] == "ActionConflict"


# -- /metrics stays bounded ----------------------------------------------------------------


def test_made_up_methods_add_no_series(client: TestClient) -> None:
    for index in range(30):
        client.request(f"BREW{index}", "/v1/clusters")
    text = client.get("/metrics").text
    assert "BREW" not in text
    lines = [line for line in text.splitlines() if line.startswith("herd_api_requests_total{")]
    other = [line for line in lines if 'method="other"' in line]
    assert len(other) == 1 and other[0].endswith(" 30.0"), other


# -- least privilege -----------------------------------------------------------------------


@pytest.fixture
def token_client(api_client: ApiClientFactory, db_url: str, tmp_path: Path) -> TestClient:
    return api_client(Settings(data_dir=tmp_path / "data", db_url=db_url, auth="token"))


def _token(client: TestClient, project: str, role: str, expires_at: float | None = None) -> Any:
    with services(client).database.write() as session:
        row, secret = tokens.create_token(
            session, project, role, "", time.time(), expires_at=expires_at
        )
        return row.id, {"X-Auth-Token": secret}


def test_agents_never_read_specs_or_metadata(token_client: TestClient) -> None:
    _id, admin = _token(token_client, "p1", "admin")
    _id, agent = _token(token_client, "p2", "agent")
    secret_spec = {"type": "herd.sim", "version": "1.0", "properties": {"zone": "DB_PASSWORD"}}
    profile = token_client.post(
        "/v1/profiles",
        json={"profile": {"name": "p", "spec": secret_spec, "metadata": {"k": "s3cr3t"}}},
        headers=admin,
    ).json()["profile"]["id"]
    cluster = token_client.post(
        "/v1/clusters",
        json={"cluster": {"name": "c", "profile_id": profile, "metadata": {"k": "s3cr3t"}}},
        headers=admin,
    )
    assert cluster.status_code == 202, cluster.text
    for url in ("/v1/profiles", "/v1/clusters", "/v1/policies", "/v1/nodes"):
        answer = token_client.get(url, params={"global_project": "true"}, headers=agent)
        assert answer.status_code == 200, (url, answer.text)
        assert "s3cr3t" not in answer.text and "DB_PASSWORD" not in answer.text, answer.text
    listed = token_client.get(
        "/v1/clusters", params={"global_project": "true"}, headers=agent
    ).json()["clusters"]
    assert [(c["id"], c["name"], c["project"]) for c in listed] == [
        (cluster.json()["cluster"]["id"], "c", "p1")
    ]  # what reconciliation needs is there


def test_body_references_resolve_in_the_own_project(token_client: TestClient) -> None:
    """An admin of p1 cannot build on p2's profile (p2 could then not delete it)."""
    _id, admin = _token(token_client, "p1", "admin")
    _id, other = _token(token_client, "p2", "member")
    theirs = token_client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}}, headers=other
    ).json()["profile"]["id"]
    answer = token_client.post(
        "/v1/clusters",
        json={"cluster": {"name": "c", "profile_id": theirs}},
        headers=admin,
    )
    assert answer.status_code in (400, 404), answer.text
    assert "could not be found" in answer.json()["error"]["message"]
    node = token_client.post(
        "/v1/nodes", json={"node": {"name": "n", "profile_id": theirs}}, headers=admin
    )
    assert node.status_code in (400, 404), node.text
    deleted = token_client.delete(f"/v1/profiles/{theirs}", headers=other)
    assert deleted.status_code == 204, deleted.text


def test_token_revoke_takes_an_exact_id_or_a_long_prefix(token_client: TestClient) -> None:
    first, _ = _token(token_client, "p1", "member")
    second, _ = _token(token_client, "p1", "member")
    database = services(token_client).database
    for short in ("", "   ", first[:7]):
        with pytest.raises(InvalidRequest, match="at least 8 characters"), database.write() as s:
            tokens.revoke(s, short)
    with database.write() as session:
        assert tokens.revoke(session, "%%%%%%%%") is False  # no LIKE wildcards
        assert tokens.revoke(session, first[:8]) is True
    with database.read() as session:
        assert [row.id for row in tokens.list_tokens(session)] == [second]


def test_tokens_can_expire(token_client: TestClient) -> None:
    _id, expired = _token(token_client, "p1", "member", expires_at=time.time() - 1)
    _id, fresh = _token(token_client, "p1", "member", expires_at=time.time() + 3600)
    assert token_client.get("/v1/clusters", headers=expired).status_code == 401
    assert token_client.get("/v1/clusters", headers=fresh).status_code == 200


# -- the OpenAPI document tells the truth --------------------------------------------------


def test_openapi_documents_senlin_errors_and_no_422(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    assert '"422"' not in json.dumps(document)
    assert "HTTPValidationError" not in document["components"]["schemas"]
    operation = document["paths"]["/v1/profiles/{profile_id}"]["patch"]
    for status in ("400", "404", "409", "413"):
        schema = operation["responses"][status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/SenlinError"}


def test_openapi_documents_bodiless_answers_and_body_lookups(client: TestClient) -> None:
    """What Schemathesis' status-code and content-type checks found (test_fuzz_openapi.py)."""
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/v1/clusters/{cluster_id}", "/v1/nodes/{node_id}"):
        responses = paths[path]["delete"]["responses"]
        assert "content" not in responses["202"] and "content" not in responses["204"]
        body = paths[path]["delete"]["requestBody"]["content"]["application/json"]["schema"]
        assert {"type": "null"} in body["anyOf"]  # a JSON null body reads as none
    assert "content" not in paths["/v1/actions/{action_id}"]["patch"]["responses"]["202"]
    # the body names the resource to adopt: 404 when it does not exist
    assert "404" in paths["/v1/nodes/adopt"]["post"]["responses"]
    assert "404" in paths["/v1/nodes/adopt-preview"]["post"]["responses"]


def test_a_405_names_every_method_of_the_path(client: TestClient) -> None:
    answer = client.put("/v1/profiles/some-id", json={})
    assert answer.status_code == 405
    assert answer.headers["Allow"] == "DELETE, GET, HEAD, PATCH"
    assert answer.json()["error"]["type"] == "MethodNotAllowed"


def test_profile_updates_are_strict(client: TestClient) -> None:
    profile = make_profile(client)
    for body, message in (
        ({"profile": {"name": 123}}, "The value '123' is not a valid string."),
        ({"profile": {"bogus": 1}}, "Additional properties are not allowed"),
    ):
        answer = client.patch(f"/v1/profiles/{profile}", json=body)
        assert answer.status_code == 400, answer.text
        assert message in answer.json()["error"]["message"]
    assert client.get(f"/v1/profiles/{profile}").json()["profile"]["name"] == "prof"


def test_a_regional_agent_token_cannot_reach_another_region(token_client: TestClient) -> None:
    """Every way to name region B's node is 404 to a token of region A, and region names
    that look like SQL or patterns match nothing (docs/security.md)."""
    _id, admin = _token(token_client, "p1", "admin")
    profile = token_client.post(
        "/v1/profiles", json={"profile": {"name": "p", "spec": SIM_SPEC}}, headers=admin
    ).json()["profile"]["id"]
    cluster = token_client.post(
        "/v1/clusters", json={"cluster": {"name": "in-b", "profile_id": profile}}, headers=admin
    ).json()["cluster"]["id"]
    node_b = "e" * 36
    with services(token_client).database.write() as session:
        session.add(
            NodeRow(
                id=node_b,
                name="secret-b",
                cluster_id=cluster,
                profile_id=profile,
                init_at=time.time(),
                project="p1",
                data={"placement": {"region_name": "B", "zone": None}},
            )
        )
    secrets = {}
    for region in ("A", "%", "B' OR '1'='1", "_"):
        with services(token_client).database.write() as session:
            _row, secret = tokens.create_token(
                session, "p1", "agent", "", time.time(), regions=[region]
            )
        secrets[region] = {"X-Auth-Token": secret}
    for region, agent in secrets.items():
        for url in (
            f"/v1/nodes/{node_b}",
            "/v1/nodes/secret-b",
            "/v1/nodes/eeeeeeee",
            f"/v1/clusters/{cluster}",
        ):
            answer = token_client.get(url, headers=agent)
            assert answer.status_code == 404, (region, url, answer.text)
        for url in ("/v1/nodes", "/v1/clusters"):
            for params in ({}, {"global_project": "true"}, {"region": "B"}, {"name": "secret-b"}):
                answer = token_client.get(url, params=params, headers=agent)
                assert answer.status_code == 200, (region, url, params, answer.text)
                assert node_b not in answer.text and cluster not in answer.text, answer.text
        answer = token_client.get("/v1/nodes", params={"cluster_id": cluster}, headers=agent)
        assert answer.status_code == 400 and node_b not in answer.text, answer.text
        # writes stay refused whatever the region
        answer = token_client.delete(f"/v1/nodes/{node_b}", headers=agent)
        assert answer.status_code == 403, answer.text
