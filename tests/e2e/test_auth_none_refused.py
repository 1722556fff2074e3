"""``herd serve`` with ``auth: none`` on a non-loopback address exits with the documented message.

docs/api.md quotes the message; ``Settings`` refuses the combination, so the process exits 2
(an invalid setting) before it listens.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from tests.conftest import free_port
from tests.e2e.server import HERD

pytestmark = pytest.mark.e2e

MESSAGE = (
    "Refusing to serve with auth 'none' on 0.0.0.0: without tokens every caller is an "
    "administrator. Listen on 127.0.0.1, or use --auth token (HERD_AUTH=token) and create "
    "tokens with 'herd token create'."
)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--host", "0.0.0.0", "--auth", "none"], {}),
        (["--host", "0.0.0.0"], {}),  # none is the default
        ([], {"HERD_HOST": "0.0.0.0", "HERD_AUTH": "none"}),
    ],
    ids=["options", "default-auth", "environment"],
)
def test_auth_none_off_loopback_exits(tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    port = free_port()
    done = subprocess.run(
        [HERD, "serve", "--port", str(port), "--data-dir", str(tmp_path / "data"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert " ".join(MESSAGE.split()) in " ".join(done.stderr.split())
    with socket.socket() as sock:  # nothing listens: it refused before binding
        assert sock.connect_ex(("127.0.0.1", port)) != 0


def test_auth_token_off_loopback_starts(tmp_path: Path) -> None:
    """The control: the same address with tokens is served."""
    from tests.e2e.server import HerdServer

    server = HerdServer(tmp_path / "data", free_port(), HERD_HOST="0.0.0.0", HERD_AUTH="token")
    try:
        server.start()
        import httpx

        assert httpx.get(f"{server.url}/v1/clusters").status_code == 401
    finally:
        server.stop()
