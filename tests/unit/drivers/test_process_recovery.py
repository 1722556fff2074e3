"""The process driver's recovery operations and exit events, with real processes."""

from __future__ import annotations

import os
import queue
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.unit.drivers.test_process import _alive, _ref, _request, _server_props

from herd.drivers.base import ResourceEvent
from herd.drivers.process import ProcessDriver
from herd.errors import DriverError

PY = sys.executable


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[ProcessDriver]:
    drv = ProcessDriver(tmp_path / "data", spawn_grace=0.1)
    yield drv
    # Before close(), which forgets the child handles.
    for pid in list(drv._children):
        proc = drv._children[pid]
        if proc.poll() is None:
            os.killpg(pid, signal.SIGKILL)
        proc.wait(5)
    drv.close()


def _events(driver: ProcessDriver) -> queue.SimpleQueue[ResourceEvent]:
    found: queue.SimpleQueue[ResourceEvent] = queue.SimpleQueue()
    driver.add_listener(found.put)
    return found


def test_reboot_restarts_the_same_command_on_the_same_port(driver: ProcessDriver) -> None:
    request = _request(_server_props())
    created = driver.create(request)
    old_pid, port = created.data["pid"], created.data["port"]
    rebooted = driver.reboot(_ref(created, request), request)
    assert rebooted.physical_id != created.physical_id
    assert rebooted.data["port"] == port and rebooted.data["pid"] != old_pid
    assert not _alive(old_pid)
    assert driver.check(_ref(rebooted, request)).healthy
    assert httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False).status_code == 200
    driver.delete(_ref(rebooted, request))


def test_reboot_of_a_dead_process_just_starts_it(driver: ProcessDriver) -> None:
    request = _request(_server_props())
    created = driver.create(request)
    os.killpg(created.data["pid"], signal.SIGKILL)
    rebooted = driver.reboot(_ref(created, request), request)
    assert driver.check(_ref(rebooted, request)).healthy
    driver.delete(_ref(rebooted, request))


def test_rebuild_is_not_supported(driver: ProcessDriver) -> None:
    assert driver.supports_reboot and not driver.supports_rebuild
    request = _request(_server_props())
    created = driver.create(request)
    with pytest.raises(DriverError, match="cannot REBUILD"):
        driver.rebuild(_ref(created, request), request)
    assert driver.check(_ref(created, request)).healthy  # left as it was
    driver.delete(_ref(created, request))


def test_kill_9_is_reported_at_once(driver: ProcessDriver) -> None:
    found = _events(driver)
    request = _request({"command": PY, "args": ["-c", "import time; time.sleep(60)"]})
    created = driver.create(request)
    assert driver.watch(_ref(created, request))
    pid = created.data["pid"]
    killed = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    event = found.get(timeout=10)
    print(f"exit noticed {1000 * (time.monotonic() - killed):.1f} ms after kill -9")
    assert event == ResourceEvent("n1", created.physical_id, f"process {pid} was killed by SIGKILL")
    assert not _alive(pid)  # the driver reaped its child


def test_watching_a_process_already_gone_reports_it(driver: ProcessDriver) -> None:
    found = _events(driver)
    request = _request({"command": PY, "args": ["-c", "import time; time.sleep(60)"]})
    created = driver.create(request)
    os.kill(created.data["pid"], signal.SIGKILL)
    driver._reap(created.data["pid"])
    driver.watch(_ref(created, request))
    event = found.get(timeout=10)
    assert event.node_id == "n1" and event.physical_id == created.physical_id


def test_a_process_not_started_by_this_driver_is_watched_too(
    driver: ProcessDriver, tmp_path: Path
) -> None:
    """Re-attached after a restart: another driver instance (the old engine) spawned it."""
    other = ProcessDriver(tmp_path / "data", spawn_grace=0.1)
    request = _request({"command": PY, "args": ["-c", "import time; time.sleep(60)"]})
    created = other.create(request)
    found = _events(driver)
    driver.watch(_ref(created, request))
    os.kill(created.data["pid"], signal.SIGKILL)
    event = found.get(timeout=10)
    assert event.physical_id == created.physical_id
    other._children[created.data["pid"]].wait(5)


def test_delete_and_unwatch_are_not_failures(driver: ProcessDriver) -> None:
    found = _events(driver)
    request = _request({"command": PY, "args": ["-c", "import time; time.sleep(60)"]})
    first = driver.create(request)
    driver.watch(_ref(first, request))
    driver.delete(_ref(first, request))
    second_request = _request(
        {"command": PY, "args": ["-c", "import time; time.sleep(60)"]}, node_id="n2"
    )
    second = driver.create(second_request)
    driver.watch(_ref(second, second_request))
    driver.unwatch("n2")
    os.kill(second.data["pid"], signal.SIGKILL)
    third_request = _request(
        {"command": PY, "args": ["-c", "import time; time.sleep(60)"]}, node_id="n3"
    )
    third = driver.create(third_request)
    driver.watch(_ref(third, third_request))
    os.kill(third.data["pid"], signal.SIGKILL)
    # Events arrive in order: the only one is the third node's, none for the others.
    assert found.get(timeout=10).node_id == "n3"
    with pytest.raises(queue.Empty):
        found.get(timeout=0.3)


def test_testserver_health_switch(driver: ProcessDriver) -> None:
    request = _request(_server_props())
    created = driver.create(request)
    base = f"http://127.0.0.1:{created.data['port']}"
    with httpx.Client(base_url=base, trust_env=False) as client:
        assert client.post("/control/health", json={"status": 500}).status_code == 200
        assert client.get("/health").status_code == 500
        report = driver.check(_ref(created, request))
        assert not report.healthy and "HTTP 500" in report.reason
        assert client.get("/").status_code == 200  # only the health URL is switched
        assert client.post("/control/health", json={"status": "x"}).status_code == 400
        assert client.post("/control/health", json={"status": None}).status_code == 200
        assert client.get("/health").status_code == 200
    driver.delete(_ref(created, request))
