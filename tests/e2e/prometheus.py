"""A real Prometheus (Debian's ``prometheus``) on a free port, scraping one target every second.

The tests that read herd's metrics back through Prometheus' HTTP API start it with
:func:`prometheus_scraping`; without the binary they skip, saying so.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import free_port

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
JOB = "herd"


def require_prometheus() -> None:
    if not Path(PROMETHEUS).exists():
        pytest.skip("the Prometheus tests need Debian's prometheus package (binary absent)")


@contextmanager
def prometheus_scraping(target: str, workdir: Path) -> Iterator[str]:
    """Prometheus scraping ``target`` (``host:port``) as job ``herd``; yields its base URL."""
    require_prometheus()
    port = free_port()
    config = workdir / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"scrape_configs:\n  - job_name: {JOB}\n    metrics_path: /metrics\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    with open(workdir / "prometheus.log", "wb") as log:
        process = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=1h",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def api(prom: str, path: str, **params: Any) -> dict[str, Any]:
    """One call of Prometheus' HTTP API: its whole answer (``status``, ``data`` or ``error``)."""
    r = httpx.get(f"{prom}{path}", params=params, timeout=10)
    body: dict[str, Any] = r.json()
    return body


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    """The instant vector of ``expr`` now; empty while Prometheus is not up or has nothing."""
    try:
        body = api(prom, "/api/v1/query", query=expr)
    except (httpx.HTTPError, ValueError):
        return []
    if body.get("status") != "success":
        return []
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def eventually(prom: str, expr: str, timeout: float = 90.0) -> list[dict[str, Any]]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = query(prom, expr)
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"Prometheus returned nothing for {expr} within {timeout}s")
