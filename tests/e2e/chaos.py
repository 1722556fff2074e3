"""Pieces of the chaos test: ``herd engine`` processes to kill, and the node processes on the host.

An :class:`EngineProcess` is ``herd engine`` as a real OS process (its own session, so its
node processes outlive it as they would a crash), killed with SIGKILL and started again on the
same data directory and database. :func:`node_process_table` lists every live process herd
started for a data directory, with the node id of its ``HERD_*`` environment, so a node id
that has two processes shows as two entries.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.server import HERD

#: engine timings short enough for take-over within a test, as tests/e2e/server.py uses
ENGINE_ENV = {"HERD_ENGINE_DEAD_AFTER": "3", "HERD_ENGINE_HEARTBEAT_INTERVAL": "0.5"}


class EngineProcess:
    """``herd engine --data-dir D --db-url U`` as a real process, started and killed at will."""

    def __init__(self, name: str, data_dir: Path, db_url: str, log_dir: Path) -> None:
        self.name = name
        self.data_dir = data_dir
        self.db_url = db_url
        self.log = log_dir / f"engine-{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 60.0) -> None:
        """Start the engine and wait until it says it runs (take-over and reconciliation done)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        offset = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [HERD, "engine", "--data-dir", str(self.data_dir), "--db-url", self.db_url],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **ENGINE_ENV},
                start_new_session=True,
            )
        self.starts += 1
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"engine {self.name} exited: {self.tail()}")
            with open(self.log, "rb") as log:
                log.seek(offset)
                if b"running on" in log.read():
                    return
            time.sleep(0.05)
        raise RuntimeError(f"engine {self.name} did not start: {self.tail()}")

    def kill9(self) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.running:
            assert self.process is not None
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def tail(self, limit: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-limit:]
        except OSError:
            return ""


@dataclass(frozen=True)
class NodeProcess:
    node_id: str
    pid: int
    start_time: int  # clock ticks since boot, as in the process driver's physical ids

    @property
    def physical_id(self) -> str:
        return f"{self.pid}:{self.start_time}"


def node_process_table(data_dir: Path) -> list[NodeProcess]:
    """Every live (not zombie) process group leader herd started for ``data_dir``."""
    marker = str(data_dir.resolve())
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            state, pgid, start_time = fields[0], int(fields[2]), int(fields[19])
            if state == "Z" or pgid != int(proc.name):
                continue
            env = dict(
                item.split("=", 1)
                for item in (proc / "environ").read_bytes().decode(errors="replace").split("\0")
                if "=" in item
            )
            if marker in env.get("HERD_OWNER", "") and "HERD_NODE_ID" in env:
                found.append(NodeProcess(env["HERD_NODE_ID"], int(proc.name), start_time))
    return found
