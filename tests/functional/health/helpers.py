"""Health policy specs and waits shared by the health manager tests."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from tests.functional.engine.harness import Harness

from herd.drivers.sim import SimDriver
from herd.store.models import ActionRow, NodeCheckRow


def health_spec(
    modes: list[dict[str, Any]],
    *,
    interval: int = 1,
    conditional: str = "ANY_FAILED",
    action: str = "RECREATE",
    **recovery: Any,
) -> dict[str, Any]:
    return {
        "type": "senlin.policy.health",
        "version": "1.1",
        "properties": {
            "detection": {
                "detection_modes": modes,
                "interval": interval,
                "node_update_timeout": 0,
                "recovery_conditional": conditional,
            },
            "recovery": {"actions": [{"name": action}], **recovery},
        },
    }


def sim(h: Harness) -> SimDriver:
    driver = h.engine.ctx.drivers.get("herd.sim-1.0")
    assert isinstance(driver, SimDriver)
    return driver


def check_row(h: Harness, node_id: str) -> NodeCheckRow | None:
    with h.db.read() as session:
        return session.get(NodeCheckRow, node_id)


def recover_actions(h: Harness, cluster_id: str) -> list[ActionRow]:
    with h.db.read() as session:
        query = (
            select(ActionRow)
            .where(ActionRow.target == cluster_id, ActionRow.action == "CLUSTER_RECOVER")
            .order_by(ActionRow.created_at)
        )
        return list(session.scalars(query).all())


def replaced(h: Harness, node_id: str, old_physical_id: str | None) -> bool:
    node = h.node(node_id)
    return node is not None and node.status == "ACTIVE" and node.physical_id != old_physical_id


class NodeHealthServer:
    """A real HTTP server answering ``/health/<nodename>``: 500 for names in ``failing``,
    after ``delay`` seconds."""

    def __init__(self) -> None:
        import threading
        import time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        failing: set[str] = set()
        self.failing = failing
        #: seconds each answer waits (a slow probe), and when each failing answer was sent
        self.delay = 0.0
        self.failed_at: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                name = self.path.rsplit("/", 1)[-1]
                if server.delay:
                    time.sleep(server.delay)
                if name in failing:
                    server.failed_at.append(time.time())
                self.send_response(500 if name in failing else 200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/health/{{nodename}}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
