"""Finding and signalling a node's process group without ever touching a stranger.

A node process is known by its pid *and* its start time; these helpers only act
on a group while its leader exists with the recorded start time, and find the
members a dead leader left behind by their environment tags.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from herd.drivers.base import ResourceRef
from herd.drivers.procfs import all_pids, herd_environ, read_proc


def leader_present(pid: int, start_time: int) -> bool:
    """The leader exists, alive or as a zombie, so its pid and group id cannot be reused."""
    info = read_proc(pid)
    return info is not None and info.start_time == start_time


def leader_alive(pid: int, start_time: int) -> bool:
    """The leader runs (exists with the recorded start time and is not a zombie)."""
    info = read_proc(pid)
    return info is not None and info.start_time == start_time and not info.zombie


def live_members(
    leader: int, start_time: int, pgid: int, node_id: str, owner_marker: str
) -> list[int]:
    """Running processes of the node's group other than its leader.

    Members are recognised by the node's environment tags and must have started after
    the leader, so a foreign process that reused the group id is never included.
    """
    members = []
    for pid in all_pids():
        info = read_proc(pid)
        if (
            info is None
            or pid == leader
            or info.pgid != pgid
            or info.zombie
            or info.start_time < start_time
        ):
            continue
        env = herd_environ(pid)
        if env.get("HERD_NODE_ID") == node_id and env.get("HERD_OWNER") == owner_marker:
            members.append(pid)
    return members


def process_target(ref: ResourceRef) -> tuple[int, int, int] | None:
    """(pid, start_time, pgid) of a node's process, from its physical id or its data."""
    try:
        # The physical id is the node's identity; the data is a fallback for older rows.
        if ref.physical_id:
            pid_text, _, start_text = ref.physical_id.partition(":")
            pid, start_time = int(pid_text), int(start_text)
        elif "pid" in ref.data and "start_time" in ref.data:
            pid, start_time = int(ref.data["pid"]), int(ref.data["start_time"])
        else:
            return None
        # Nodes lead their own session, so the group id is the pid; a stored pgid is not trusted.
        return pid, start_time, pid
    except (TypeError, ValueError):
        return None


def send_signal(kill: Callable[[int, int], None], target: int, sig: int) -> None:
    """Send ``sig``; a target that exited meanwhile is the outcome we wanted anyway."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        kill(target, sig)


def recorded_leader(
    state_path: Path, node_id: str, owner_marker: str
) -> tuple[int, int, dict[str, object]] | None:
    """(pid, start_time, state) of the live process a node's state file names, if any.

    The process must still run with the recorded start time and carry the node's and the
    owner's tags, so a reused pid is never taken for the node's process.
    """
    try:
        data = json.loads(state_path.read_text())
        pid, start_time = int(data["pid"]), int(data["start_time"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not leader_alive(pid, start_time):
        return None
    env = herd_environ(pid)
    if env.get("HERD_NODE_ID") != node_id or env.get("HERD_OWNER") != owner_marker:
        return None
    return pid, start_time, data
