"""Fixtures: the fake API receiver and an in-process ``herd`` runner."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
import typer.main
import typer.testing
from tests.unit.cli.fakeapi import FakeApi, handler
from typer.testing import CliRunner

from herd.cli.main import app


@pytest.fixture(scope="session")
def api_server() -> Iterator[FakeApi]:
    fake = FakeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def api(api_server: FakeApi) -> FakeApi:
    """The receiver, with no routes and no recorded requests."""
    api_server.routes.clear()
    api_server.requests.clear()
    return api_server


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


_COMMAND = typer.main.get_command(app)


@pytest.fixture
def herd(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run ``herd --url <fake> ARGS...`` in-process; return exit code and outputs."""
    # typer rebuilds the click command on every invoke (~0.2 s); build it once
    monkeypatch.setattr(typer.testing, "_get_command", lambda _app: _COMMAND)
    runner = CliRunner()

    def run(*args: str, token: str | None = "secret-token") -> Run:
        prefix = ["--url", api.url]
        if token:
            prefix += ["--token", token]
        result = runner.invoke(app, [*prefix, *args])
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Render tables wide, whatever COLUMNS the shell running the suite has set."""
    monkeypatch.setenv("COLUMNS", "200")
