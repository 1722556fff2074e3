"""One bed per test run, shared by every pytest-xdist worker, and the supervisor running it.

The bed runs under a supervisor process (``python -m tests.nova_bed run``) that writes a
state file (``state.json``: starting, ready with the ``BedInfo``, failed with the reason,
stopped) in a root directory. Whoever needs the bed takes a file lock in that root, starts the
supervisor if none is alive, and waits for the state to say ready or failed; a failure is
kept, so every worker skips with the same reason instead of starting the bed again.

In a test run the root is ``<basetemp of the controller>/nova-bed`` (each xdist worker's
basetemp is a child of it); the controller's ``pytest_sessionfinish`` stops the bed. The
supervisor also watches a pid (the controller's, or the lone pytest process's) and stops the
bed when that process is gone, so a killed test run leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.nova_bed.bed import BedInfo, NovaBed
from tests.nova_bed.configs import REPO
from tests.nova_bed.processes import BedError, stop_groups, tail

STATE = "state.json"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours is gone for our purpose
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    return True


def read_state(root: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads((root / STATE).read_text()))
    except (OSError, ValueError):
        return None


def write_state(root: Path, state: dict[str, Any]) -> None:
    temp = root / f".{STATE}.{os.getpid()}"
    temp.write_text(json.dumps(state, indent=2))
    temp.replace(root / STATE)


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / "lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def supervise(root: Path, watch_pid: int | None) -> int:
    """The supervisor's body: start the bed, publish it, stop it when told or orphaned."""
    root.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    started = False

    def on_signal(signum: int, frame: object) -> None:
        if not started:
            raise SystemExit(1)  # NovaBed.start stops what it started on the way out
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    write_state(root, {"status": "starting", "pid": os.getpid()})
    bed = NovaBed(root / "bed")
    try:
        info = bed.start()
    except Exception as exc:
        write_state(root, {"status": "failed", "pid": os.getpid(), "error": str(exc)})
        return 1
    started = True
    write_state(root, {"status": "ready", "pid": os.getpid(), "info": info.to_json()})
    while not stop.wait(1.0):
        if watch_pid is not None and not pid_alive(watch_pid):
            break
    bed.stop()
    write_state(root, {"status": "stopped", "pid": os.getpid()})
    return 0


def _spawn(root: Path, watch_pid: int | None) -> int:
    argv = [sys.executable, "-m", "tests.nova_bed", "run", "--root", str(root)]
    if watch_pid is not None:
        argv += ["--watch-pid", str(watch_pid)]
    with (root / "supervisor.log").open("ab") as log:
        proc = subprocess.Popen(
            argv,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return proc.pid


def start(root: Path, watch_pid: int | None) -> None:
    """Start the bed of ``root`` in the background unless a supervisor there is alive."""
    with locked(root):
        state = read_state(root)
        # a failure is kept (every worker skips with its reason); a dead or stopped
        # supervisor is replaced
        alive = state is not None and pid_alive(int(state["pid"]))
        if state is None or (state["status"] != "failed" and not alive):
            pid = _spawn(root, watch_pid)
            write_state(root, {"status": "starting", "pid": pid})


def wait_ready(root: Path, timeout: float = 900.0) -> BedInfo:
    """The bed of ``root`` once ready; BedError with the reason when it failed."""
    end = time.monotonic() + timeout
    while True:
        state = read_state(root) or {"status": "starting", "pid": 0}
        if state["status"] == "ready":
            return BedInfo(**state["info"])
        if state["status"] == "failed":
            raise BedError(str(state["error"]))
        if state["status"] == "stopped" or not pid_alive(int(state["pid"])):
            raise BedError(f"the bed's supervisor ended:\n{tail(root / 'supervisor.log')}")
        if time.monotonic() > end:
            raise BedError(f"the bed was not ready within {timeout:.0f} s (see {root})")
        time.sleep(0.5)


def ensure(root: Path, watch_pid: int | None, timeout: float = 900.0) -> BedInfo:
    """The bed of ``root``: started by this call if no supervisor is alive there."""
    start(root, watch_pid)
    return wait_ready(root, timeout)


def stop(root: Path, timeout: float = 60.0) -> bool:
    """Stop the bed of ``root`` if one runs; True when there was one."""
    state = read_state(root)
    if state is None or not state.get("pid") or not pid_alive(int(state["pid"])):
        return False
    pid = int(state["pid"])
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < end:
        time.sleep(0.2)
    if pid_alive(pid):
        stop_groups([pid], grace=1.0)
    return True
