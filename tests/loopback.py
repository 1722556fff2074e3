"""A stand-in HTTP server on 127.0.0.1 for unit tests, started and stopped in one place.

Used where the real service is outside the unit under test: the trust code
(``api/trusts.py``, ``drivers/nova/trusts.py``) talks to Keystone, and a unit test needs
Keystone's exact answers (a refused trust, a 404) on demand. That is a unit boundary, not
a mock of herd: the real Keystone makes, reuses and refuses trusts in tests/e2e
(``test_nova_trusts.py``). The server listens on a free port chosen at run time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) on a thread; yield the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def answer_json(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
    """Answer the request ``handler`` is serving with ``body`` as JSON."""
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
