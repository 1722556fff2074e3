"""The ``process`` driver: every node is a local OS process in its own process group.

A node's process is identified by ``"<pid>:<start_time>"`` (the start time in
clock ticks from ``/proc/<pid>/stat``), never by the pid alone: a pid whose
start time differs is somebody else's process and is never signalled. Each
spawn leaves a JSON state file under ``<data_dir>/nodes`` and tags the process
environment with ``HERD_OWNER``, so that a restarted engine can find its
processes again with :meth:`ProcessDriver.discover`, and so that a create run
again after a crash (by any engine sharing the data directory) takes over the
process the interrupted create started instead of starting a second one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from herd.drivers.base import (
    CreatedResource,
    Driver,
    HealthReport,
    NodeRequest,
    ResourceEvent,
    ResourceRef,
)
from herd.drivers.operations import PROCESS_OPERATIONS, OperationSpec
from herd.drivers.process_group import (
    leader_alive,
    leader_present,
    live_members,
    process_target,
    recorded_leader,
    send_signal,
)
from herd.drivers.process_ops import ProcessOperationsMixin
from herd.drivers.process_spec import (
    PROPERTIES_SCHEMA,
    expand,
    health_url_from,
    process_properties,
    resolve_command,
    seconds_value,
    signal_name,
    validate_process_properties,
)
from herd.drivers.process_start import EXITED, POLL_INTERVAL, PortPicker, await_start
from herd.drivers.process_watch import ExitWatcher
from herd.drivers.procfs import (
    all_pids,
    describe_exit,
    herd_environ,
    log_tail,
    probe_health,
    read_proc,
)
from herd.errors import DriverError, InvalidSpec
from herd.json_types import str_or_none

_CHECK_TIMEOUT = 2.0
_KILL_WAIT = 5.0


class ProcessDriver(ProcessOperationsMixin, Driver):
    """Runs each node as a local process; see ``docs/drivers.md``."""

    profile_type = "herd.process"
    versions = ("1.0",)
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2025.01"}]
    }
    properties_schema: ClassVar[dict[str, dict[str, object]]] = PROPERTIES_SCHEMA
    operations_schema: ClassVar[Mapping[str, OperationSpec]] = PROCESS_OPERATIONS
    supports_reboot = True

    def __init__(self, data_dir: Path, owner: str = "herd", *, spawn_grace: float = 0.2) -> None:
        """Create a driver keeping logs and state files under ``data_dir/nodes``.

        Args:
            data_dir: herd's data directory.
            owner: name mixed into the ``HERD_OWNER`` marker of spawned processes.
            spawn_grace: seconds a process without health URL must survive to count as started.
        """
        super().__init__()
        self.nodes_dir = Path(data_dir) / "nodes"
        self.owner_marker = f"{owner}@{Path(data_dir).resolve()}"
        self.spawn_grace = spawn_grace
        self._children: dict[int, subprocess.Popen[bytes]] = {}
        self._ports = PortPicker()
        #: guards ``_children`` (the node pool's creates and the exit watcher's thread)
        self._lock = threading.Lock()
        self._watcher = ExitWatcher(self._process_ended)

    # -- validation -------------------------------------------------------------------------

    @classmethod
    def validate_properties(cls, properties: Mapping[str, object]) -> dict[str, object]:
        """Return the properties with defaults filled in, or raise InvalidSpec naming the key."""
        return validate_process_properties(properties)

    # -- create -----------------------------------------------------------------------------

    def create(self, request: NodeRequest) -> CreatedResource:
        """Spawn the node's process and wait until it is started (and healthy, with a URL).

        Idempotent per node: when the node already has a live process (a create that an
        engine crash interrupted, run again by whichever engine resumed it), that process
        is waited for and returned instead of a second one being spawned.
        """
        resumed = self._resume_start(request)
        return resumed if resumed is not None else self._spawn(request, self._ports.pick())

    def _resume_start(self, request: NodeRequest) -> CreatedResource | None:
        recorded = recorded_leader(
            self._state_path(request.node_id), request.node_id, self.owner_marker
        )
        if recorded is None:
            return None
        pid, start_time, data = recorded
        props = process_properties(self.validate_properties(request.properties))
        url = str_or_none(data, "health_url")  # written by _spawn: text or None
        if await_start(pid, url, props.start_timeout, self.spawn_grace) is None:
            return CreatedResource(f"{pid}:{start_time}", data)
        # It never became healthy: stop it and start the node afresh.
        self._stop(request.node_id, pid, start_time, pid, signal.SIGKILL, 0.0)
        self._state_path(request.node_id).unlink(missing_ok=True)
        return None

    def reboot(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Stop the node's process group and start the same command again, on the same port.

        A process that is already gone is simply started. The new process has a new
        pid (so a new physical id); the node keeps its port, log file and name.
        """
        port = ref.data.get("port")
        self.delete(ref)
        if not isinstance(port, int) or isinstance(port, bool) or port <= 0:
            port = self._ports.pick()
        return self._spawn(request, port)

    def _spawn(self, request: NodeRequest, port: int) -> CreatedResource:
        props = process_properties(self.validate_properties(request.properties))
        values = {
            "name": request.name,
            "index": str(request.index),
            "node_id": request.node_id,
            "cluster_id": request.cluster_id or "",
            "port": str(port),
        }
        env = dict(os.environ)
        env.update({key: expand(value, values) for key, value in props.env.items()})
        env.update(
            HERD_NODE_ID=request.node_id,
            HERD_NODE_NAME=request.name,
            HERD_NODE_INDEX=str(request.index),
            HERD_CLUSTER_ID=request.cluster_id or "",
            HERD_NODE_PORT=str(port),
            HERD_OWNER=self.owner_marker,
        )
        argv = [resolve_command(props.command), *(expand(arg, values) for arg in props.args)]
        self.nodes_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.nodes_dir / f"{request.node_id}.log"
        try:
            with log_path.open("ab") as log:
                proc = subprocess.Popen(
                    argv,
                    env=env,
                    cwd=props.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                )
        except OSError as exc:
            raise DriverError(f"cannot start {argv[0]!r}: {exc}") from exc
        with self._lock:
            self._children[proc.pid] = proc
        info = read_proc(proc.pid)
        url = props.health_url
        health_url = expand(url, values) if url else None
        data: dict[str, object] = {
            "pid": proc.pid,
            "pgid": proc.pid,
            "start_time": info.start_time if info else 0,
            "port": port,
            "log_path": str(log_path),
            "health_url": health_url,
            "name": request.name,
            "index": request.index,
            "cluster_id": request.cluster_id,
        }
        self._write_state(request.node_id, data)
        failure = await_start(proc.pid, health_url, props.start_timeout, self.spawn_grace)
        if failure is not None:
            # The leader is not reaped yet, so its pid and group id cannot have been reused.
            send_signal(os.killpg, proc.pid, signal.SIGKILL)
            code = proc.wait()
            with self._lock:
                self._children.pop(proc.pid, None)
            self._state_path(request.node_id).unlink(missing_ok=True)
            if failure is EXITED:
                tail = log_tail(log_path)
                failure = f"process {proc.pid} {describe_exit(code)} right after start"
                failure += f"; log tail:\n{tail}" if tail else "; the log is empty"
            raise DriverError(failure)
        return CreatedResource(f"{proc.pid}:{data['start_time']}", data)

    # -- delete -----------------------------------------------------------------------------

    def delete(self, ref: ResourceRef) -> None:
        """Stop the process group: stop signal, wait stop_timeout, then SIGKILL. Idempotent."""
        self._watcher.unwatch(ref.node_id)  # an exit we cause is not a failure to report
        target = process_target(ref)
        if target is not None:
            pid, start_time, pgid = target
            signame = str(ref.properties.get("stop_signal") or "SIGTERM")
            try:
                stop_signal = signal.Signals[signal_name(signame)]
            except InvalidSpec:
                stop_signal = signal.SIGTERM
            try:
                timeout = seconds_value("stop_timeout", ref.properties.get("stop_timeout", 10.0))
            except InvalidSpec:
                timeout = 10.0
            self._stop(ref.node_id, pid, start_time, pgid, stop_signal, timeout)
        self._state_path(ref.node_id).unlink(missing_ok=True)

    def _stop(
        self, node_id: str, pid: int, start_time: int, pgid: int, sig: int, timeout: float
    ) -> None:
        def members() -> list[int]:
            return live_members(pid, start_time, pgid, node_id, self.owner_marker)

        if leader_present(pid, start_time):
            send_signal(os.killpg, pgid, sig)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and (leader_alive(pid, start_time) or members()):
                time.sleep(POLL_INTERVAL)
            if leader_present(pid, start_time):
                send_signal(os.killpg, pgid, signal.SIGKILL)
        # Members left behind by a leader that is already gone are matched by environment.
        strays = members()
        for member in strays:
            send_signal(os.kill, member, signal.SIGKILL)
        deadline = time.monotonic() + _KILL_WAIT
        # SIGKILL is asynchronous: return only once nothing of the node runs any more.
        while leader_alive(pid, start_time) or (strays and members()):
            if time.monotonic() > deadline:
                raise DriverError(f"process {pid} did not die after SIGKILL", retryable=True)
            time.sleep(POLL_INTERVAL)
        if leader_present(pid, start_time):
            self._reap(pid)

    def _reap(self, pid: int) -> int | None:
        """Collect the exit code of a dead child of this process; None when not ours or running."""
        with self._lock:
            proc = self._children.get(pid)
        if proc is not None:
            code = proc.poll()
            if code is not None:
                with self._lock:
                    self._children.pop(pid, None)
            return code
        try:
            waited, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        return os.waitstatus_to_exitcode(status) if waited else None

    # -- check and discover -----------------------------------------------------------------

    def check(self, ref: ResourceRef) -> HealthReport:
        """Healthy when the process (pid + start time) runs and its health URL answers 2xx."""
        target = process_target(ref)
        if target is None:
            return HealthReport(False, "node has no process")
        pid, start_time, _ = target
        info = read_proc(pid)
        if info is None or info.start_time != start_time:
            return HealthReport(False, f"process {pid} exited")
        if info.zombie:
            code = self._reap(pid)
            detail = f" ({describe_exit(code)})" if code is not None else ""
            return HealthReport(False, f"process {pid} exited{detail}")
        url = ref.data.get("health_url") or health_url_from(ref)
        if url:
            failure = probe_health(str(url), _CHECK_TIMEOUT)
            if failure is not None:
                return HealthReport(False, f"health check {url} failed: {failure}")
        return HealthReport(True)

    def discover(self) -> dict[str, CreatedResource]:
        """Live processes this driver started, keyed by node id; stale state files are removed."""
        found: dict[str, CreatedResource] = {}
        if self.nodes_dir.is_dir():
            for path in self.nodes_dir.glob("*.json"):
                try:
                    data = json.loads(path.read_text())
                    pid, start_time = int(data["pid"]), int(data["start_time"])
                except (OSError, ValueError, KeyError, TypeError):
                    continue
                if leader_alive(pid, start_time):
                    found[path.stem] = CreatedResource(f"{pid}:{start_time}", data)
                else:
                    if leader_present(pid, start_time):
                        self._reap(pid)
                    path.unlink(missing_ok=True)
        # A crash between spawn and the state file leaves a tagged process without a file.
        for pid in all_pids():
            info = read_proc(pid)
            if info is None or info.pgid != pid or info.zombie:
                continue
            env = herd_environ(pid)
            node_id = env.get("HERD_NODE_ID")
            if env.get("HERD_OWNER") != self.owner_marker or not node_id:
                continue
            if node_id in found:
                if found[node_id].physical_id != f"{pid}:{info.start_time}":
                    # A second process of one node: the state file names the one the node
                    # was given, so this one is left from a spawn a crash interrupted.
                    self._stop(node_id, pid, info.start_time, pid, signal.SIGKILL, 0.0)
                continue
            port = env.get("HERD_NODE_PORT", "")
            data = {
                "pid": pid,
                "pgid": pid,
                "start_time": info.start_time,
                "port": int(port) if port.isdigit() else None,
                "log_path": str(self.nodes_dir / f"{node_id}.log"),
                "health_url": None,
                "name": env.get("HERD_NODE_NAME", ""),
                "index": int(env.get("HERD_NODE_INDEX", "0") or 0),
                "cluster_id": env.get("HERD_CLUSTER_ID") or None,
            }
            self._write_state(node_id, data)
            found[node_id] = CreatedResource(f"{pid}:{info.start_time}", data)
        return found

    # -- events ---------------------------------------------------------------------------

    def watch(self, ref: ResourceRef) -> bool:
        """Report the node's process ending, at once (a pidfd per process, one thread)."""
        target = process_target(ref)
        physical_id = ref.physical_id or ""
        if target is None:
            self.emit(ResourceEvent(ref.node_id, physical_id, "node has no process"))
            return True
        pid, start_time, _ = target
        self._watcher.watch(ref.node_id, physical_id or f"{pid}:{start_time}", pid, start_time)
        return True

    def unwatch(self, node_id: str) -> None:
        self._watcher.unwatch(node_id)

    def _process_ended(self, node_id: str, physical_id: str, pid: int) -> None:
        code = self._reap(pid)
        detail = describe_exit(code) if code is not None else "exited"
        self.emit(ResourceEvent(node_id, physical_id, f"process {pid} {detail}"))

    def close(self) -> None:
        """Stop watching and forget child handles; the processes themselves keep running."""
        self._watcher.close()
        with self._lock:
            self._children.clear()

    def _state_path(self, node_id: str) -> Path:
        return self.nodes_dir / f"{node_id}.json"

    def _write_state(self, node_id: str, data: Mapping[str, object]) -> None:
        self.nodes_dir.mkdir(parents=True, exist_ok=True)
        final = self._state_path(node_id)
        temp = final.with_name(f".{node_id}.{threading.get_ident()}.tmp")
        temp.write_text(json.dumps({"node_id": node_id, **data}))
        os.replace(temp, final)
