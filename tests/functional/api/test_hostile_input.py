"""Hostile input: nothing a tenant sends can hurt herd or reach inside (issue 24).

Each section is one promise of docs/security.md; the pure parts are tested in
tests/unit/engine/test_outbound.py and tests/unit/api/test_hostile_bodies.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory

from herd.config import Settings


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
