"""Starting a node process: the port it is given and when it counts as started.

A process with a health URL has started once the URL answers 2xx; one without
has started once it survives a short grace period. Ports are picked by binding
port 0 on the loopback and remembering the last few hundred handed out, so two
nodes started at once are not given the same port between bind and spawn.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque

from herd.drivers.procfs import probe_health, read_proc

POLL_INTERVAL = 0.05
#: the reason ``await_start`` gives for a process that ended; compared by identity
EXITED = "exited"


def await_start(pid: int, url: str | None, limit: float, grace: float) -> str | None:
    """Wait until the process counts as started; the reason when it does not."""
    deadline = time.monotonic() + (limit if url else grace)
    reason = "no answer yet"
    while True:
        info = read_proc(pid)
        if info is None or info.zombie:
            return EXITED
        remaining = deadline - time.monotonic()
        if url is not None:
            failure = probe_health(url, max(0.1, min(1.0, remaining)))
            if failure is None:
                return None
            reason = failure
        if time.monotonic() >= deadline:
            if url is None:
                return None
            return f"health check {url} did not answer 2xx within {limit:g}s: {reason}"
        time.sleep(min(POLL_INTERVAL, max(0.0, remaining)))


class PortPicker:
    """Free loopback ports, none handed out twice among the last 512."""

    def __init__(self) -> None:
        self._recent: deque[int] = deque(maxlen=512)
        self._lock = threading.Lock()

    def pick(self) -> int:
        with self._lock:
            for _ in range(32):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                    sock.bind(("127.0.0.1", 0))
                    port = int(sock.getsockname()[1])
                if port not in self._recent:
                    break
            self._recent.append(port)
            return port
