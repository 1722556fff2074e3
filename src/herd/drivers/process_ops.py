"""Operations on ``herd.process`` nodes: reboot, stop, start, signal, pause, unpause.

A node's process is known by pid *and* start time (see ``process.py``); every
operation first checks that the process it is about to signal is still that
one, so a reused pid is never signalled. Signals go to the node's process
group (nodes lead their own session).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from herd.drivers.adoption import AdoptedResource
from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.drivers.operations import signal_number
from herd.drivers.process_group import leader_alive, process_target
from herd.errors import DriverError

if TYPE_CHECKING:
    from herd.drivers.process import ProcessDriver

_STATE_WAIT = 5.0
_POLL = 0.02
RUNNING, STOPPED, PAUSED = "running", "stopped", "paused"


def process_state(pid: int) -> str | None:
    """The state letter of ``/proc/<pid>/stat`` (R, S, T, Z, ...), None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return raw[raw.rindex(b")") + 2 :].split()[0].decode()


def _alive_target(ref: ResourceRef) -> tuple[int, int] | None:
    """(pid, process group) of the node's process while it runs, else None."""
    target = process_target(ref)
    if target is None:
        return None
    pid, start_time, pgid = target
    return (pid, pgid) if leader_alive(pid, start_time) else None


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        raise DriverError(f"process group {pgid} is gone") from None
    except PermissionError as exc:
        raise DriverError(f"not permitted to signal process group {pgid}: {exc}") from None


def _wait_state(pid: int, wanted_stopped: bool) -> None:
    """Wait until the leader is (or is no longer) stopped by a job-control signal."""
    deadline = time.monotonic() + _STATE_WAIT
    while time.monotonic() < deadline:
        state = process_state(pid)
        if state is None or (state in ("T", "t")) == wanted_stopped:
            return
        time.sleep(_POLL)
    verb = "stop" if wanted_stopped else "resume"
    raise DriverError(f"process {pid} did not {verb} within {_STATE_WAIT:g}s", retryable=True)


def run_process_operation(
    driver: ProcessDriver,
    ref: ResourceRef,
    request: NodeRequest,
    operation: str,
    params: Mapping[str, object],
) -> CreatedResource:
    """Carry out one operation; the resource afterwards (a new one after reboot or start).

    The parameters were validated by the API and the engine (which know whether the
    operator allows SIGKILL and SIGSTOP), so any signal name given here is sent.
    """
    physical_id = ref.physical_id or ""
    if operation == "reboot":
        _resume_if_paused(ref)
        rebooted = driver.reboot(ref, request)
        return CreatedResource(rebooted.physical_id, {**rebooted.data, "process_state": RUNNING})
    if operation == "stop":
        driver.delete(ref)
        return CreatedResource(physical_id, {"process_state": STOPPED})
    if operation == "start":
        if _alive_target(ref) is not None:
            # Already running (e.g. a cluster-wide start over mixed members): nothing to do.
            return CreatedResource(physical_id, {"process_state": RUNNING})
        created = driver.create(request)
        return CreatedResource(created.physical_id, {**created.data, "process_state": RUNNING})
    target = _alive_target(ref)
    if target is None:
        raise DriverError(f"the node's process ({physical_id or 'none'}) is not running")
    pid, pgid = target
    if operation == "signal":
        sig = signal_number(params.get("signal"), allow_uncatchable=True)
        _signal_group(pgid, sig)
        return CreatedResource(physical_id, {"last_signal": sig.name})
    if operation == "pause":
        _signal_group(pgid, signal.SIGSTOP)
        _wait_state(pid, wanted_stopped=True)
        return CreatedResource(physical_id, {"process_state": PAUSED})
    if operation == "unpause":
        _signal_group(pgid, signal.SIGCONT)
        _wait_state(pid, wanted_stopped=False)
        return CreatedResource(physical_id, {"process_state": RUNNING})
    raise DriverError(f"unknown operation '{operation}'")


def _resume_if_paused(ref: ResourceRef) -> None:
    """A paused group would see the stop signal of a reboot only after stop_timeout."""
    target = _alive_target(ref)
    if target is not None:
        with contextlib.suppress(DriverError):
            _signal_group(target[1], signal.SIGCONT)


class ProcessOperationsMixin:
    """Operations and adoption of :class:`~herd.drivers.process.ProcessDriver`."""

    def run_operation(
        self, ref: ResourceRef, request: NodeRequest, operation: str, params: Mapping[str, object]
    ) -> CreatedResource:
        """Run a profile operation (see ``PROCESS_OPERATIONS``)."""
        return run_process_operation(cast("ProcessDriver", self), ref, request, operation, params)

    def adopt_preview(
        self, identity: str, overrides: Mapping[str, object] | None, snapshot: bool
    ) -> AdoptedResource:
        """Describe an existing process (``<pid>[:<start time>]``) as a node."""
        from herd.drivers.process_adopt import preview_process

        return preview_process(identity, overrides, snapshot)

    def claim(self, resource: AdoptedResource, node_id: str) -> None:
        """Nothing to record: an adopted process is known by its pid and start time."""
