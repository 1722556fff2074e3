"""What a real engine records while it works: metrics, action outputs for the dashboard, logs.

A scale-in with a webhook lifecycle hook (a real local receiver that never answers) waits; a
mark-unhealthy meanwhile gets the 409; the hook is then completed through the API.
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from tests.conftest import ApiClientFactory
from tests.e2e.dashboard.seed import HookReceiver, deletion_spec, sim_spec
from tests.functional.api.helpers import mv

from herd.config import Settings
from herd.observability import logs


def wait(check: Any, timeout: float = 30.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met")


def done(client: TestClient, action_id: str) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        action: dict[str, Any] = client.get(f"/v1/actions/{action_id}").json()["action"]
        return action if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED") else None

    result: dict[str, Any] = wait(ended)
    return result


def samples(client: TestClient, family: str) -> dict[tuple[str, ...], float]:
    text = client.get("/metrics").text
    for metric in text_string_to_metric_families(text):
        if metric.name == family:
            return {
                tuple(v for _, v in sorted(s.labels.items())): s.value
                for s in metric.samples
                if s.name.endswith("_total") or s.name.endswith("_count")
            }
    return {}


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    stream = io.StringIO()
    logs.configure("json", stream=stream)
    try:
        yield stream
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])


def test_hooked_scale_in_is_measured_explained_and_logged(
    api_client: ApiClientFactory, tmp_path: Path, json_logs: io.StringIO
) -> None:
    settings = Settings(data_dir=tmp_path / "data", engine_poll_interval=0.02)
    with HookReceiver() as receiver:
        client = api_client(settings, start_engine=True)
        profile = client.post(
            "/v1/profiles", json={"profile": {"name": "p", "spec": sim_spec()}}
        ).json()["profile"]["id"]
        r = client.post(
            "/v1/clusters",
            json={"cluster": {"name": "c", "profile_id": profile, "desired_capacity": 3}},
        )
        cluster = r.json()["cluster"]["id"]
        assert done(client, r.headers["Location"].rsplit("/", 1)[1])["status"] == "SUCCEEDED"
        hooks = {"type": "webhook", "timeout": 600, "params": {"url": receiver.url}}
        policy = client.post(
            "/v1/policies",
            json={
                "policy": {"name": "d", "spec": deletion_spec(criteria="OLDEST_FIRST", hooks=hooks)}
            },
        ).json()["policy"]["id"]
        r = client.post(
            f"/v1/clusters/{cluster}/actions", json={"policy_attach": {"policy_id": policy}}
        )
        assert done(client, r.json()["action"])["status"] == "SUCCEEDED"

        r = client.post(f"/v1/clusters/{cluster}/actions", json={"scale_in": {"count": 1}})
        parent = r.json()["action"]
        request_id = r.headers["x-request-id"]
        child = wait(
            lambda: client.get(
                "/v1/actions",
                params={"cluster_id": cluster, "status": "WAITING_LIFECYCLE_COMPLETION"},
            ).json()["actions"]
        )[0]
        outputs = wait(
            lambda: (
                client.get(f"/v1/actions/{parent}")
                .json()["action"]["outputs"]
                .get("lifecycle_hooks")
            )
        )
        (sent,) = outputs.values()
        assert sent["delivered"] is True and sent["destination"] == receiver.url
        assert sent["result"] is None and sent["type"] == "webhook"
        assert receiver.messages[0]["lifecycle_action_token"] == child["id"]

        member = client.get("/v1/nodes", params={"cluster_id": cluster}).json()["nodes"][0]
        locked = client.patch(
            f"/v1/clusters/{cluster}/nodes/{member['id']}", json={"mark_unhealthy": True}
        )
        assert locked.status_code == 409

        r = client.post(
            f"/v1/clusters/{cluster}/actions",
            json={"complete_lifecycle": {"lifecycle_action_token": child["id"]}},
            headers=mv("1.9"),
        )
        assert r.status_code == 202, r.text
        action = done(client, parent)
        assert action["status"] == "SUCCEEDED", action
        shrink = action["outputs"]["shrink"]
        assert shrink["victims"] == [child["target"]] and shrink["rules"] == ["OLDEST_FIRST"]
        hook = action["outputs"]["lifecycle_hooks"][child["target"]]
        assert hook["result"] == "CONTINUE" and hook["waited"] >= 0

        assert samples(client, "herd_lifecycle_hook_messages") == {("sent", "webhook"): 1.0}
        assert samples(client, "herd_lifecycle_hook_resolutions") == {("CONTINUE",): 1.0}
        assert samples(client, "herd_lifecycle_hook_wait_seconds") == {("CONTINUE",): 1.0}
        assert samples(client, "herd_victims") == {("OLDEST_FIRST",): 1.0}
        assert samples(client, "herd_api_conflicts") == {("ActionInProgress",): 1.0}
        actions = samples(client, "herd_actions")
        assert actions[("CLUSTER_SCALE_IN", "SUCCEEDED")] == 1.0
        assert actions[("CLUSTER_CREATE", "SUCCEEDED")] == 1.0
        assert samples(client, "herd_action_wait_seconds")[("CLUSTER_SCALE_IN",)] == 1.0
        # three top-level actions (create, attach, scale-in): each locked and finished once
        # (the dispatcher claimed them, in one claim or several)
        steps = samples(client, "herd_engine_coordination_seconds")
        assert steps[("lock",)] == 3.0 and steps[("finish",)] == 3.0
        assert steps[("claim",)] >= 1.0

    records = [json.loads(line) for line in json_logs.getvalue().splitlines()]
    finished = [r for r in records if r["message"].startswith("CLUSTER_SCALE_IN SUCCEEDED")]
    assert [(r["action_id"], r["cluster_id"]) for r in finished] == [(parent, cluster)]
    # the engine's lines while it ran the action name the request that started it (issue 26)
    assert [r["request_id"] for r in finished] == [request_id]
