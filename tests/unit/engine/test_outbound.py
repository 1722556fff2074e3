"""The outbound guard (engine/outbound.py) against real sockets on 127.0.0.1.

Hostile input: every spelling of "inside" a tenant may give as a poll URL or hook URL.
The resolver is the system's (``getaddrinfo`` reads the numeric IPv4 forms) except where
a test needs a host name that answers with chosen addresses (no DNS server here).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from herd.engine.outbound import OutboundGuard
from herd.errors import OutboundRefused

INSIDE = [
    "http://127.0.0.1/",
    "http://localhost:8080/x",
    "http://2130706433/",  # 127.0.0.1 as one decimal number
    "http://0x7f000001/",  # ... in hex
    "http://0177.0.0.1/",  # ... in octal
    "http://127.1/",
    "http://[::1]:80/",
    "http://[::ffff:127.0.0.1]/",  # IPv6-mapped IPv4
    "http://[::ffff:169.254.169.254]/latest/meta-data/",
    "http://169.254.169.254/latest/meta-data/",  # the cloud's metadata service
    "http://[fe80::1]/",
    "http://0.0.0.0:22/",
    "http://[::]/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
]


@pytest.mark.parametrize("url", INSIDE)
def test_every_spelling_of_inside_is_refused_at_create_time(url: str) -> None:
    with pytest.raises(OutboundRefused) as caught:
        OutboundGuard().check_url(url, "properties.hooks.params.url")
    assert caught.value.field == "properties.hooks.params.url"
    assert "herd does not call" in caught.value.message


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "gopher://127.0.0.1/", "ftp://example.com/", "http://", "//x/"],
)
def test_only_http_and_https_with_a_host(url: str) -> None:
    with pytest.raises(OutboundRefused, match="only http and https"):
        OutboundGuard().check_url(url, "poll_url")


def test_private_ranges_are_a_setting_but_loopback_is_not() -> None:
    guard = OutboundGuard(refuse_private=False)
    guard.check_url("http://10.1.2.3/", "url")
    guard.check_url("http://[fd00::1]/", "url")
    with pytest.raises(OutboundRefused, match="loopback"):
        guard.check_url("http://127.0.0.1/", "url")
    with pytest.raises(OutboundRefused, match="link-local"):
        guard.check_url("http://169.254.169.254/", "url")


def test_the_allow_list_takes_cidrs_and_host_names() -> None:
    guard = OutboundGuard(["127.0.0.0/8", "Metadata.Internal"], resolver=_fixed("169.254.1.1"))
    OutboundGuard(["127.0.0.0/8"]).check_url("http://2130706433/", "url")
    guard.check_url("http://metadata.internal./x", "url")
    with pytest.raises(OutboundRefused, match="link-local"):
        guard.check_url("http://other.internal/", "url")


def test_every_resolved_address_is_checked() -> None:
    guard = OutboundGuard(resolver=_fixed("93.184.216.34", "127.0.0.1"))
    with pytest.raises(OutboundRefused, match=r"127\.0\.0\.1 is a loopback"):
        guard.check_url("http://two-faced.example/", "url")


def test_a_templated_host_is_checked_when_it_is_called() -> None:
    OutboundGuard().check_url("http://{nodename}:{port}/health", "poll_url")
    with pytest.raises(OutboundRefused):
        OutboundGuard().check_url("http://127.0.0.1:{port}/health", "poll_url")


def test_a_name_that_does_not_resolve_yet_is_accepted_at_create_time() -> None:
    def unresolvable(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    guard = OutboundGuard(resolver=unresolvable)
    guard.check_url("http://later.example/", "url")
    with pytest.raises(OutboundRefused, match="could not be resolved"):
        guard.request(httpx.Client(), "GET", "http://later.example/")


# -- at call time ------------------------------------------------------------------------


class Server:
    """A real HTTP server on 127.0.0.1 that answers each path from a table."""

    def __init__(self, routes: dict[str, tuple[int, dict[str, str]]]) -> None:
        self.seen: list[tuple[str, str, str]] = []  # (method, path, Host header)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                owner.seen.append((self.command, self.path, self.headers.get("Host", "")))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                status, headers = routes.get(self.path, (200, {}))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=5) as found:
        yield found


def _serve(routes: dict[str, tuple[int, dict[str, str]]]) -> Iterator[Server]:
    server = Server(routes)
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_the_default_guard_refuses_loopback_at_call_time(client: httpx.Client) -> None:
    for server in _serve({}):
        with pytest.raises(OutboundRefused, match="loopback"):
            OutboundGuard().request(client, "GET", f"http://127.0.0.1:{server.port}/")
        assert server.seen == []  # refused before any connection


def test_each_redirect_is_checked(client: httpx.Client) -> None:
    """Allowed 127.0.0.1 redirects to 127.0.0.2 (also loopback, not allowed): refused."""
    for server in _serve({}):
        inside = f"http://127.0.0.2:{server.port}/secret"
        server_routes = {"/go": (302, {"Location": inside}), "/ok": (301, {"Location": "/end"})}
        for redirecting in _serve(server_routes):
            guard = OutboundGuard(["127.0.0.1/32"])
            base = f"http://127.0.0.1:{redirecting.port}"
            with pytest.raises(OutboundRefused, match=r"127\.0\.0\.2 is a loopback"):
                guard.request(client, "GET", f"{base}/go")
            assert server.seen == []
            answer = guard.request(client, "POST", f"{base}/ok", json={"a": 1})
            assert answer.status_code == 200
            # A 301 after a POST continues as a GET (as browsers and httpx do).
            assert [seen[:2] for seen in redirecting.seen[-2:]] == [
                ("POST", "/ok"),
                ("GET", "/end"),
            ]


def test_redirect_loops_end(client: httpx.Client) -> None:
    for server in _serve({"/loop": (302, {"Location": "/loop"})}):
        guard = OutboundGuard(["127.0.0.1/32"])
        with pytest.raises(OutboundRefused, match="redirects"):
            guard.request(client, "GET", f"http://127.0.0.1:{server.port}/loop")


def test_the_checked_address_is_the_one_connected_to(client: httpx.Client) -> None:
    """DNS rebinding: the name is resolved once per call, and that answer is used.

    The first answer is the allowed 127.0.0.1; any later one would be 10.0.0.1 (refused),
    so a second resolution (by httpx) would fail the call.
    """
    answers = iter([["127.0.0.1"]] + [["10.0.0.1"]] * 10)

    def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    for server in _serve({}):
        guard = OutboundGuard(["127.0.0.1/32"], resolver=rebinding)
        answer = guard.request(client, "GET", f"http://tenant.example:{server.port}/h")
        assert answer.status_code == 200
        assert server.seen == [("GET", "/h", f"tenant.example:{server.port}")]


def _fixed(*addresses: str) -> Any:
    def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve
