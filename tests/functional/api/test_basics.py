"""Versions, health, OpenAPI, microversion negotiation and the error body."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import assert_error, mv


def test_versions_root_and_v1(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 300
    (version,) = r.json()["versions"]
    assert version["id"] == "1.0"
    assert version["status"] == "CURRENT"
    assert version["min_version"] == "1.0"
    assert version["max_version"] == "1.14"
    assert version["links"][0]["rel"] == "self"
    r = client.get("/v1")
    assert r.status_code == 200
    assert r.json()["version"]["max_version"] == "1.14"


def test_healthz_and_openapi(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json()["database"] == "ok"
    r = client.get("/openapi.json")
    assert r.status_code == 200
    assert "/v1/clusters/{cluster_id}/actions" in r.json()["paths"]


def test_build_info(client: TestClient) -> None:
    r = client.get("/v1/build-info")
    assert r.status_code == 200
    assert "revision" in r.json()["build_info"]["api"]


@pytest.mark.parametrize(
    ("header", "served"),
    [
        (None, "1.0"),
        ("clustering 1.5", "1.5"),
        ("clustering latest", "1.14"),
        ("compute 2.1, clustering 1.12", "1.12"),
        ("compute 2.1", "1.0"),
    ],
)
def test_microversion_negotiation(client: TestClient, header: str | None, served: str) -> None:
    headers = {"OpenStack-API-Version": header} if header else {}
    r = client.get("/v1/profiles", headers=headers)
    assert r.status_code == 200
    assert r.headers["OpenStack-API-Version"] == f"clustering {served}"
    assert "OpenStack-API-Version" in r.headers["Vary"]


def test_microversion_out_of_range_is_406(client: TestClient) -> None:
    r = client.get("/v1/profiles", headers=mv("1.15"))
    assert_error(
        r,
        406,
        "Version '1.15' is not supported by the API. Minimum is '1.0' and maximum is '1.14'.",
    )
    r = client.get("/v1/profiles", headers=mv("2.0"))
    assert r.status_code == 406
    # Every answer carries the version headers, these too: the default, as without the header.
    assert r.headers["OpenStack-API-Version"] == "clustering 1.0"
    assert r.headers["Vary"] == "OpenStack-API-Version"


def test_microversion_malformed_is_400(client: TestClient) -> None:
    r = client.get("/v1/profiles", headers=mv("1.x"))
    assert_error(
        r,
        400,
        "API Version String '1.x' is of invalid format. It must be of format 'major.minor'.",
    )
    assert r.headers["OpenStack-API-Version"] == "clustering 1.0"
    assert r.headers["Vary"] == "OpenStack-API-Version"


def test_method_below_minimum_version(client: TestClient) -> None:
    r = client.post("/v1/profiles/validate", json={"profile": {"spec": {}}})
    assert_error(r, 400, "API version '1.0' is not supported on this method.")


def test_unknown_path_is_404_in_senlin_body(client: TestClient) -> None:
    r = client.get("/v1/nothing-here")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == 404


def test_invalid_json_is_400(client: TestClient) -> None:
    r = client.post(
        "/v1/profiles", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert_error(r, 400, "The request body is not valid JSON.", "BadRequest")


def test_missing_envelope_is_400(client: TestClient) -> None:
    # Senlin's creates and validates read the body into a request object, which says this...
    r = client.post("/v1/profiles", json={"name": "x"})
    assert_error(r, 400, "Request body missing 'profile' key.")
    for kind, collection in (
        ("cluster", "clusters"),
        ("node", "nodes"),
        ("policy", "policies"),
        ("receiver", "receivers"),
    ):
        r = client.post(f"/v1/{collection}", json={})
        assert_error(r, 400, f"Request body missing '{kind}' key.")
    for kind, collection in (("profile", "profiles"), ("policy", "policies")):
        r = client.post(
            f"/v1/{collection}/validate",
            json={},
            headers={"OpenStack-API-Version": "clustering 1.2"},
        )
        assert_error(r, 400, f"Request body missing '{kind}' key.")
    # ...and its updates looked for the envelope first (senlin-tempest-plugin checks both)
    r = client.patch("/v1/profiles/whatever", json={})
    assert_error(r, 400, "Malformed request data, missing 'profile' key in request body.")
    r = client.post("/v1/profiles", json={"profile": "x"})
    assert_error(r, 400, "The data provided is not a map")
