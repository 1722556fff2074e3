"""A Neutron that has nothing: every collection is empty, every single resource is missing.

The bed serves it only where the real Neutron is not installed (``make neutron-bed``;
tests/nova_bed/neutron.py): the tests that need a network then skip, saying so.

Run as a script (``python neutron_stub.py PORT``, standard library only) by the Nova bed.
Nova boots with ``networks='none'`` never ask Neutron, but deleting a server lists its ports
and floating IPs; answering empty lists is all Nova needs. This is a stand-in at a boundary the
bed does not run (a real Neutron with a real dataplane), not a fake of what herd tests.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _send(self, status: int, body: object | None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        parts = [p for p in path.split("/") if p]
        if not parts:
            host = self.headers.get("Host", "127.0.0.1")
            link = {"href": f"http://{host}/v2.0/", "rel": "self"}
            version = {"id": "v2.0", "status": "CURRENT", "links": [link]}
            self._send(200, {"versions": [version]})
        elif parts == ["v2.0"]:
            self._send(200, {"resources": []})
        elif len(parts) == 2:
            # /v2.0/ports, /v2.0/security-groups.json ... -> {"ports": []}
            collection = parts[1].removesuffix(".json").replace("-", "_")
            self._send(200, {collection: []})
        else:
            self._not_found()

    def _not_found(self) -> None:
        error = {"type": "NotFound", "message": f"{self.path} not found", "detail": ""}
        self._send(404, {"NeutronError": error})

    do_DELETE = _not_found
    do_PUT = _not_found

    def do_POST(self) -> None:
        self._send(403, {"NeutronError": {"type": "Forbidden", "message": "no Neutron here"}})

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"neutron-stub: {format % args}\n")


class Server(ThreadingHTTPServer):
    # socketserver's backlog of 5 drops connections when every xdist worker's herd asks at
    # once (a dropped SYN looks like Neutron being down to keystoneauth's discovery)
    request_queue_size = 256
    daemon_threads = True


def main() -> None:
    server = Server(("127.0.0.1", int(sys.argv[1])), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
