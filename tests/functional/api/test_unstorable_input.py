"""Regressions of the 5xx the fuzzing test found: input no store can hold is a 400 naming it.

Each was a 500 before (``herd.api.input_guard``, ``pagination.MAX_LIMIT``,
``schemas.base.STORED_INT_MAX``): a ``limit`` past 64 bits (both stores), a NUL character in
a path, query or body value (PostgreSQL), an integer past 32 bits in a body (PostgreSQL's
INTEGER; past 64 bits on SQLite), and NaN in a body (PostgreSQL's JSON).
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from tests.functional.api.helpers import SIM_SPEC, assert_error, make_cluster, make_profile

NUL = "NUL characters (\\u0000) are not allowed"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "/v1/clusters?limit=99999999999999999999",
            "Value must be <= 2147483647 for field 'limit'.",
        ),
        ("/v1/actions?limit=2147483648", "Value must be <= 2147483647 for field 'limit'."),
        ("/v1/clusters/id%00", f"Invalid value for 'cluster_id': {NUL}."),
        ("/v1/profiles/a%00b", f"Invalid value for 'profile_id': {NUL}."),
        ("/v1/events/%00", f"Invalid value for 'event_id': {NUL}."),
        ("/v1/clusters?name=%00", f"Invalid value for 'name': {NUL}."),
        ("/v1/clusters?marker=x%00", f"Invalid value for 'marker': {NUL}."),
        ("/v1/clusters?region=%00", f"Invalid value for 'region': {NUL}."),
    ],
)
def test_path_and_query(client: TestClient, path: str, message: str) -> None:
    assert_error(client.get(path), 400, message)


def test_nul_in_a_body(client: TestClient) -> None:
    r = client.post("/v1/profiles", json={"profile": {"name": "a\x00b", "spec": SIM_SPEC}})
    assert_error(r, 400, f"Invalid value for 'profile.name': {NUL}.")
    spec = {**SIM_SPEC, "properties": {"zone\x00": "a"}}
    r = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    assert_error(r, 400, f"Invalid value for 'profile.spec.properties.zone\x00': {NUL}.")
    r = client.post("/v1/clusters", json={"cluster": {"name": "c", "profile_id": "\x00"}})
    assert_error(r, 400, f"Invalid value for 'cluster.profile_id': {NUL}.")
    assert client.get("/v1/profiles").json()["profiles"] == []


def test_integers_past_the_stores(client: TestClient) -> None:
    profile = make_profile(client)
    for timeout in (2**31, 2**63, "9" * 30, 1e308):
        r = client.post(
            "/v1/clusters",
            json={"cluster": {"name": "c", "profile_id": profile, "timeout": timeout}},
        )
        # Durations stop at a week (domain.values.MAX_DURATION), well inside the stores.
        assert_error(
            r, 400, "The value for the timeout field must be less than or equal to 604800."
        )
    cluster = make_cluster(client, profile, timeout=604800)
    r = client.patch(f"/v1/clusters/{cluster}", json={"cluster": {"timeout": 2**31}})
    assert_error(r, 400, "The value for the timeout field must be less than or equal to 604800.")


def test_nan_in_a_body(client: TestClient) -> None:
    """NaN and Infinity are not JSON, but Python's decoder takes them; PostgreSQL does not."""
    for word in ("NaN", "Infinity", "-Infinity"):
        body = '{"profile": {"name": "p", "spec": %s, "metadata": {"x": %s}}}'
        r = client.post(
            "/v1/profiles",
            content=body % (str(SIM_SPEC).replace("'", '"'), word),
            headers={"Content-Type": "application/json"},
        )
        assert_error(
            r,
            400,
            "Invalid value for 'profile.metadata.x': NaN and Infinity are not numbers JSON can "
            "carry.",
        )
