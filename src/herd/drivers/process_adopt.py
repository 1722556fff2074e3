"""Adopting an existing OS process as a ``herd.process`` node.

The identity is ``<pid>`` or ``<pid>:<start time>`` (clock ticks since boot, as
in a node's physical id); with a start time, a pid that now belongs to another
process is refused. The generated profile records the process's command line and
working directory (and, with ``snapshot``, its environment), so recovering or
rebooting the node runs the same command.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from herd.drivers.adoption import AdoptedResource, merge_overrides
from herd.drivers.process_spec import validate_process_properties
from herd.drivers.procfs import herd_environ, read_proc
from herd.errors import Conflict, InvalidRequest
from herd.json_types import str_or_none

_IDENTITY = re.compile(r"^\s*(\d+)(?::(\d+))?\s*$")


def _environment(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {
        key.decode(errors="replace"): value.decode(errors="replace")
        for key, value in pairs
        if key and not key.startswith(b"HERD_")
    }


def preview_process(
    identity: str, overrides: Mapping[str, object] | None, snapshot: bool
) -> AdoptedResource:
    """Describe process ``identity`` as a node; raise with the reason it cannot be adopted."""
    match = _IDENTITY.match(identity)
    if match is None:
        raise InvalidRequest(
            f"The identity '{identity}' is not a process: expected '<pid>' or "
            "'<pid>:<start time>'.",
            field="identity",
        )
    pid = int(match.group(1))
    info = read_proc(pid)
    if info is None or info.zombie:
        raise InvalidRequest(f"The specified process '{pid}' could not be found.", field="identity")
    if match.group(2) is not None and int(match.group(2)) != info.start_time:
        raise InvalidRequest(
            f"Process {pid} started at tick {info.start_time}, not {match.group(2)}: the pid now "
            "belongs to another process.",
            field="identity",
        )
    if pid == os.getpid():
        raise InvalidRequest("herd cannot adopt its own process.", field="identity")
    if info.pgid != pid:
        raise InvalidRequest(
            f"Process {pid} does not lead its own process group (its group is {info.pgid}): "
            "herd signals a node's whole process group, so only a group leader can be "
            "adopted (start it with setsid).",
            field="identity",
        )
    owner = herd_environ(pid).get("HERD_NODE_ID")
    if owner:
        raise Conflict(f"Process {pid} is already the process of herd node '{owner}'.")
    try:
        argv = [
            part.decode(errors="replace")
            for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        ]
        cwd: str | None = os.readlink(f"/proc/{pid}/cwd")
    except OSError as exc:
        raise InvalidRequest(f"Cannot read process {pid}: {exc}", field="identity") from None
    while argv and argv[-1] == "":
        argv.pop()
    if not argv:
        raise InvalidRequest(
            f"Process {pid} has no command line (a kernel thread?).", field="identity"
        )
    generated: dict[str, object] = {"command": argv[0], "args": argv[1:], "cwd": cwd}
    if snapshot:
        generated["env"] = _environment(pid)
    properties = validate_process_properties(merge_overrides(generated, overrides))
    url = str_or_none(properties, "health_url")
    data: dict[str, object] = {
        "pid": pid,
        "pgid": pid,
        "start_time": info.start_time,
        "port": None,
        "log_path": None,
        # A URL with placeholders cannot be expanded for a process herd did not start.
        "health_url": url if url and "{" not in url else None,
        "adopted": True,
    }
    return AdoptedResource(f"{pid}:{info.start_time}", properties, data)
