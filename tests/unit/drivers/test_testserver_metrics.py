"""The test server's load gauge: ``/metrics`` in Prometheus' text format, set over HTTP."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from tests.conftest import free_port


@pytest.fixture
def server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "herd.drivers.testserver", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "test server did not start"
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def gauge(url: str) -> str:
    r = httpx.get(f"{url}/metrics", timeout=5)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    lines = [line for line in r.text.splitlines() if not line.startswith("#")]
    assert "# TYPE herd_testserver_load gauge" in r.text
    (line,) = lines
    name, value = line.split()
    assert name == "herd_testserver_load"
    return value


def test_load_starts_at_zero_and_follows_the_control(server: str) -> None:
    assert gauge(server) == "0"
    r = httpx.put(f"{server}/control/load", json={"load": 92.5}, timeout=5)
    assert r.json() == {"load": 92.5}
    assert gauge(server) == "92.5"
    httpx.put(f"{server}/control/load", json=3, timeout=5)
    assert gauge(server) == "3"


def test_bad_control_requests(server: str) -> None:
    assert httpx.put(f"{server}/control/load", json={"lode": 1}, timeout=5).status_code == 400
    assert httpx.put(f"{server}/control/load", content=b"high", timeout=5).status_code == 400
    assert httpx.put(f"{server}/control/other", json={"load": 1}, timeout=5).status_code == 404
    assert gauge(server) == "0"
