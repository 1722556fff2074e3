"""Start ``herd serve`` as a real OS process on a free port, and stop or kill it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
from tests.postgres import free_port

HERD = str(Path(sys.executable).parent / "herd")


class HerdServer:
    def __init__(
        self,
        data_dir: Path,
        port: int,
        db_url: str | None = None,
        *,
        command: list[str] | None = None,
        **env: str,
    ) -> None:
        """``herd serve`` (or ``command``, which takes the same options) on ``port``."""
        self.command = command or [HERD, "serve"]
        self.data_dir = data_dir
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.db_url = db_url
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.log = data_dir.parent / f"herd-serve-{port}.log"

    def start(self, timeout: float = 30.0) -> HerdServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [*self.command, "--port", str(self.port), "--data-dir", str(self.data_dir)]
        if self.db_url:
            args += ["--db-url", self.db_url]
        env = {
            **os.environ,
            "HERD_ENGINE_DEAD_AFTER": "3",
            "HERD_ENGINE_HEARTBEAT_INTERVAL": "0.5",
            **self.env,
        }
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        end = time.time() + timeout
        while time.time() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"herd serve exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"herd serve did not answer: {self.log.read_text()[-2000:]}")

    def kill9(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@contextmanager
def running_herd(
    data_dir: Path, env: Mapping[str, str], timeout: float = 180.0
) -> Iterator[HerdServer]:
    """``herd serve`` with ``env`` (e.g. a Keystone bed's ``herd_env()``) on a free port, its
    data in ``data_dir``, stopped on exit (the e2e modules' ``herd`` fixtures). ``timeout``:
    a busy machine beside Keystone and Heat beds; the default 30 s is for herd alone."""
    server = HerdServer(data_dir, free_port())
    server.env = dict(env)
    try:
        yield server.start(timeout=timeout)
    finally:
        server.stop()
