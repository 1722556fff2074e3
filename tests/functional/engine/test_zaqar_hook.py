"""A ``type: zaqar`` lifecycle hook posts to a Zaqar v2 queue endpoint over real HTTP."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.functional.engine.harness import running_engine

from herd.store.models import ActionRow
from herd.types import ActionName, ActionStatus


class ZaqarQueues:
    """Just enough of Zaqar's v2 message API: POST /v2/queues/<queue>/messages."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        queues = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                queues.posts.append((self.path, dict(self.headers), body))
                self.send_response(201)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"resources": ["/v2/queues/q/messages/1"]}')

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_zaqar_hook_posts_to_the_queue_and_waits(tmp_path: Path) -> None:
    zaqar = ZaqarQueues()
    try:
        with running_engine(tmp_path / "data", zaqar_url=zaqar.url) as harness:
            cluster = harness.cluster(2)
            harness.attach(
                cluster,
                {
                    "type": "senlin.policy.deletion",
                    "version": "1.1",
                    "properties": {
                        "hooks": {"type": "zaqar", "params": {"queue": "victims"}, "timeout": 30}
                    },
                },
            )
            action_id = harness.submit(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1})
            deadline = time.time() + 10
            while not zaqar.posts and time.time() < deadline:
                time.sleep(0.02)
            path, headers, body = zaqar.posts[0]
            assert path == "/v2/queues/victims/messages"
            assert headers.get("Client-ID")
            (message,) = body["messages"]
            assert message["ttl"] == 300
            token = message["body"]["lifecycle_action_token"]
            assert message["body"]["lifecycle_transition_type"] == "termination"
            assert message["body"]["cluster_id"] == cluster
            with harness.db.write() as session:
                child = session.get(ActionRow, token)
                assert child is not None
                assert child.status == ActionStatus.WAITING_LIFECYCLE_COMPLETION
                child.status = ActionStatus.READY
            action = harness.wait(action_id)
            assert action.status == "SUCCEEDED", action.status_reason
            assert action.outputs["nodes_removed"] == [message["body"]["node_id"]]
    finally:
        zaqar.server.shutdown()


def test_no_zaqar_configured_is_reported_as_undelivered_not_as_a_timeout(tmp_path: Path) -> None:
    with running_engine(tmp_path / "data") as harness:
        cluster = harness.cluster(2)
        harness.attach(
            cluster,
            {
                "type": "senlin.policy.deletion",
                "version": "1.1",
                "properties": {
                    "hooks": {"type": "zaqar", "params": {"queue": "victims"}, "timeout": 3600}
                },
            },
        )
        action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1})
        assert action.status == "SUCCEEDED", action.status_reason
        (hook,) = action.outputs["lifecycle_hooks"].values()
        assert hook["delivered"] is False
        assert "no Zaqar endpoint is configured" in hook["error"]
        assert hook["result"] == "UNDELIVERED_CONTINUE"
