"""``herd serve`` hands its keep-alive to uvicorn (the server must outlast its clients' idle)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from herd.api import server
from herd.config import Settings


def test_uvicorn_keeps_idle_connections_as_long_as_the_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: calls.append(kwargs))
    server.serve(Settings(data_dir=tmp_path, run_engine=False))
    server.serve(Settings(data_dir=tmp_path, run_engine=False, api_keep_alive=120))
    assert [call["timeout_keep_alive"] for call in calls] == [75, 120]
