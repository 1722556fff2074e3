"""A create run again after a crash never leaves a node with two processes (real processes).

The chaos test (tests/e2e/test_chaos.py, seed 1) found it: an engine killed with SIGKILL while
its NODE_CREATE waited for the new process's health URL left that process running; the
engine that resumed the action ran the create again and spawned a second process for the
node, and the first one was never reclaimed (``discover`` collapsed the two by node id).
Now a create takes over the process the node's state file names, and ``discover`` stops a
second process of a node.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.chaos import node_process_table

from herd.drivers.base import NodeRequest
from herd.drivers.process import ProcessDriver

PY = sys.executable
#: serves its health URL only after a second, so a create is caught while it waits
SLOW_SERVER = {
    "command": PY,
    "args": [
        "-c",
        "import runpy, sys, time; time.sleep(1.0); "
        "sys.argv = ['testserver', '--port', '{port}']; "
        "runpy.run_module('herd.drivers.testserver', run_name='__main__')",
    ],
    "health_url": "http://127.0.0.1:{port}/health",
    "start_timeout": 20,
    "stop_timeout": 2,
}


def _request(node_id: str = "n1") -> NodeRequest:
    return NodeRequest(node_id, "node-1", 1, "c1", ProcessDriver.validate_properties(SLOW_SERVER))


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    for process in node_process_table(path):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _engine_killed_mid_create(data_dir: Path) -> None:
    """A separate process plays an engine: it starts a create and is killed while it waits."""
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from herd.drivers.base import NodeRequest
        from herd.drivers.process import ProcessDriver
        props = ProcessDriver.validate_properties({SLOW_SERVER!r})
        ProcessDriver(Path({str(data_dir)!r})).create(NodeRequest("n1", "node-1", 1, "c1", props))
        """
    )
    engine = subprocess.Popen([PY, "-c", script], start_new_session=True)
    state = data_dir / "nodes" / "n1.json"
    deadline = time.monotonic() + 30
    while not state.exists():
        assert time.monotonic() < deadline, "the create never spawned its process"
        assert engine.poll() is None, "the create ended before it could be interrupted"
        time.sleep(0.01)
    os.kill(engine.pid, signal.SIGKILL)  # mid-wait: the node's process is not healthy yet
    engine.wait(10)


def test_a_resumed_create_takes_over_the_interrupted_process(data_dir: Path) -> None:
    _engine_killed_mid_create(data_dir)
    (first,) = node_process_table(data_dir)

    resumed = ProcessDriver(data_dir).create(_request())  # another engine resumes the action

    assert resumed.physical_id == first.physical_id
    assert node_process_table(data_dir) == [first]
    assert resumed.data["health_url"].startswith("http://127.0.0.1:")


def test_create_twice_gives_one_process(data_dir: Path) -> None:
    created = ProcessDriver(data_dir).create(_request())
    again = ProcessDriver(data_dir).create(_request())
    assert again.physical_id == created.physical_id
    assert [p.physical_id for p in node_process_table(data_dir)] == [created.physical_id]


def test_a_dead_recorded_process_is_replaced(data_dir: Path) -> None:
    driver = ProcessDriver(data_dir)
    created = driver.create(_request())
    os.killpg(created.data["pid"], signal.SIGKILL)
    driver._children[created.data["pid"]].wait(5)
    again = ProcessDriver(data_dir).create(_request())
    assert again.physical_id != created.physical_id
    assert [p.physical_id for p in node_process_table(data_dir)] == [again.physical_id]


def test_discover_stops_a_second_process_of_one_node(data_dir: Path) -> None:
    driver = ProcessDriver(data_dir)
    created = driver.create(_request())
    # A spawn a crash interrupted before it wrote its state file: tagged, but not recorded.
    env = {**os.environ, "HERD_NODE_ID": "n1", "HERD_OWNER": driver.owner_marker}
    stray = subprocess.Popen(
        [PY, "-c", "import time; time.sleep(120)"], env=env, start_new_session=True
    )
    try:
        found = ProcessDriver(data_dir).discover()
        assert found["n1"].physical_id == created.physical_id
        stray.wait(10)  # killed (its status may already be reaped by the driver, a parent here)
        assert [p.physical_id for p in node_process_table(data_dir)] == [created.physical_id]
    finally:
        if stray.poll() is None:
            stray.kill()
            stray.wait(5)
