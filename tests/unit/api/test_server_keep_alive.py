"""``herd serve`` hands its keep-alive to uvicorn (the server must outlast its clients' idle),
and keeps its start-up heap out of the garbage collector's full passes."""

from __future__ import annotations

import gc
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
    frozen: list[bool] = []
    # Not frozen for real here: this test process's later garbage must stay collectable.
    monkeypatch.setattr(server, "quiet_garbage_collector", lambda: frozen.append(True))
    server.serve(Settings(data_dir=tmp_path, run_engine=False))
    server.serve(Settings(data_dir=tmp_path, run_engine=False, api_keep_alive=120))
    assert [call["timeout_keep_alive"] for call in calls] == [75, 120]
    assert frozen == [True, True]  # the app and its modules leave the collector's full passes


def test_the_server_freezes_what_exists_at_start_and_collects_young_objects_less_often() -> None:
    before, thresholds = gc.get_freeze_count(), gc.get_threshold()
    try:
        server.quiet_garbage_collector()
        assert gc.get_freeze_count() > before
        assert gc.get_threshold()[0] == server.YOUNG_GENERATION_THRESHOLD
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
