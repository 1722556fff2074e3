"""``X-Request-Id``: accepted from the caller or made up, echoed on every answer, in the logs."""

from __future__ import annotations

import io
import json
import logging
import re
from typing import Any

from fastapi.testclient import TestClient

from herd.observability import logs

ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def test_a_request_id_is_made_up_and_echoed_in_both_headers(client: TestClient) -> None:
    first, second = client.get("/v1/clusters"), client.get("/v1/clusters")
    for response in (first, second):
        assert ID.match(response.headers["x-request-id"])
        assert response.headers["x-openstack-request-id"] == response.headers["x-request-id"]
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


def test_the_callers_id_is_kept_from_either_header(client: TestClient) -> None:
    r = client.get("/v1/clusters", headers={"X-Request-Id": "trace-42"})
    assert r.headers["x-request-id"] == "trace-42" == r.headers["x-openstack-request-id"]
    r = client.get("/v1/profiles", headers={"x-openstack-request-id": "req-abc"})
    assert r.headers["x-request-id"] == "req-abc"


def test_errors_and_unknown_paths_echo_it_too(client: TestClient) -> None:
    for response in (
        client.get("/v1/clusters/nope", headers={"X-Request-Id": "e-1"}),
        client.get("/no/such/path", headers={"X-Request-Id": "e-2"}),
        client.get(
            "/v1/clusters",
            headers={"OpenStack-API-Version": "clustering 9.9", "X-Request-Id": "e-3"},
        ),
        client.post("/v1/clusters", content=b"{bad", headers={"X-Request-Id": "e-4"}),
    ):
        assert response.status_code >= 400
        assert response.headers["x-request-id"].startswith("e-")


def test_an_unacceptable_id_is_replaced(client: TestClient) -> None:
    for bad in ("x" * 129, "has space", ""):
        r = client.get("/v1/clusters", headers={"X-Request-Id": bad})
        assert ID.match(r.headers["x-request-id"]), bad


def test_log_lines_of_a_request_carry_its_id(client: TestClient) -> None:
    # A route added for the test: the middleware under test wraps it like any other, and a
    # synchronous endpoint runs on the thread pool, so this also checks the context gets there.
    def probe() -> dict[str, str]:
        logging.getLogger("herd.test").info("inside the request")
        return {}

    app: Any = client.app
    app.add_api_route("/_probe", probe)
    stream = io.StringIO()
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    try:
        logs.configure("json", stream=stream)
        assert client.get("/_probe", headers={"X-Request-Id": "logged-1"}).status_code == 200
        logging.getLogger("herd.test").info("outside any request")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    inside = [r for r in records if r["message"] == "inside the request"]
    assert [r["request_id"] for r in inside] == ["logged-1"]
    (outside,) = [r for r in records if r["message"] == "outside any request"]
    assert "request_id" not in outside
