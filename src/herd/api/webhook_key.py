"""The webhook key: what receivers' URL secrets are derived from.

It lives outside the database (the ``webhook_key`` setting, else a file in the
data directory made on first start, readable by its owner only), so that a copy
of the database holds no working webhook URL. Every API process of one herd must
see the same key: ``herd serve`` processes on one data directory share the file;
processes on other machines need the setting.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from herd.config import Settings

KEY_BYTES = 32
#: how long a process waits for another that is writing the file it found empty
_WRITE_WAIT = 5.0


def load_webhook_key(settings: Settings) -> bytes:
    """The key from the setting, else from the key file (made if absent)."""
    if settings.webhook_key is not None:  # never empty: Settings refuses that
        return settings.webhook_key.get_secret_value().encode("utf-8")
    return _key_file(settings.webhook_key_file())


def _key_file(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(KEY_BYTES).encode("ascii")
    try:
        # O_EXCL: of two processes starting together, one writes the key, both read it
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path)
    with os.fdopen(fd, "wb") as out:
        out.write(key)
        out.flush()
        os.fsync(out.fileno())
    return key


def _read(path: Path) -> bytes:
    deadline = time.monotonic() + _WRITE_WAIT
    while True:
        key = path.read_bytes().strip()
        if key:
            return key
        if time.monotonic() > deadline:
            raise ValueError(f"webhook key file {path} is empty: remove it or set HERD_WEBHOOK_KEY")
        time.sleep(0.01)  # the process that created it has not written it yet
