"""The process driver, with real processes (no mocks)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.drivers.process import ProcessDriver
from herd.drivers.procfs import read_proc
from herd.errors import DriverError, InvalidSpec

PY = sys.executable
SLEEPER = ["-c", "import time; print('ready', flush=True); time.sleep(120)"]
STUBBORN = [
    "-c",
    "import signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(120)",
]


def _marked_pids(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if f"HERD_OWNER={marker}".encode() in environ.split(b"\0"):
            found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    info = read_proc(pid)
    return info is not None and not info.zombie


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[ProcessDriver]:
    """A driver whose leftover processes are killed and reaped after the test."""
    drv = ProcessDriver(tmp_path / "data", spawn_grace=0.1)
    yield drv
    for pid in _marked_pids(drv.owner_marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in list(drv._children):
        drv._children[pid].wait(5)


def _request(props: dict[str, Any], node_id: str = "n1", index: int = 1) -> NodeRequest:
    validated = ProcessDriver.validate_properties(props)
    return NodeRequest(node_id, f"node-{index}", index, "c1", validated)


def _ref(created: CreatedResource, request: NodeRequest) -> ResourceRef:
    return ResourceRef(request.node_id, created.physical_id, created.data, request.properties)


def _wait_log(driver: ProcessDriver, node_id: str, text: str, timeout: float = 5.0) -> str:
    path = driver.nodes_dir / f"{node_id}.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        content = path.read_text() if path.exists() else ""
        if text in content:
            return content
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {path}")


def _server_props(**extra: Any) -> dict[str, Any]:
    return {
        "command": PY,
        "args": ["-m", "herd.drivers.testserver", "--port", "{port}", *extra.pop("more", [])],
        "health_url": "http://127.0.0.1:{port}/health",
        **extra,
    }


def test_create_with_health_url_then_sigterm_stops_it(driver: ProcessDriver) -> None:
    request = _request(_server_props(start_timeout=10))
    created = driver.create(request)
    pid, start = (int(part) for part in created.physical_id.split(":"))
    assert created.data["pid"] == pid and created.data["start_time"] == start
    assert created.data["health_url"] == f"http://127.0.0.1:{created.data['port']}/health"
    assert os.getpgid(pid) == pid  # its own process group
    state = json.loads((driver.nodes_dir / "n1.json").read_text())
    assert state["pid"] == pid and state["node_id"] == "n1"
    assert driver.check(_ref(created, request)).healthy

    driver.delete(_ref(created, request))
    assert not _alive(pid)
    # It stopped on SIGTERM (its own message), not on the SIGKILL after stop_timeout.
    assert "testserver stopped" in (driver.nodes_dir / "n1.log").read_text()
    assert not (driver.nodes_dir / "n1.json").exists()
    driver.delete(_ref(created, request))  # idempotent


def test_placeholders_env_and_cwd(driver: ProcessDriver, tmp_path: Path) -> None:
    script = (
        "import os, sys, time\n"
        "print('ARGS', sys.argv[1:], 'X', os.environ['X'], 'CWD', os.getcwd(),"
        " 'ID', os.environ['HERD_NODE_ID'], os.environ['HERD_NODE_INDEX'], flush=True)\n"
        "time.sleep(120)"
    )
    props = {
        "command": PY,
        "args": ["-c", script, "{name}", "{index}", "{cluster_id}", "{port}", "{other}"],
        "env": {"X": "{node_id}-{port}"},
        "cwd": str(tmp_path),
    }
    request = _request(props, node_id="abc", index=7)
    created = driver.create(request)
    port = created.data["port"]
    log = _wait_log(driver, "abc", "ARGS")
    assert f"['node-7', '7', 'c1', '{port}', '{{other}}']" in log
    assert f"X abc-{port}" in log and f"CWD {tmp_path}" in log and "ID abc 7" in log
    driver.delete(_ref(created, request))


@pytest.mark.parametrize("command", ["python3", "python", "{python}"])
def test_bare_python_is_the_interpreter_running_herd(
    driver: ProcessDriver, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server started from a venv by its absolute path (make serve) may have a PATH where
    # python3 is the system's, without herd: the README's profile must still run.
    monkeypatch.setenv("PATH", "/nonexistent")
    script = "import sys, time; print('EXE', sys.executable, flush=True); time.sleep(120)"
    props = {"command": command, "args": ["-c", script]}
    request = _request(props, node_id="py")
    created = driver.create(request)
    assert f"EXE {PY}" in _wait_log(driver, "py", "EXE")
    assert request.properties["command"] == command  # the profile keeps what the user wrote
    driver.delete(_ref(created, request))


def test_stubborn_process_is_killed_after_stop_timeout(driver: ProcessDriver) -> None:
    request = _request({"command": PY, "args": STUBBORN, "stop_timeout": 0.5})
    created = driver.create(request)
    _wait_log(driver, "n1", "ready")
    began = time.monotonic()
    driver.delete(_ref(created, request))
    elapsed = time.monotonic() - began
    # It waited the stop timeout before the kill (pytest-timeout catches a hang).
    assert elapsed >= 0.45
    assert not _alive(created.data["pid"])


def test_process_group_children_are_killed_too(driver: ProcessDriver) -> None:
    # The shell and its children ignore SIGTERM, so only the group SIGKILL ends them.
    script = "trap '' TERM; sleep 120 & sleep 120 & echo ready; wait"
    request = _request({"command": "sh", "args": ["-c", script], "stop_timeout": 0.3})
    created = driver.create(request)
    _wait_log(driver, "n1", "ready")
    pgid = created.data["pgid"]
    members = [pid for pid in _marked_pids(driver.owner_marker) if os.getpgid(pid) == pgid]
    assert len(members) == 3
    driver.delete(_ref(created, request))
    assert not any(_alive(pid) for pid in members)


def test_members_left_by_a_dead_leader_are_killed(driver: ProcessDriver) -> None:
    script = "sleep 120 & echo ready; exec sleep 121"
    request = _request({"command": "sh", "args": ["-c", script], "stop_timeout": 0.3})
    created = driver.create(request)
    _wait_log(driver, "n1", "ready")
    leader = created.data["pid"]
    orphans = [pid for pid in _marked_pids(driver.owner_marker) if pid != leader]
    assert len(orphans) == 1
    os.kill(leader, signal.SIGKILL)
    driver._children[leader].wait(5)
    assert not driver.check(_ref(created, request)).healthy
    driver.delete(_ref(created, request))
    assert not _alive(orphans[0])


def test_health_url_never_answering_fails_and_kills(driver: ProcessDriver) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    props = {
        "command": PY,
        "args": SLEEPER,
        "health_url": f"http://127.0.0.1:{closed_port}/",
        "start_timeout": 0.5,
    }
    with pytest.raises(DriverError) as caught:
        driver.create(_request(props))
    assert "did not answer 2xx within 0.5s" in caught.value.message
    assert "connection refused" in caught.value.message
    assert _marked_pids(driver.owner_marker) == []
    assert not (driver.nodes_dir / "n1.json").exists()


def test_immediate_exit_reports_code_and_log_tail(driver: ProcessDriver) -> None:
    # The start grace is long here: on a loaded machine Python alone can take longer than
    # the fixture's 0.1 s to start and exit, and create() returns as soon as it has exited.
    driver.spawn_grace = 60.0
    props = {"command": PY, "args": ["-c", "import sys; print('boom here'); sys.exit(3)"]}
    with pytest.raises(DriverError) as caught:
        driver.create(_request(props))
    assert "exited with code 3" in caught.value.message
    assert "boom here" in caught.value.message


def test_missing_executable_is_a_driver_error(driver: ProcessDriver) -> None:
    with pytest.raises(DriverError, match="cannot start"):
        driver.create(_request({"command": "/nonexistent/herd-binary"}))


def test_check_reports_dead_process(driver: ProcessDriver) -> None:
    request = _request({"command": PY, "args": SLEEPER})
    created = driver.create(request)
    pid = created.data["pid"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    report = driver.check(_ref(created, request))
    assert not report.healthy
    assert report.reason.startswith(f"process {pid} exited")
    assert driver.check(_ref(created, request)).reason == f"process {pid} exited"
    driver.delete(_ref(created, request))


def test_check_reports_failing_health_url(driver: ProcessDriver, tmp_path: Path) -> None:
    flag = tmp_path / "unhealthy"
    request = _request(_server_props(more=["--unhealthy-file", str(flag)]))
    created = driver.create(request)
    ref = _ref(created, request)
    assert driver.check(ref).healthy
    # A node re-attached from its environment has no URL in its data: the profile's is used.
    reattached = dataclasses.replace(ref, data={**created.data, "health_url": None})
    assert driver.check(reattached).healthy
    flag.touch()
    report = driver.check(ref)
    assert not report.healthy
    assert report.reason == f"health check {created.data['health_url']} failed: HTTP 503"
    assert driver.check(reattached).reason == report.reason

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    refused = dataclasses.replace(ref, data={**created.data, "health_url": closed})
    assert driver.check(refused).reason == f"health check {closed} failed: connection refused"
    driver.delete(ref)


def test_reused_pid_is_never_signalled(driver: ProcessDriver) -> None:
    request = _request({"command": PY, "args": SLEEPER})
    created = driver.create(request)
    pid, start = created.data["pid"], created.data["start_time"]
    # A ref whose start time differs stands for a process that has gone and whose pid
    # now belongs to somebody else: it must be left alone.
    stale = ResourceRef(
        "n1", f"{pid}:{start + 1}", {**created.data, "start_time": start + 1}, request.properties
    )
    assert not driver.check(stale).healthy
    driver.delete(stale)
    assert _alive(pid)
    assert driver.check(_ref(created, request)).healthy
    driver.delete(_ref(created, request))
    assert not _alive(pid)


def test_delete_without_physical_id_is_a_no_op(driver: ProcessDriver) -> None:
    driver.delete(ResourceRef("ghost", None, {}, {}))
    assert not driver.check(ResourceRef("ghost", None, {}, {})).healthy


def test_discover_reattaches_after_restart(driver: ProcessDriver, tmp_path: Path) -> None:
    requests = [_request({"command": PY, "args": SLEEPER}, f"n{i}", i) for i in range(3)]
    created = {req.node_id: driver.create(req) for req in requests}
    # n2 dies while the engine is down: its state file is stale and must go.
    os.kill(created["n2"].data["pid"], signal.SIGKILL)
    driver._children[created["n2"].data["pid"]].wait(5)

    fresh = ProcessDriver(tmp_path / "data")
    assert fresh.owner_marker == driver.owner_marker
    found = fresh.discover()
    assert set(found) == {"n0", "n1"}
    assert found["n0"].physical_id == created["n0"].physical_id
    assert not (fresh.nodes_dir / "n2.json").exists()

    # A crash between spawn and the state file: the process is found by its environment.
    (fresh.nodes_dir / "n1.json").unlink()
    found = fresh.discover()
    assert found["n1"].physical_id == created["n1"].physical_id
    assert found["n1"].data["name"] == "node-1" and found["n1"].data["index"] == 1
    assert (fresh.nodes_dir / "n1.json").exists()

    assert ProcessDriver(tmp_path / "elsewhere").discover() == {}

    for node_id in ("n0", "n1"):
        fresh.delete(ResourceRef(node_id, found[node_id].physical_id, found[node_id].data, {}))
        assert not _alive(found[node_id].data["pid"])
    assert fresh.discover() == {}


def test_recover_replaces_the_process(driver: ProcessDriver) -> None:
    request = _request({"command": PY, "args": SLEEPER})
    created = driver.create(request)
    recovered = driver.recover(_ref(created, request), request)
    assert recovered.physical_id != created.physical_id
    assert not _alive(created.data["pid"]) and _alive(recovered.data["pid"])
    driver.delete(_ref(recovered, request))


@pytest.mark.parametrize(
    ("props", "field", "text"),
    [
        ({}, "properties.command", "Required spec item 'command'"),
        ({"command": ""}, "properties.command", "not a non-empty string"),
        ({"command": "x", "args": "a b"}, "properties.args", "is not a List"),
        ({"command": "x", "args": [{"a": 1}]}, "properties.args[0]", "is not a string"),
        ({"command": "x", "env": ["A=1"]}, "properties.env", "is not a Map"),
        ({"command": "x", "env": {"A": [1]}}, "properties.env.A", "is not a string"),
        ({"command": "x", "env": {"A=B": "1"}}, "properties.env", "environment variable"),
        ({"command": "x", "health_url": "ftp://h/"}, "properties.health_url", "http"),
        ({"command": "x", "stop_signal": "SIGNOPE"}, "properties.stop_signal", "signal name"),
        ({"command": "x", "stop_timeout": -1}, "properties.stop_timeout", "seconds"),
        ({"command": "x", "start_timeout": "soon"}, "properties.start_timeout", "seconds"),
        ({"command": "x", "colour": "red"}, "properties.colour", "Unrecognizable spec item"),
    ],
)
def test_validation_names_the_field(props: dict[str, Any], field: str, text: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        ProcessDriver.validate_properties(props)
    assert caught.value.field == field
    assert text in caught.value.message and field in caught.value.message


def test_validation_fills_defaults() -> None:
    props = ProcessDriver.validate_properties(
        {"command": "srv", "args": ["--port", 8080], "stop_signal": "int"}
    )
    assert props == {
        "command": "srv",
        "args": ["--port", "8080"],
        "env": {},
        "cwd": None,
        "health_url": None,
        "stop_signal": "SIGINT",
        "stop_timeout": 10.0,
        "start_timeout": 10.0,
    }
    assert ProcessDriver.validate_properties(props) == props
