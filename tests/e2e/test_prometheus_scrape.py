"""A real Prometheus (Debian's ``prometheus``) scrapes a real ``herd serve`` every second.

After a scale-out and a scale-in through the API, Prometheus' own query API must return the
action counters by type and status, the victims by criterion, the request counters by route
template and the engine's liveness. Skips, saying so, when the binary is absent.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
MV = {"OpenStack-API-Version": "clustering 1.14"}


@pytest.fixture
def prometheus_for(tmp_path: Path) -> Iterator[Any]:
    if not Path(PROMETHEUS).exists():
        pytest.skip("the Prometheus scrape test needs Debian's prometheus package (binary absent)")
    started: list[subprocess.Popen[bytes]] = []

    def start(target: str) -> str:
        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: herd\n    metrics_path: /metrics\n"
            f"    static_configs:\n      - targets: ['{target}']\n"
        )
        log = open(tmp_path / "prometheus.log", "wb")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=1h",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append(process)
        return f"http://127.0.0.1:{port}"

    yield start
    for process in started:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    try:
        r = httpx.get(f"{prom}/api/v1/query", params={"query": expr}, timeout=5)
    except httpx.HTTPError:
        return []
    if r.status_code != 200:
        return []
    result: list[dict[str, Any]] = r.json()["data"]["result"]
    return result


def eventually(prom: str, expr: str, timeout: float = 90.0) -> list[dict[str, Any]]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = query(prom, expr)
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"Prometheus returned nothing for {expr} within {timeout}s")


def test_prometheus_scrapes_herd(tmp_path: Path, prometheus_for: Any) -> None:
    server = HerdServer(tmp_path / "data", free_port())
    server.start()
    try:
        prom = prometheus_for(server.url.removeprefix("http://"))
        eventually(prom, 'up{job="herd"} == 1')
        client = httpx.Client(base_url=server.url, headers=MV, timeout=30)
        spec = {"type": "herd.sim", "version": "1.0", "properties": {}}
        profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
        r = client.post(
            "/v1/clusters",
            json={
                "cluster": {
                    "name": "c",
                    "profile_id": profile.json()["profile"]["id"],
                    "desired_capacity": 2,
                }
            },
        )
        cluster = r.json()["cluster"]["id"]
        assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"
        for body in ({"scale_out": {"count": 3}}, {"scale_in": {"count": 2}}):
            r = client.post(f"/v1/clusters/{cluster}/actions", json=body)
            assert r.status_code == 202, r.text
            assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"

        series = eventually(prom, 'herd_actions_total{action="CLUSTER_SCALE_IN"} >= 1')
        labels = {(s["metric"]["action"], s["metric"]["status"]) for s in series}
        assert labels == {("CLUSTER_SCALE_IN", "SUCCEEDED")}
        out = eventually(prom, 'herd_actions_total{action="CLUSTER_SCALE_OUT",status="SUCCEEDED"}')
        assert float(out[0]["value"][1]) == 1.0
        victims = eventually(prom, "sum(herd_victims_total) >= 2")
        assert float(victims[0]["value"][1]) == 2.0
        assert eventually(prom, 'herd_victims_total{criterion="RANDOM"}')  # no deletion policy
        assert eventually(
            prom, 'herd_action_duration_seconds_count{action="CLUSTER_SCALE_IN"} >= 1'
        )
        routes = eventually(
            prom,
            'herd_api_requests_total{route="/v1/clusters/{cluster_id}/actions",'
            'method="POST",status="202"}',
        )
        assert float(routes[0]["value"][1]) == 2.0
        # Raw paths (ids) never become label values.
        every_route = {s["metric"]["route"] for s in query(prom, "herd_api_requests_total")}
        assert cluster not in " ".join(every_route)
        assert eventually(prom, "herd_engine_running == 1")
        assert eventually(prom, 'herd_engines{state="alive"} == 1')
        assert eventually(prom, "time() - herd_engine_heartbeat_timestamp_seconds < 60")
        client.close()
    finally:
        server.stop()
