"""A tiny HTTP server to run as a ``herd.process`` node in tests and demos.

``python -m herd.drivers.testserver --port N`` answers 200 on ``/`` and
``/health`` (a JSON body naming the node from its ``HERD_*`` environment) and
stops cleanly on SIGTERM or SIGINT. With ``--unhealthy-file PATH``, ``/health``
answers 503 while that file exists, so a test can make a live node unhealthy.
``POST /control/health`` with ``{"status": 500}`` makes ``/health`` answer that
status from then on (``{"status": 200}`` or ``null`` restores the normal answer).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType


class LoadGauge:
    """The load this server reports (one server per process), for Prometheus.

    ``GET /metrics`` serves it as the ``herd_testserver_load`` gauge in Prometheus' text
    format; ``PUT /control/load`` with ``{"load": 90}`` sets it (0 at start), so a test
    can make Prometheus alert on a member's load.
    """

    def __init__(self) -> None:
        self.value = 0.0

    def exposition(self) -> str:
        return (
            "# HELP herd_testserver_load Load reported by the test server "
            "(set with PUT /control/load).\n"
            "# TYPE herd_testserver_load gauge\n"
            f"herd_testserver_load {self.value:g}\n"
        )


LOAD = LoadGauge()


class _Handler(BaseHTTPRequestHandler):
    unhealthy_file: Path | None = None
    forced_health: dict[str, int] = {}  # replaced by one dict per server in main()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            self._metrics()
            return
        if path not in ("/", "/health"):
            self._answer(404, {"error": "not found"})
            return
        forced = self.forced_health.get("status")
        if path == "/health" and forced is not None:
            self._answer(forced, {"status": "forced", "code": forced})
            return
        if path == "/health" and self.unhealthy_file is not None and self.unhealthy_file.exists():
            self._answer(503, {"status": "unhealthy"})
            return
        node = {
            key[5:].lower(): value for key, value in os.environ.items() if key.startswith("HERD_")
        }
        self._answer(200, {"status": "ok", "pid": os.getpid(), "node": node})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/control/health":
            self._answer(404, {"error": "not found"})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            status = json.loads(self.rfile.read(length) or b"null")
            status = status.get("status") if isinstance(status, dict) else status
            if status is not None and not 200 <= int(status) <= 599:
                raise ValueError(status)
        except (ValueError, TypeError):
            self._answer(400, {"error": 'expected {"status": <200..599 or null>}'})
            return
        if status is None or int(status) == 200:
            self.forced_health.pop("status", None)
        else:
            self.forced_health["status"] = int(status)
        self._answer(200, {"health_status": self.forced_health.get("status", 200)})

    def _answer(self, status: int, body: dict[str, object]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        # Health probes every few hundred milliseconds would flood the node log.
        pass

    # -- load gauge for Prometheus ------------------------------------------------------

    def do_PUT(self) -> None:
        if self.path.split("?", 1)[0] != "/control/load":
            self._answer(404, {"error": "not found"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
            LOAD.value = float(body["load"] if isinstance(body, dict) else body)
        except (ValueError, TypeError, KeyError):
            self._answer(400, {"error": 'expected {"load": <number>}'})
            return
        self._answer(200, {"load": LOAD.value})

    def _metrics(self) -> None:
        payload = LOAD.exposition().encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGTERM or SIGINT; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m herd.drivers.testserver")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--unhealthy-file", type=Path, default=None)
    options = parser.parse_args(argv)

    handler = type(
        "Handler", (_Handler,), {"unhealthy_file": options.unhealthy_file, "forced_health": {}}
    )
    server = ThreadingHTTPServer((options.host, options.port), handler)
    server.daemon_threads = True

    # shutdown() blocks until serve_forever returns, so it cannot run in the signal
    # handler (this thread): it runs on its own thread, joined once serving has ended.
    stopper = threading.Thread(target=server.shutdown, name="testserver-stop", daemon=True)

    def stop(signum: int, frame: FrameType | None) -> None:
        if stopper.ident is None:  # a second signal finds the stop under way
            stopper.start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"testserver listening on {options.host}:{options.port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
        if stopper.ident is not None:
            stopper.join()
    print("testserver stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
