"""What the ``process`` driver reads from ``/proc``, and its HTTP health probe.

Linux only: a process is known by its pid *and* its start time (clock ticks
since boot, field 22 of ``/proc/<pid>/stat``), so a reused pid is never taken
for the process it replaced.
"""

from __future__ import annotations

import os
import signal
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """What ``/proc/<pid>/stat`` says about a process."""

    pid: int
    pgid: int
    start_time: int
    zombie: bool


def read_proc(pid: int) -> ProcInfo | None:
    """Read a process's group, start time and zombie state; None when it does not exist."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = raw[raw.rindex(b")") + 2 :].split()
    return ProcInfo(pid, int(fields[2]), int(fields[19]), fields[0] in (b"Z", b"X"))


def herd_environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if item.startswith(b"HERD_"))
    return {key.decode(): value.decode(errors="replace") for key, value in pairs}


def all_pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException):
        exc = exc.reason
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(exc, ConnectionResetError):
        return "connection reset"
    return str(exc) or type(exc).__name__


def probe_health(url: str, timeout: float) -> str | None:
    """GET ``url``; None when it answers 2xx, else the reason it failed."""
    if not url.lower().startswith(("http://", "https://")):
        return "only http and https health URLs are called"  # urllib would open file:// too
    # Proxies from the environment must not intercept loopback health checks.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        exc.close()
        return f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return describe_error(exc)
    return None if 200 <= status < 300 else f"HTTP {status}"


def log_tail(path: Path, limit: int = 2000) -> str:
    """The last ``limit`` bytes of a node's log, as text ("" when unreadable)."""
    try:
        with path.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - limit))
            return log.read().decode(errors="replace").strip()
    except OSError:
        return ""
