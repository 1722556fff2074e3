"""NODE_OPERATION and CLUSTER_OPERATION on real processes (herd.process) and on herd.sim."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from tests.functional.engine.harness import Harness, running_engine
from tests.waiting import wait_for

from herd.drivers.process_ops import process_state
from herd.drivers.procfs import read_proc
from herd.drivers.sim import SimDriver
from herd.types import ActionName

#: node processes a test leaves behind are killed after it (tests/functional/engine/conftest.py)
pytestmark = pytest.mark.usefixtures("no_process_left")

# A node that writes every SIGHUP/SIGUSR1 it receives to $SIGNAL_LOG, and dies on SIGTERM.
SIGNAL_RECORDER = """
import os, signal, time
log = os.environ["SIGNAL_LOG"]
def note(number, frame):
    with open(log, "a") as out:
        out.write(signal.Signals(number).name + "\\n")
for sig in (signal.SIGHUP, signal.SIGUSR1):
    signal.signal(sig, note)
while True:
    time.sleep(0.05)
"""


def _process_profile(harness: Harness, tmp_path: Path) -> str:
    return harness.profile(
        {
            "command": sys.executable,
            "args": ["-c", SIGNAL_RECORDER],
            "env": {"SIGNAL_LOG": str(tmp_path / "signals-{node_id}.log")},
            "stop_timeout": 5,
        },
        type_="herd.process",
    )


def _pid(physical_id: str | None) -> int:
    assert physical_id
    return int(physical_id.split(":")[0])


def _alive(physical_id: str | None) -> bool:
    pid, start = (int(part) for part in str(physical_id).split(":"))
    info = read_proc(pid)
    return info is not None and info.start_time == start and not info.zombie


def _has_line(path: Path, line: str) -> Any:
    return lambda: path.exists() and line in path.read_text().split()


def _operate(harness: Harness, node_id: str, operation: str, **params: Any) -> Any:
    return harness.run(
        ActionName.NODE_OPERATION, node_id, {"operation": operation, "params": params}
    )


def test_signal_is_delivered_to_the_process(harness: Harness, tmp_path: Path) -> None:
    cluster = harness.cluster(1, profile=_process_profile(harness, tmp_path))
    (node,) = harness.nodes(cluster)
    log = tmp_path / f"signals-{node.id}.log"
    action = _operate(harness, node.id, "signal", signal="SIGUSR1")
    assert action.status == "SUCCEEDED", action.status_reason
    assert action.status_reason == "Operation 'signal' succeeded."
    wait_for(lambda: log.exists() and "SIGUSR1" in log.read_text())
    after = harness.node(node.id)
    assert after is not None and after.status == "ACTIVE"
    assert after.status_reason == "Operation 'signal' succeeded"
    assert after.data["last_signal"] == "SIGUSR1"
    assert after.physical_id == node.physical_id and _alive(after.physical_id)
    assert [e.action for e in harness.events(node.id)][-1] == "NODE_OPERATION"


def test_stop_then_start_then_reboot(harness: Harness, tmp_path: Path) -> None:
    cluster = harness.cluster(1, profile=_process_profile(harness, tmp_path))
    (node,) = harness.nodes(cluster)
    assert _alive(node.physical_id)

    assert _operate(harness, node.id, "stop").status == "SUCCEEDED"
    stopped = harness.node(node.id)
    assert stopped is not None and stopped.data["process_state"] == "stopped"
    assert not _alive(node.physical_id)
    check = harness.run(ActionName.NODE_CHECK, node.id)
    assert "exited" in check.status_reason
    # A stopped process cannot be signalled: the operation fails and says why.
    failed = _operate(harness, node.id, "signal", signal="SIGHUP")
    assert failed.status == "FAILED"
    assert "is not running" in failed.status_reason
    errored = harness.node(node.id)
    assert errored is not None and errored.status == "ERROR"

    assert _operate(harness, node.id, "start").status == "SUCCEEDED"
    started = harness.node(node.id)
    assert started is not None and started.status == "ACTIVE"
    assert started.physical_id != node.physical_id and _alive(started.physical_id)
    assert started.data["process_state"] == "running"
    cmdline = Path(f"/proc/{_pid(started.physical_id)}/cmdline").read_bytes().split(b"\0")
    assert cmdline[1:3] == [b"-c", SIGNAL_RECORDER.encode()]

    assert _operate(harness, node.id, "reboot").status == "SUCCEEDED"
    rebooted = harness.node(node.id)
    assert rebooted is not None and rebooted.physical_id != started.physical_id
    assert _alive(rebooted.physical_id) and not _alive(started.physical_id)


def test_pause_and_unpause_change_the_process_state(harness: Harness, tmp_path: Path) -> None:
    cluster = harness.cluster(1, profile=_process_profile(harness, tmp_path))
    (node,) = harness.nodes(cluster)
    pid = _pid(node.physical_id)
    assert process_state(pid) in ("S", "R")
    assert _operate(harness, node.id, "pause").status == "SUCCEEDED"
    # a signal takes effect when the process is next scheduled: on a busy machine, not at once
    assert wait_for(lambda: process_state(pid) == "T", timeout=30)
    paused = harness.node(node.id)
    assert paused is not None and paused.data["process_state"] == "paused"
    assert _operate(harness, node.id, "unpause").status == "SUCCEEDED"
    assert wait_for(lambda: process_state(pid) in ("S", "R"), timeout=30)
    # A paused node is still deleted promptly: reboot resumes it before stopping it.
    assert _operate(harness, node.id, "pause").status == "SUCCEEDED"
    assert _operate(harness, node.id, "reboot").status == "SUCCEEDED"
    assert not _alive(node.physical_id)


def test_cluster_operation_runs_one_child_per_member(harness: Harness, tmp_path: Path) -> None:
    cluster = harness.cluster(2, profile=_process_profile(harness, tmp_path))
    members = harness.nodes(cluster)
    action = harness.run(
        ActionName.CLUSTER_OPERATION,
        cluster,
        {"operation": "signal", "params": {"signal": "SIGHUP"}, "nodes": [n.id for n in members]},
    )
    assert action.status == "SUCCEEDED", action.status_reason
    children = harness.children(action.id)
    assert sorted(c.target for c in children) == sorted(n.id for n in members)
    assert {c.action for c in children} == {"NODE_OPERATION"}
    assert {c.status for c in children} == {"SUCCEEDED"}
    for node in members:
        log = tmp_path / f"signals-{node.id}.log"
        wait_for(_has_line(log, "SIGHUP"))
    after = harness.get_cluster(cluster)
    assert after is not None and after.status == "ACTIVE"


def test_uncatchable_signal_is_refused_by_the_engine_too(harness: Harness, tmp_path: Path) -> None:
    cluster = harness.cluster(1, profile=_process_profile(harness, tmp_path))
    (node,) = harness.nodes(cluster)
    action = _operate(harness, node.id, "signal", signal="SIGKILL")
    assert action.status == "FAILED"
    assert "Signal SIGKILL is refused" in action.status_reason
    assert _alive(node.physical_id)


def test_uncatchable_signal_when_the_operator_allows_it(tmp_path: Path) -> None:
    with running_engine(tmp_path / "data", allow_uncatchable_signals=True) as harness:
        cluster = harness.cluster(1, profile=_process_profile(harness, tmp_path))
        (node,) = harness.nodes(cluster)
        assert _operate(harness, node.id, "signal", signal="KILL").status == "SUCCEEDED"
        wait_for(lambda: not _alive(node.physical_id))
        harness.run(ActionName.CLUSTER_DELETE, cluster)


def _sim(harness: Harness) -> SimDriver:
    driver = harness.engine.ctx.drivers.get("herd.sim")
    assert isinstance(driver, SimDriver)
    return driver


def test_sim_operations(harness: Harness) -> None:
    cluster = harness.cluster(3)
    members = harness.nodes(cluster)
    sim = _sim(harness)
    chosen = [members[0].id, members[2].id]
    action = harness.run(
        ActionName.CLUSTER_OPERATION, cluster, {"operation": "pause", "params": {}, "nodes": chosen}
    )
    assert action.status == "SUCCEEDED", action.status_reason
    states = {n.id: sim.sim_state(str(n.physical_id))["state"] for n in members}
    assert states == {members[0].id: "paused", members[1].id: "running", members[2].id: "paused"}
    check = harness.run(ActionName.NODE_CHECK, members[0].id)
    assert "is paused" in check.status_reason

    assert _operate(harness, members[0].id, "unpause").status == "SUCCEEDED"
    assert sim.sim_state(str(members[0].physical_id))["state"] == "running"
    # Unpausing a running server is an error the driver reports.
    again = _operate(harness, members[0].id, "unpause")
    assert again.status == "FAILED" and "is not paused" in again.status_reason

    assert _operate(harness, members[1].id, "signal", signal="SIGUSR2").status == "SUCCEEDED"
    assert sim.sim_state(str(members[1].physical_id))["signals"] == ["SIGUSR2"]
    assert _operate(harness, members[1].id, "reboot").status == "SUCCEEDED"
    rebooted = harness.node(members[1].id)
    assert rebooted is not None and rebooted.data["reboots"] == 1
    assert rebooted.physical_id == members[1].physical_id
    assert _operate(harness, members[1].id, "stop").status == "SUCCEEDED"
    assert sim.sim_state(str(members[1].physical_id))["state"] == "stopped"
    assert _operate(harness, members[1].id, "start").status == "SUCCEEDED"
    assert sim.sim_state(str(members[1].physical_id))["state"] == "running"


def test_operation_on_a_vanished_sim_server_fails_the_node(harness: Harness) -> None:
    cluster = harness.cluster(1)
    (node,) = harness.nodes(cluster)
    harness.set_node(node.id, physical_id="sim-gone-1")
    action = harness.run(
        ActionName.CLUSTER_OPERATION,
        cluster,
        {"operation": "stop", "params": {}, "nodes": [node.id]},
    )
    assert action.status == "FAILED"
    assert "simulated server sim-gone-1 does not exist" in action.status_reason
    after = harness.node(node.id)
    assert after is not None and after.status == "ERROR"
    assert after.status_reason.startswith("Operation 'stop' failed")
    cluster_row = harness.get_cluster(cluster)
    assert cluster_row is not None and cluster_row.status != "OPERATING"


@pytest.mark.parametrize("operation", ["frob"])
def test_unknown_operation_stored_directly_fails(harness: Harness, operation: str) -> None:
    cluster = harness.cluster(1)
    (node,) = harness.nodes(cluster)
    action = _operate(harness, node.id, operation)
    assert action.status == "FAILED"
    assert "is not supported by the profile type 'herd.sim-1.0'" in action.status_reason


def test_operations_run_with_enabled_policies_attached(harness: Harness) -> None:
    cluster = harness.cluster(2)
    harness.attach(
        cluster,
        {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}},
        name="del",
    )
    harness.attach(
        cluster,
        {
            "type": "senlin.policy.scaling",
            "version": "1.0",
            "properties": {"event": "CLUSTER_SCALE_IN"},
        },
        name="scale",
    )
    members = harness.nodes(cluster)
    action = harness.run(
        ActionName.CLUSTER_OPERATION,
        cluster,
        {"operation": "reboot", "params": {}, "nodes": [n.id for n in members]},
    )
    assert action.status == "SUCCEEDED", action.status_reason
    assert _operate(harness, members[0].id, "stop").status == "SUCCEEDED"
    assert [n.status for n in harness.nodes(cluster)] == ["ACTIVE", "ACTIVE"]
