"""The webhook key: from the setting, else a file in the data directory made once."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from herd.api.webhook_key import load_webhook_key
from herd.config import Settings


def test_the_setting_wins_over_the_file(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, webhook_key=SecretStr("from the environment"))
    assert load_webhook_key(settings) == b"from the environment"
    assert not (tmp_path / "webhook.key").exists()


def test_an_empty_setting_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="webhook_key\n  Value error, must not be empty"):
        Settings(data_dir=tmp_path, webhook_key=SecretStr(""))


def test_the_file_is_made_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    first = load_webhook_key(settings)
    path = tmp_path / "data" / "webhook.key"
    assert path.read_bytes() == first and len(first) == 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_webhook_key(settings) == first  # a restart keeps the URLs valid


def test_processes_starting_together_share_one_key(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    keys: list[bytes] = []
    start = threading.Barrier(8)

    def load() -> None:
        start.wait()
        keys.append(load_webhook_key(settings))

    threads = [threading.Thread(target=load) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 8 and len(set(keys)) == 1


def test_an_empty_key_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "webhook.key").write_bytes(b"")
    monkeypatch.setattr("herd.api.webhook_key._WRITE_WAIT", 0.0)
    with pytest.raises(ValueError, match="is empty: remove it or set HERD_WEBHOOK_KEY"):
        load_webhook_key(Settings(data_dir=tmp_path))
