"""A real Prometheus (Debian's ``prometheus``) scrapes a real ``herd serve`` every second.

After a scale-out and a scale-in through the API, Prometheus' own query API must return the
action counters by type and status, the victims by criterion, the request counters by route
template and the engine's liveness. Skips, saying so, when the binary is absent.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from tests.clusters import create_cluster
from tests.conftest import free_port
from tests.e2e.prometheus import eventually, prometheus_scraping, query
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MV = {"OpenStack-API-Version": "clustering 1.14"}


def test_prometheus_scrapes_herd(tmp_path: Path) -> None:
    server = HerdServer(tmp_path / "data", free_port())
    server.start()
    try:
        with prometheus_scraping(server.url.removeprefix("http://"), tmp_path) as prom:
            eventually(prom, 'up{job="herd"} == 1')
            client = httpx.Client(base_url=server.url, headers=MV, timeout=30)
            cluster = create_cluster(client, 2)
            for body in ({"scale_out": {"count": 3}}, {"scale_in": {"count": 2}}):
                r = client.post(f"/v1/clusters/{cluster}/actions", json=body)
                assert r.status_code == 202, r.text
                assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"

            series = eventually(prom, 'herd_actions_total{action="CLUSTER_SCALE_IN"} >= 1')
            labels = {(s["metric"]["action"], s["metric"]["status"]) for s in series}
            assert labels == {("CLUSTER_SCALE_IN", "SUCCEEDED")}
            out = eventually(
                prom, 'herd_actions_total{action="CLUSTER_SCALE_OUT",status="SUCCEEDED"}'
            )
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
