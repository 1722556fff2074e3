"""The mark served by a plain route (``herd.api.plain_routes``) answers as FastAPI's route did.

Two apps share one database: the app as built (the plain route first) and the same app with
its plain routes taken out, so that FastAPI's documented route serves the mark. Every
request below, good or bad, must get the same status, body and headers from both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.conformance.conftest import Api
from tests.functional.member_health.conftest import engine_settings

from herd.api.plain_routes import PlainRoute

TEMPLATE = "/v1/clusters/{cluster_id}/nodes/{node_id}"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def apps(
    api_client: ApiClientFactory, tmp_path: Path, db_url: str
) -> tuple[Api, TestClient, str, str]:
    settings = engine_settings(tmp_path, db_url)
    plain = Api(api_client(settings, start_engine=True))
    fastapi_only = api_client(settings)
    routes = fastapi_only.app.router.routes  # type: ignore[attr-defined]
    routes[:] = [route for route in routes if not isinstance(route, PlainRoute)]
    cluster = plain.cluster(2, one_by_one=False)
    return plain, fastapi_only, cluster, plain.member_ids(cluster)[0]


def test_the_plain_route_is_tried_first(apps: tuple[Api, TestClient, str, str]) -> None:
    plain, fastapi_only, _, _ = apps
    first = plain.client.app.router.routes[0]  # type: ignore[attr-defined]
    assert isinstance(first, PlainRoute) and first.path == TEMPLATE
    assert not any(
        isinstance(r, PlainRoute)
        for r in fastapi_only.app.router.routes  # type: ignore[attr-defined]
    )


def _answer(client: TestClient, method: str, url: str, **kwargs: Any) -> tuple[Any, ...]:
    response = client.request(method, url, **kwargs)
    try:
        body: object = response.json()
    except ValueError:
        body = response.text
    if isinstance(body, dict) and isinstance(body.get("node"), dict):
        # A mark's answer: the member's timestamps and mark count move with each mark.
        moving = ("updated_at", "health_marked_at", "health_generation")
        body["node"] = {k: v for k, v in body["node"].items() if k not in moving}
    headers = {
        name: response.headers.get(name)
        for name in ("content-type", "openstack-api-version", "allow", "www-authenticate")
    }
    has_id = "x-openstack-request-id" in response.headers
    return response.status_code, body, headers, has_id


BAD = [
    pytest.param("PATCH", {"content": b'{"mark_unhealthy": tru', "headers": JSON}, id="bad-json"),
    pytest.param("PATCH", {"content": b"", "headers": JSON}, id="no-body"),
    pytest.param("PATCH", {"content": b"null", "headers": JSON}, id="null"),
    pytest.param("PATCH", {"content": b'[{"mark_unhealthy": true}]', "headers": JSON}, id="list"),
    pytest.param("PATCH", {"content": b'{"mark_unhealthy": "no!"}'}, id="no-content-type"),
    pytest.param(
        "PATCH",
        {"content": b'{"mark_unhealthy": true}', "headers": {"Content-Type": "text/plain"}},
        id="text-plain",
    ),
    pytest.param(
        "PATCH",
        {
            "content": b'{"mark_unhealthy": "yes"}',
            "headers": {"Content-Type": "application/merge-patch+json; charset=utf-8"},
        },
        id="json-suffix",
    ),
    pytest.param(
        "PATCH", {"content": b'{"mark_unhealthy": "\xff"}', "headers": JSON}, id="not-utf8"
    ),
    pytest.param("PATCH", {"json": {"mark_unhealthy": True, "x": 1}}, id="extra-key"),
    pytest.param("PATCH", {"json": {}}, id="missing-key"),
    pytest.param("PATCH", {"json": {"mark_unhealthy": 1}}, id="not-a-bool"),
    pytest.param(
        "PATCH", {"json": {"mark_unhealthy": True, "resource_status_reason": 5}}, id="reason"
    ),
    pytest.param(
        "PATCH",
        {"json": {"mark_unhealthy": True, "resource_status_reason": "a\x00b"}},
        id="nul-in-body",
    ),
    pytest.param(
        "PATCH",
        {"json": {"mark_unhealthy": True}, "headers": {"OpenStack-API-Version": "clustering 9.0"}},
        id="microversion",
    ),
    pytest.param(
        "PATCH",
        {"content": b"x" * 2_000_000, "headers": JSON},
        id="too-large",
    ),
    pytest.param("GET", {}, id="get"),
    pytest.param("PUT", {"json": {"mark_unhealthy": True}}, id="put"),
    pytest.param("DELETE", {}, id="delete"),
]


@pytest.mark.parametrize(("method", "kwargs"), BAD)
def test_refusals_match_fastapis(
    apps: tuple[Api, TestClient, str, str], method: str, kwargs: dict[str, Any]
) -> None:
    plain, fastapi_only, cluster, node = apps
    url = f"/v1/clusters/{cluster}/nodes/{node}"
    served = _answer(plain.client, method, url, **kwargs)
    assert served == _answer(fastapi_only, method, url, **kwargs)
    assert served[0] >= 400, served


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(("nope", None), id="unknown-cluster"),
        pytest.param((None, "nope"), id="unknown-node"),
        pytest.param(("a%00b", None), id="nul-in-cluster-id"),
        pytest.param((None, "a%00b"), id="nul-in-node-id"),
    ],
)
def test_path_refusals_match_fastapis(
    apps: tuple[Api, TestClient, str, str], where: tuple[str | None, str | None]
) -> None:
    plain, fastapi_only, cluster, node = apps
    url = f"/v1/clusters/{where[0] or cluster}/nodes/{where[1] or node}"
    body = {"json": {"mark_unhealthy": True}}
    served = _answer(plain.client, "PATCH", url, **body)
    assert served == _answer(fastapi_only, "PATCH", url, **body)
    assert served[0] in (400, 404), served


def test_marks_match_fastapis(apps: tuple[Api, TestClient, str, str]) -> None:
    plain, fastapi_only, cluster, _ = apps
    # Two members in the same state, each marked the same way by one of the apps.
    first, second = (f"/v1/clusters/{cluster}/nodes/{m}" for m in plain.member_ids(cluster))
    for body in (
        {"mark_unhealthy": True, "resource_status_reason": "first"},
        {"mark_unhealthy": True, "resource_status_reason": "first"},
        {"mark_unhealthy": False},
        {"mark_unhealthy": False},
        {"mark_unhealthy": "TRUE"},
    ):
        served = _answer(plain.client, "PATCH", first, json=body)
        assert served[0] == 200, served
        assert _same_member(served) == _same_member(
            _answer(fastapi_only, "PATCH", second, json=body)
        )
    # The access log and the metrics name the route's template, as for FastAPI's routes.
    metrics = plain.client.get("/metrics").text
    assert f'method="PATCH",route="{TEMPLATE}",status="200"' in metrics.replace(", ", ",")


def _same_member(answer: tuple[Any, ...]) -> tuple[Any, ...]:
    """The answer without what tells two members of one cluster apart."""
    status, body, headers, has_id = answer
    own = ("id", "name", "index", "physical_id", "init_at", "created_at")
    node = {k: v for k, v in body["node"].items() if k not in own}
    return status, {**body, "node": node}, headers, has_id
