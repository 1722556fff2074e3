"""Shared pieces of herd's benchmarks: servers on free ports, a load generator, tables.

Load comes from ``wrk`` (Debian package ``wrk``) in a second process when it is
installed, and otherwise from an asyncio httpx client; both endpoints of a
comparison are always measured with the same generator in the same run.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

HERD = str(Path(sys.executable).parent / "herd")
console = Console()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, timeout: float = 30.0) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


class Server:
    """A process serving HTTP on 127.0.0.1, stopped with SIGTERM."""

    def __init__(
        self,
        args: list[str],
        port: int,
        env: dict[str, str] | None = None,
        ready_path: str = "/",
        ready_timeout: float = 30.0,
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - kept open for the server's life
            prefix="herd-bench-", suffix=".log", delete=False
        )
        self.process = subprocess.Popen(
            args,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        wait_http(self.url + ready_path, ready_timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def herd_server(data_dir: Path, **env: str) -> Server:
    port = free_port()
    # Benches build clusters of up to a million members, past the default cap (1000).
    env = {"HERD_MAX_NODES_PER_CLUSTER": "1000000", **env}
    return Server(
        [HERD, "serve", "--port", str(port), "--data-dir", str(data_dir)],
        port,
        env=env,
        ready_path="/healthz",
    )


def bare_fastapi_server(body: str = '{"ok": true}') -> Server:
    """A FastAPI app with one endpoint, under the same uvicorn, as the peer of a comparison."""
    port = free_port()
    code = (
        "import sys, uvicorn\n"
        "from fastapi import FastAPI\n"
        "app = FastAPI()\n"
        f"BODY = {body!r}\n"
        "@app.get('/bare/{item}')\n"
        "def bare(item: str) -> dict[str, str]:\n"
        "    return {'id': item, 'body': BODY}\n"
        "@app.patch('/bare/{item}')\n"
        "def bare_patch(item: str, payload: dict[str, object]) -> dict[str, object]:\n"
        "    return {'id': item, 'payload': payload}\n"
        f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='warning')\n"
    )
    return Server([sys.executable, "-c", code], port, ready_path="/bare/x")


@dataclass
class LoadResult:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def _wrk(
    url: str,
    connections: int,
    seconds: float,
    method: str,
    body: str | None,
    lua: str | None = None,
) -> LoadResult:
    """One wrk run; ``lua`` is a script of its own (it then sets method, body and paths)."""
    script = None
    threads = str(min(2, connections))
    args = ["wrk", "-t", threads, "-c", str(connections), "-d", f"{seconds:g}s", "--latency"]
    if lua is not None:
        args += ["-s", lua]
    elif method != "GET":
        script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)  # noqa: SIM115
        escaped = (body or "").replace("\\", "\\\\").replace('"', '\\"')
        script.write(
            f'wrk.method = "{method}"\nwrk.body = "{escaped}"\n'
            'wrk.headers["Content-Type"] = "application/json"\n'
        )
        script.close()
        args += ["-s", script.name]
    out = subprocess.run([*args, url], capture_output=True, text=True, check=True).stdout

    def latency(label: str) -> float:
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)", out, re.M)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    errors_match = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    errors = int(errors_match.group(1)) if errors_match else 0
    if socket_errors:
        errors += sum(int(g) for g in socket_errors.groups())
    return LoadResult(requests, seconds, latency("50"), latency("99"), errors)


async def _httpx_load(
    url: str, connections: int, seconds: float, method: str, body: str | None
) -> LoadResult:
    latencies: list[float] = []
    errors = 0
    end = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < end:
                start = time.perf_counter()
                response = await client.request(
                    method, url, content=body, headers={"Content-Type": "application/json"}
                )
                latencies.append(time.perf_counter() - start)
                errors += response.status_code >= 300

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    return LoadResult(len(latencies), elapsed, pick(0.5), pick(0.99), errors)


def load(
    url: str,
    *,
    connections: int = 32,
    seconds: float = 5.0,
    method: str = "GET",
    body: str | None = None,
) -> tuple[LoadResult, str]:
    """Hammer ``url``; returns the result and the name of the generator used."""
    if shutil.which("wrk"):
        return _wrk(url, connections, seconds, method, body), "wrk"
    return asyncio.run(_httpx_load(url, connections, seconds, method, body)), "httpx"


def table(title: str, columns: list[str], rows: list[list[Any]]) -> None:
    out = Table(title=title)
    for column in columns:
        out.add_column(column, justify="right" if column[:1].islower() is False else "left")
    for row in rows:
        out.add_row(*[f"{v:,.1f}" if isinstance(v, float) else str(v) for v in row])
    console.print(out)


API_HEADERS = {"OpenStack-API-Version": "clustering 1.14"}


def wait_action(client: httpx.Client, location: str, timeout: float = 1800) -> dict[str, Any]:
    """Poll an action (the Location of a 202) until it ends; return its body."""
    end = time.time() + timeout
    while time.time() < end:
        action = client.get(location).json()["action"]
        if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return dict(action)
        time.sleep(0.2)
    raise RuntimeError(f"{location} did not finish")


def sim_cluster(client: httpx.Client, size: int, name: str = "bench") -> str:
    """Create a ``herd.sim`` profile and a cluster of ``size`` nodes; return the cluster id."""
    spec = {"type": "herd.sim", "version": "1.0", "properties": {}}
    profile = client.post("/v1/profiles", json={"profile": {"name": name, "spec": spec}}).json()
    created = client.post(
        "/v1/clusters",
        json={
            "cluster": {
                "name": name,
                "profile_id": profile["profile"]["id"],
                "desired_capacity": size,
            }
        },
    )
    action = wait_action(client, created.headers["Location"])
    if action["status"] != "SUCCEEDED":
        raise RuntimeError(f"cluster create failed: {action['status_reason']}")
    return str(created.json()["cluster"]["id"])
