"""A webhook sink on 127.0.0.1 for tests that need a real HTTP receiver (lifecycle hooks)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """A webhook sink on 127.0.0.1 that records every JSON message it is sent."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                owner.messages.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, count: int, timeout: float = 10.0) -> dict[str, str]:
        """node id -> token, once ``count`` messages arrived."""
        end = time.monotonic() + timeout
        while len(self.messages) < count:
            assert time.monotonic() < end, self.messages
            time.sleep(0.02)
        return {m["node_id"]: m["lifecycle_action_token"] for m in self.messages}
