"""NODE_STATUS_POLL_URL against a real HTTP(S) server on 127.0.0.1 (no mocks)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from tests.conftest import free_port

from herd.engine.health.detection import (
    PollUrlClients,
    ProbeTarget,
    expand_poll_url,
    probe_poll_url,
)
from herd.engine.outbound import OutboundGuard
from herd.policies.health_rules import ModeAnswer
from herd.policies.health_settings import DetectionMode
from herd.types import DetectionType


@dataclass
class Script:
    """What the server answers, in order (the last answer repeats), and what it was asked."""

    answers: list[tuple[int, str]] = field(default_factory=lambda: [(200, "ok")])
    paths: list[str] = field(default_factory=list)


class Server:
    def __init__(self, script: Script, tls: tuple[Path, Path] | None = None) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                script.paths.append(self.path)
                status, body = script.answers[0]
                if len(script.answers) > 1:
                    script.answers.pop(0)
                payload = body.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def clients() -> Iterator[PollUrlClients]:
    # These servers listen on loopback, which the outbound guard refuses unless allowed.
    found = PollUrlClients(OutboundGuard(["127.0.0.0/8"]))
    yield found
    found.close()


def _mode(
    url: str,
    *,
    limit: int = 3,
    interval: float = 0.05,
    poll_url_ssl_verify: bool = True,
    poll_url_conn_error_as_unhealthy: bool = True,
    poll_url_healthy_response: str = "",
) -> DetectionMode:
    return DetectionMode(
        DetectionType.NODE_STATUS_POLL_URL,
        poll_url=url,
        poll_url_ssl_verify=poll_url_ssl_verify,
        poll_url_conn_error_as_unhealthy=poll_url_conn_error_as_unhealthy,
        poll_url_healthy_response=poll_url_healthy_response,
        poll_url_retry_limit=limit,
        poll_url_retry_interval=interval,
    )


TARGET = ProbeTarget("n-1", "web-7", 7, "c-1", "4242:99", {"port": 8080})


def _probe(
    clients: PollUrlClients, mode: DetectionMode, target: ProbeTarget = TARGET
) -> ModeAnswer:
    return probe_poll_url(clients, mode, target, threading.Event())


def test_placeholders() -> None:
    template = "http://h/{nodename}/{node_id}/{index}/{cluster_id}/{physical_id}:{port}/{other}"
    assert expand_poll_url(template, TARGET) == "http://h/web-7/n-1/7/c-1/4242:99:8080/{other}"
    with pytest.raises(ValueError, match="no port"):
        expand_poll_url("http://h:{port}", ProbeTarget("n", "x", 1, None, None, {}))


def test_healthy_answer_and_placeholder_in_the_path(clients: PollUrlClients) -> None:
    script = Script()
    server = Server(script)
    try:
        answer = _probe(clients, _mode(server.url + "/health/{nodename}"))
        assert answer.healthy and answer.mode is DetectionType.NODE_STATUS_POLL_URL
        assert script.paths == ["/health/web-7"]
    finally:
        server.close()


def test_500_is_unhealthy_after_the_retries(clients: PollUrlClients) -> None:
    script = Script([(500, "boom")])
    server = Server(script)
    try:
        started = time.monotonic()
        answer = _probe(clients, _mode(server.url + "/h", limit=3, interval=0.2))
        assert not answer.healthy
        assert answer.reason == f"{server.url}/h failed: poll URL answered HTTP 500 (3 attempts)"
        assert len(script.paths) == 3  # poll_url_retry_limit attempts in all
        assert time.monotonic() - started >= 0.4  # two waits of poll_url_retry_interval
    finally:
        server.close()


def test_a_retry_that_passes_makes_the_node_healthy(clients: PollUrlClients) -> None:
    script = Script([(503, ""), (503, ""), (200, "ok")])
    server = Server(script)
    try:
        assert _probe(clients, _mode(server.url, limit=3)).healthy
        assert len(script.paths) == 3
    finally:
        server.close()


def test_healthy_response_pattern(clients: PollUrlClients) -> None:
    script = Script([(200, '{"status": "degraded"}')])
    server = Server(script)
    try:
        unhealthy = _probe(clients, _mode(server.url, limit=1, poll_url_healthy_response="ok"))
        assert not unhealthy.healthy
        assert "did not match 'ok'" in unhealthy.reason
        assert "degraded" not in unhealthy.reason  # the body is never shown to the tenant
        healthy = _probe(
            clients, _mode(server.url, limit=1, poll_url_healthy_response=r"\"status\": \"de")
        )
        assert healthy.healthy
    finally:
        server.close()


def test_connection_errors_follow_conn_error_as_unhealthy(clients: PollUrlClients) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/health"
    failed = _probe(clients, _mode(nowhere, limit=2))
    assert not failed.healthy and "ConnectError" in failed.reason
    ignored = _probe(clients, _mode(nowhere, limit=2, poll_url_conn_error_as_unhealthy=False))
    assert ignored.healthy and "connection error ignored" in ignored.reason


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl not installed")
    base = tmp_path_factory.mktemp("tls")
    cert, key = base / "cert.pem", base / "key.pem"
    command = [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        command,
        check=True,
        capture_output=True,
    )
    return cert, key


def test_ssl_verify(clients: PollUrlClients, self_signed: tuple[Path, Path]) -> None:
    server = Server(Script(), tls=self_signed)
    try:
        verified = _probe(clients, _mode(server.url, limit=1))
        assert not verified.healthy and "CERTIFICATE_VERIFY_FAILED" in verified.reason
        unverified = _probe(clients, _mode(server.url, limit=1, poll_url_ssl_verify=False))
        assert unverified.healthy
    finally:
        server.close()


def test_stop_cuts_the_retries_short(clients: PollUrlClients) -> None:
    script = Script([(500, "")])
    server = Server(script)
    stop = threading.Event()
    stop.set()
    try:
        answer = probe_poll_url(clients, _mode(server.url, limit=5, interval=30), TARGET, stop)
        assert not answer.healthy and len(script.paths) == 1
    finally:
        server.close()
