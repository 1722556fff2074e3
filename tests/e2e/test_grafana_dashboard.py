"""Every query of the Grafana dashboard (docs/grafana/herd.json) against a real Prometheus.

A real ``herd serve`` does what makes each metric move (actions that succeed and fail, a
scale-in whose lifecycle hook times out at a real webhook receiver, a mark-unhealthy, a
recovery, a lock found busy, a 409, a deletion that fails and stays open), a real Prometheus
(Debian's ``prometheus``) scrapes it every second, and then each panel's PromQL, with
Grafana's variables given values, goes through Prometheus' query API: it must parse and return
series. The panel that only shows what does not happen here (5xx answers) must still name
metrics herd exports, as Prometheus sees them. The dashboard must also cover every herd
metric, so a new one is not forgotten.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import free_port
from tests.e2e.prometheus import JOB, api, eventually, prometheus_scraping, query
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action
from tests.webhook_receiver import Receiver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "herd.json"
MV = {"OpenStack-API-Version": "clustering 1.14"}
# Grafana's variables as a dashboard over this Prometheus would fill them in.
VARIABLES = {"$__rate_interval": "5m", "$__range": "1h", "$job": JOB}
# Panels that show only what this run does not make happen, and why.
NOTHING_HAPPENED = {
    "Server errors per second by route": "herd answered no 5xx",
}


def panels() -> list[dict[str, Any]]:
    board = json.loads(DASHBOARD.read_text())
    return [p for p in board["panels"] if p["type"] != "row"]


def filled(expr: str) -> str:
    for name, value in VARIABLES.items():
        expr = expr.replace(name, value)
    assert "$" not in expr, f"a Grafana variable this test does not fill: {expr}"
    return expr


def metric_names(expr: str) -> set[str]:
    """herd's metric names an expression reads (histogram series named by their family)."""
    names = set(re.findall(r"\bherd_[a-z_]+", expr))
    return {re.sub(r"_(bucket|count|sum)$", "", name) for name in names}


def test_the_dashboard_is_grafana_json_with_a_query_per_panel() -> None:
    board = json.loads(DASHBOARD.read_text())
    assert board["uid"] and board["title"] == "herd" and board["schemaVersion"] >= 36
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in panels():
        assert panel["targets"] and all(t["expr"] for t in panel["targets"]), panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}"
    assert set(NOTHING_HAPPENED) <= {p["title"] for p in panels()}


def _exercise(client: httpx.Client, prom: str, hook_url: str) -> None:
    """Make herd's counters move: every panel not in NOTHING_HAPPENED gets a series."""
    spec = {"type": "herd.sim", "version": "1.0", "properties": {}}
    profile = client.post("/v1/profiles", json={"profile": {"name": "p", "spec": spec}})
    profile_id = profile.json()["profile"]["id"]
    r = client.post(
        "/v1/clusters",
        json={"cluster": {"name": "c", "profile_id": profile_id, "desired_capacity": 3}},
    )
    cluster = r.json()["cluster"]["id"]
    assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"
    hooks = {"type": "webhook", "params": {"url": hook_url}, "timeout": 1}
    policy = client.post(
        "/v1/policies",
        json={
            "policy": {
                "name": "dp",
                "spec": {
                    "type": "senlin.policy.deletion",
                    "version": "1.1",
                    "properties": {"criteria": "OLDEST_FIRST", "hooks": hooks},
                },
            }
        },
    ).json()["policy"]["id"]
    act(client, cluster, {"policy_attach": {"policy_id": policy}})
    # Twice each, Prometheus scraping between: a rate (and a quantile of it) needs the
    # counters to move between two samples of the same series.
    for _ in range(2):
        act(client, cluster, {"scale_out": {"count": 2}})
        act(client, cluster, {"scale_in": {"count": 1}})
        eventually(prom, 'herd_actions_total{action="CLUSTER_SCALE_IN"}')
    node = client.get("/v1/nodes", params={"cluster_id": cluster, "limit": 1}).json()["nodes"][0]
    r = client.patch(f"/v1/clusters/{cluster}/nodes/{node['id']}", json={"mark_unhealthy": True})
    assert r.status_code == 200, r.text
    r = client.post(f"/v1/nodes/{node['id']}/actions", json={"recover": {}})
    assert r.status_code == 202, r.text
    assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"
    busy_lock(client, cluster, node["id"])
    # a 409: the profile is in use
    assert client.delete(f"/v1/profiles/{profile_id}").status_code == 409
    # a FAILED action: every creation of this profile fails
    failing = {**spec, "properties": {"failure_rate": 1}}
    bad = client.post("/v1/profiles", json={"profile": {"name": "bad", "spec": failing}})
    r = client.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": "failing",
                "profile_id": bad.json()["profile"]["id"],
                "desired_capacity": 1,
            }
        },
    )
    assert wait_for_action(client, r.headers["Location"])["status"] == "FAILED"
    # an open deletion: a cluster whose member cannot be deleted keeps its tombstone (ERROR)
    undeletable = {**spec, "properties": {"delete_failure_rate": 1}}
    stuck = client.post("/v1/profiles", json={"profile": {"name": "stuck", "spec": undeletable}})
    r = client.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": "stuck",
                "profile_id": stuck.json()["profile"]["id"],
                "desired_capacity": 1,
            }
        },
    )
    assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"
    r = client.delete(f"/v1/clusters/{r.json()['cluster']['id']}")
    assert r.status_code == 202, r.text
    assert wait_for_action(client, r.headers["Location"])["status"] == "FAILED"


def busy_lock(client: httpx.Client, cluster: str, node_id: str) -> None:
    """A node check asked while a scale-out holds the cluster's lock: one of the two finds it
    held (``herd_lock_busy_total``). Asked again if the two did not overlap."""
    for _ in range(3):
        r = client.post(f"/v1/clusters/{cluster}/actions", json={"scale_out": {"count": 100}})
        assert r.status_code == 202, r.text
        check = client.post(f"/v1/nodes/{node_id}/actions", json={"check": {}})
        assert check.status_code == 202, check.text
        assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED"
        # the check may give up waiting for the lock (FAILED): only the count matters here
        wait_for_action(client, check.headers["Location"])
        if "herd_lock_busy_total{" in client.get("/metrics").text:
            return
    raise AssertionError("three node checks during scale-outs never found the lock held")


def act(client: httpx.Client, cluster: str, body: dict[str, Any]) -> None:
    r = client.post(f"/v1/clusters/{cluster}/actions", json=body)
    assert r.status_code == 202, r.text
    assert wait_for_action(client, r.headers["Location"])["status"] == "SUCCEEDED", body


def test_every_panel_query_returns_data_from_a_real_scrape(tmp_path: Path) -> None:
    server = HerdServer(tmp_path / "data", free_port())
    server.start()
    receiver = Receiver()
    try:
        with prometheus_scraping(server.url.removeprefix("http://"), tmp_path) as prom:
            eventually(prom, f'up{{job="{JOB}"}} == 1')
            with httpx.Client(base_url=server.url, headers=MV, timeout=60) as client:
                _exercise(client, prom, receiver.url)
            exported = exported_families(server.url)
            # the last counter moved: once Prometheus has it, every earlier one is in too
            eventually(prom, 'herd_actions_total{status="FAILED"}')
            eventually(prom, "herd_lifecycle_hook_resolutions_total")
            check_panels(prom, exported)
            check_the_job_variable(prom)
    finally:
        receiver.server.shutdown()
        server.stop()


def exported_families(url: str) -> dict[str, str]:
    """herd's metric families and their types, from its own exposition."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return dict(re.findall(r"^# TYPE (herd_[a-z_]+) (\w+)$", text, re.M))


def check_panels(prom: str, exported: dict[str, str]) -> None:
    covered: set[str] = set()
    for panel in panels():
        for target in panel["targets"]:
            expr = filled(target["expr"])
            names = metric_names(expr)
            assert names, f"{panel['title']}: reads no herd metric"
            unknown = names - set(exported)
            assert not unknown, f"{panel['title']}: herd exports no {sorted(unknown)}"
            covered |= names
            answer = api(prom, "/api/v1/query", query=expr)
            assert answer["status"] == "success", f"{panel['title']}: {answer.get('error')}"
            if panel["title"] in NOTHING_HAPPENED:
                for name in names:
                    known = api(prom, "/api/v1/metadata", metric=name)["data"]
                    assert name in known, f"{panel['title']}: Prometheus never saw {name}"
                continue
            result = answer["data"]["result"] or wait_for_result(prom, expr)
            assert result, f"{panel['title']}: no data for {expr}"
    assert covered == set(exported), f"no panel shows {sorted(set(exported) - covered)}"


def wait_for_result(prom: str, expr: str) -> list[dict[str, Any]]:
    try:
        return eventually(prom, expr, timeout=30)
    except AssertionError:
        return []


def check_the_job_variable(prom: str) -> None:
    """The ``job`` variable's ``label_values(herd_engine_running, job)`` finds the job."""
    board = json.loads(DASHBOARD.read_text())
    (variable,) = [v for v in board["templating"]["list"] if v["name"] == "job"]
    match = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable["definition"])
    assert match, variable["definition"]
    answer = api(prom, f"/api/v1/label/{match[2]}/values", **{"match[]": match[1]})
    assert answer["data"] == [JOB]
    assert query(prom, filled(f'{match[1]}{{job=~"$job"}}'))
