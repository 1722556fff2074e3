"""The real alarm loop: Prometheus scrapes the members, Alertmanager posts to herd's receivers.

A real ``herd serve`` runs a cluster of ``herd.process`` nodes (the test HTTP server,
whose ``/metrics`` has a load gauge the test sets). A real Prometheus (1 s scrapes,
file_sd targets the test writes from the node ports herd reports) evaluates two
rules, and a real Alertmanager posts their notifications to two receivers' URLs:
high load scales the cluster out, low load on a grown cluster scales it back in.
Everything listens on 127.0.0.1 on free ports, and every process is stopped at the
end. The times are printed, not asserted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from tests.conftest import free_port
from tests.e2e.sdk import process_profile_spec
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action

PROMETHEUS = shutil.which("prometheus")
ALERTMANAGER = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(
        PROMETHEUS is None or ALERTMANAGER is None,
        reason="needs the prometheus and alertmanager binaries (Debian packages prometheus "
        "and prometheus-alertmanager; .ci/run installs them)",
    ),
]

DEADLINE = 180.0  # generous: the machine is shared; the loop takes seconds when idle
JOB = "herd-members"
RULES = {
    "groups": [
        {
            "name": "herd",
            "interval": "1s",
            "rules": [
                {
                    "alert": "HerdLoadHigh",
                    "expr": f'max(herd_testserver_load{{job="{JOB}"}}) > 50',
                    "for": "2s",
                },
                {
                    # only while the cluster is above its usual 2 members
                    "alert": "HerdLoadLow",
                    "expr": f'max(herd_testserver_load{{job="{JOB}"}}) < 10 '
                    f'and count(herd_testserver_load{{job="{JOB}"}}) > 2',
                    "for": "2s",
                },
            ],
        }
    ]
}


class Daemon:
    """A real Prometheus or Alertmanager process, with its log."""

    def __init__(self, name: str, args: list[str], log: Path) -> None:
        self.name = name
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_ready(self, url: str) -> None:
        wait_for(
            lambda: self._ready(url), f"{self.name} ready at {url}", timeout=60, check=self.alive
        )

    def _ready(self, url: str) -> bool:
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(url, timeout=2).status_code == 200
        return False

    def alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.name} exited: {self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)


def wait_for(
    condition: Callable[[], bool],
    what: str,
    *,
    timeout: float = DEADLINE,
    check: Callable[[], None] | None = None,
    every: Callable[[], None] | None = None,
) -> float:
    """Poll until ``condition()``; return the seconds it took."""
    started = time.monotonic()
    while True:
        if every is not None:
            every()
        if condition():
            return time.monotonic() - started
        if check is not None:
            check()
        assert time.monotonic() - started < timeout, f"not after {timeout:.0f}s: {what}"
        time.sleep(0.25)


class Herd:
    """The bits of herd's API the loop needs, over plain HTTP."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=10)

    def post(self, path: str, body: Any) -> dict[str, Any]:
        r = self.http.post(path, json=body)
        assert r.status_code in (201, 202), r.text
        result: dict[str, Any] = r.json()
        return result

    def wait_action(self, action_id: str) -> dict[str, Any]:
        return wait_for_action(self.http, action_id, timeout=120)

    def members(self, cluster: str) -> list[dict[str, Any]]:
        nodes: list[dict[str, Any]] = self.http.get(
            "/v1/nodes", params={"cluster_id": cluster}
        ).json()["nodes"]
        return nodes

    def active_ports(self, cluster: str) -> list[int]:
        return sorted(
            int(n["data"]["port"])
            for n in self.members(cluster)
            if n["status"] == "ACTIVE" and "port" in (n.get("data") or {})
        )

    def receiver_actions(self) -> list[dict[str, Any]]:
        actions: list[dict[str, Any]] = self.http.get("/v1/actions").json()["actions"]
        return [a for a in actions if a["name"].startswith("webhook_")]


class Targets:
    """The file_sd file Prometheus watches: the members' test servers, as herd reports them."""

    def __init__(self, path: Path, herd: Herd, cluster: str) -> None:
        self.path = path
        self.herd = herd
        self.cluster = cluster
        self.written: list[int] | None = None

    def sync(self) -> None:
        ports = self.herd.active_ports(self.cluster)
        if ports == self.written:
            return
        groups = [{"targets": [f"127.0.0.1:{p}" for p in ports], "labels": {"cluster": "web"}}]
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(groups))
        temporary.replace(self.path)  # atomic: Prometheus never reads half a file
        self.written = ports


def set_load(ports: list[int], load: float) -> None:
    for port in ports:
        r = httpx.put(f"http://127.0.0.1:{port}/control/load", json={"load": load}, timeout=5)
        assert r.status_code == 200, r.text


def prometheus_value(url: str, query: str) -> float | None:
    with contextlib.suppress(httpx.HTTPError, KeyError, IndexError, ValueError):
        result = httpx.get(f"{url}/api/v1/query", params={"query": query}, timeout=5).json()
        return float(result["data"]["result"][0]["value"][1])
    return None


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    started: list[Daemon] = []
    try:
        yield started
    finally:
        for daemon in reversed(started):
            daemon.stop()


def test_prometheus_alertmanager_and_herd_scale_out_then_in(
    herd_server: HerdServer, tmp_path: Path, daemons: list[Daemon]
) -> None:
    herd = Herd(herd_server.url)
    profile = herd.post(
        "/v1/profiles", {"profile": {"name": "web", "spec": process_profile_spec()}}
    )
    created = herd.http.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": "web",
                "profile_id": profile["profile"]["id"],
                "desired_capacity": 2,
                "min_size": 2,
                "max_size": 4,
            }
        },
    )
    assert created.status_code == 202, created.text
    cluster = created.json()["cluster"]["id"]
    create_action = created.headers["Location"].rsplit("/", 1)[1]
    assert herd.wait_action(create_action)["status"] == "SUCCEEDED"

    def receiver(name: str, action: str) -> dict[str, Any]:
        body = {"name": name, "type": "webhook", "cluster_id": cluster, "action": action}
        result: dict[str, Any] = herd.post(
            "/v1/receivers", {"receiver": {**body, "params": {"count": 1}}}
        )["receiver"]
        return result

    grow = receiver("grow", "CLUSTER_SCALE_OUT")
    shrink = receiver("shrink", "CLUSTER_SCALE_IN")

    am_port, prom_port = free_port(), free_port()
    am_url, prom_url = f"http://127.0.0.1:{am_port}", f"http://127.0.0.1:{prom_port}"
    (tmp_path / "alertmanager.yml").write_text(
        yaml.safe_dump(
            {
                "route": {
                    "receiver": "grow",
                    "group_by": ["alertname"],
                    "group_wait": "1s",
                    "group_interval": "2s",
                    "repeat_interval": "1h",
                    "routes": [{"matchers": ['alertname="HerdLoadLow"'], "receiver": "shrink"}],
                },
                "receivers": [
                    {
                        "name": "grow",
                        "webhook_configs": [{"url": grow["channel"]["alertmanager_url"]}],
                    },
                    {
                        "name": "shrink",
                        "webhook_configs": [{"url": shrink["channel"]["alertmanager_url"]}],
                    },
                ],
            }
        )
    )
    targets = Targets(tmp_path / "targets.json", herd, cluster)
    targets.sync()
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(RULES))
    (tmp_path / "prometheus.yml").write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "alerting": {
                    "alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{am_port}"]}]}]
                },
                "rule_files": [str(tmp_path / "rules.yml")],
                "scrape_configs": [
                    {
                        "job_name": JOB,
                        "file_sd_configs": [
                            {"files": [str(targets.path)], "refresh_interval": "1s"}
                        ],
                    }
                ],
            }
        )
    )
    assert ALERTMANAGER is not None and PROMETHEUS is not None
    alertmanager = Daemon(
        "alertmanager",
        [
            ALERTMANAGER,
            f"--config.file={tmp_path / 'alertmanager.yml'}",
            f"--storage.path={tmp_path / 'am-data'}",
            f"--web.listen-address=127.0.0.1:{am_port}",
            "--cluster.listen-address=",
        ],
        tmp_path / "alertmanager.log",
    )
    daemons.append(alertmanager)
    alertmanager.wait_ready(f"{am_url}/-/ready")
    prometheus = Daemon(
        "prometheus",
        [
            PROMETHEUS,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'prom-data'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ],
        tmp_path / "prometheus.log",
    )
    daemons.append(prometheus)
    prometheus.wait_ready(f"{prom_url}/-/ready")

    def everything_alive() -> None:
        alertmanager.alive()
        prometheus.alive()

    up = f'count(up{{job="{JOB}"}} == 1)'
    scraped = wait_for(
        lambda: prometheus_value(prom_url, up) == 2.0,
        "Prometheus scrapes both members",
        check=everything_alive,
    )
    print(f"\nPrometheus scraped both members after {scraped:.1f}s")

    # High load: HerdLoadHigh fires, Alertmanager posts to 'grow', herd scales out.
    set_load(herd.active_ports(cluster), 90)
    out = wait_for(
        lambda: len(herd.active_ports(cluster)) == 3,
        "the cluster scales out to 3 members",
        check=everything_alive,
        every=targets.sync,
    )
    print(f"load raised -> 3 members in {out:.1f}s (scrape, rule for: 2s, group_wait 1s)")
    (scale_out,) = herd.receiver_actions()
    assert scale_out["action"] == "CLUSTER_SCALE_OUT"
    assert scale_out["name"] == f"webhook_{grow['id'][:8]}"
    assert herd.wait_action(scale_out["id"])["status"] == "SUCCEEDED"

    # The new member is scraped; the alert goes on firing but is not acted on twice.
    wait_for(
        lambda: prometheus_value(prom_url, up) == 3.0,
        "Prometheus scrapes the new member",
        check=everything_alive,
        every=targets.sync,
    )

    # Low load: HerdLoadHigh resolves (no action), HerdLoadLow fires, herd scales in.
    set_load(herd.active_ports(cluster), 0)
    back = wait_for(
        lambda: len(herd.members(cluster)) == 2,
        "the cluster scales back in to 2 members",
        check=everything_alive,
        every=targets.sync,
    )
    print(f"load lowered -> 2 members in {back:.1f}s")
    actions = herd.receiver_actions()
    assert [a["action"] for a in actions] == ["CLUSTER_SCALE_OUT", "CLUSTER_SCALE_IN"]
    scale_in = actions[1]
    assert scale_in["name"] == f"webhook_{shrink['id'][:8]}"
    assert herd.wait_action(scale_in["id"])["status"] == "SUCCEEDED"
    cluster_view = herd.http.get(f"/v1/clusters/{cluster}").json()["cluster"]
    assert (cluster_view["status"], cluster_view["desired_capacity"]) == ("ACTIVE", 2)

    # The events tell the story: each trigger came from an Alertmanager notification.
    events = herd.http.get("/v1/events", params={"action": "RECEIVER_TRIGGER"}).json()["events"]
    reasons = [e["status_reason"] for e in events]
    assert len(reasons) == 2, reasons
    assert all(reason.startswith("Alertmanager notification (") for reason in reasons)
    assert "CLUSTER_SCALE_OUT" in reasons[0] and "CLUSTER_SCALE_IN" in reasons[1]
