"""The bed's processes: each started in its own session with its output in a log file.

A process group per service lets ``stop`` end the service and every child it forked
(gunicorn workers, RabbitMQ's Erlang VM), and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx


class BedError(RuntimeError):
    """A part of the bed did not start; the message names it and ends with its log's tail."""


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Service:
    """One process of the bed."""

    name: str
    argv: Sequence[str]
    log: Path
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, **self.env}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                list(self.argv),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=self.cwd,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def failure(self, what: str) -> BedError:
        return BedError(f"{self.name}: {what}; last lines of {self.log}:\n{tail(self.log)}")

    def wait(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait until ``ready()``; fail with the log's tail if the process dies or time runs out."""
        end = time.monotonic() + timeout
        while not ready():
            if not self.alive():
                raise self.failure(f"exited ({self.proc and self.proc.returncode}) before {what}")
            if time.monotonic() > end:
                raise self.failure(f"not {what} within {timeout:.0f} s")
            time.sleep(0.2)

    def wait_port(self, port: int, timeout: float = 120.0) -> None:
        self.wait(lambda: port_open(port), timeout, f"listening on port {port}")

    def wait_http(self, url: str, timeout: float = 120.0) -> None:
        def answers() -> bool:
            try:
                return httpx.get(url, timeout=5).status_code < 500
            except httpx.HTTPError:
                return False

        self.wait(answers, timeout, f"answering {url}")

    def stop(self, timeout: float = 15.0) -> None:
        if self.proc is None:
            return
        stop_group(self.proc.pid, timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1)


def stop_group(pid: int, timeout: float = 15.0) -> None:
    """SIGTERM the process group led by ``pid``, then SIGKILL what is left after ``timeout``."""
    stop_groups([pid], timeout)


def _group_alive(pid: int) -> bool:
    # reap the leader if it is our child, so that a finished group disappears
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def stop_groups(pids: Sequence[int], grace: float) -> None:
    """SIGTERM every group at once, SIGKILL what is left after ``grace`` seconds.

    The bed is thrown away, so nothing needs a clean shutdown; Nova's services wait for
    their RPC servers for a long time on SIGTERM.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig)
        end = time.monotonic() + grace
        while time.monotonic() < end and any(_group_alive(pid) for pid in pids):
            time.sleep(0.1)


def run_checked(argv: Sequence[str], log: Path, env: Mapping[str, str], what: str) -> None:
    """Run a one-shot command (a db sync); fail with its output's tail."""
    with log.open("ab") as out:
        out.write(f"$ {' '.join(argv)}\n".encode())
        out.flush()
        code = subprocess.run(
            list(argv),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
            timeout=600,
            check=False,
        ).returncode
    if code != 0:
        raise BedError(f"{what} failed ({code}); last lines of {log}:\n{tail(log)}")
