"""What bench/scale.py reads besides the load: ``herd engine`` processes and their /metrics,
CPU time from ``/proc``, and PostgreSQL's sessions (``pg_stat_activity``)."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psycopg
from prometheus_client.parser import text_string_to_metric_families

from common import HERD, free_port

TICKS = os.sysconf("SC_CLK_TCK")


class Engine:
    """``herd engine`` on the shared database, its /metrics on a free port."""

    def __init__(self, name: str, data_dir: Path, db_url: str, env: dict[str, str]) -> None:
        self.metrics_port = free_port()
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - open for the engine's life
            prefix=f"herd-bench-scale-{name}-", suffix=".log", delete=False
        )
        self.process = subprocess.Popen(
            [
                HERD,
                "engine",
                "--data-dir",
                str(data_dir),
                "--db-url",
                db_url,
                "--metrics-port",
                str(self.metrics_port),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,
        )

    def wait_running(self, timeout: float = 120.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"engine exited: {Path(self.log.name).read_text()[-2000:]}")
            if b"running on" in Path(self.log.name).read_bytes():
                return
            time.sleep(0.1)
        raise RuntimeError("engine did not start")

    def metrics(self) -> dict[str, float]:
        text = httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=30).text
        return flat_metrics(text)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        Path(self.log.name).unlink(missing_ok=True)


def flat_metrics(text: str) -> dict[str, float]:
    """The samples bench/scale.py uses, as ``name{label}`` -> value."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("herd_engine_coordination_seconds_"):
                step = sample.labels.get("step", "")
                if sample.name.endswith(("_sum", "_count")):
                    out[f"{sample.name}{{{step}}}"] = sample.value
            elif sample.name == "herd_actions_total":
                out["actions"] = out.get("actions", 0.0) + sample.value
    return out


def cpu_seconds(pid: int, *, with_children: bool = False) -> float:
    """utime + stime of ``pid`` (and of its live children, and the reaped ones, if asked)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    own = int(fields[11]) + int(fields[12])
    if not with_children:
        return own / TICKS
    reaped = int(fields[13]) + int(fields[14])
    return (own + reaped) / TICKS + sum(cpu_seconds(child) for child in children_of(pid))


def children_of(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def postmaster_pid(db_url: str) -> int | None:
    """The PostgreSQL server's main process, when it runs on this machine."""
    from tests.postgres import psycopg_url

    try:
        with psycopg.connect(psycopg_url(db_url), autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        first = (Path(str(row[0])) / "postmaster.pid").read_text().split()[0] if row else ""
        return int(first)
    except (OSError, ValueError, psycopg.Error):
        return None


class WaitSampler:
    """Samples ``pg_stat_activity`` ten times a second: how many sessions of the database
    were running a statement, waiting on a lock (and which), or idle inside a transaction
    (waiting on their engine or API process: its CPU, its GIL)."""

    def __init__(self, db_url: str) -> None:
        self.db_url = db_url
        self.samples = 0
        self.counts: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        from tests.postgres import psycopg_url

        query = (
            "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND state <> 'idle'"
        )
        with psycopg.connect(psycopg_url(self.db_url), autocommit=True) as conn:
            while not self.stop.wait(0.1):
                self.samples += 1
                for state, kind, event in conn.execute(query).fetchall():
                    if state == "active":
                        key = f"{kind}:{event}" if kind in ("Lock", "LWLock", "IO") else "running"
                    else:
                        key = "idle in transaction"
                    self.counts[key] = self.counts.get(key, 0) + 1

    def averages(self) -> dict[str, float]:
        self.stop.set()
        self.thread.join(5)
        return {k: v / max(self.samples, 1) for k, v in self.counts.items()}
