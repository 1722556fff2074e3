"""Helpers for the deletion tests: tokens, a live ``herd serve`` with regions, region stores."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.waiting import wait_for, wait_for_action

from herd.config import RegionConfig, Settings
from herd.regions import CopyEvent, RegionBackend, Regions
from herd.store import tokens
from herd.store.database import Database

SIM_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {}}
PROJECT = "p1"
ROLES = ("admin", "member", "agent")


def issue_tokens(database: Database, project: str = PROJECT) -> dict[str, dict[str, str]]:
    """One token per role, as ``X-Auth-Token`` headers."""
    headers = {}
    with database.write() as session:
        for role in ROLES:
            _row, secret = tokens.create_token(session, project, role, role, time.time())
            headers[role] = {"X-Auth-Token": secret}
    return headers


def region_configs(base: Path, names: tuple[str, ...], **fields: Any) -> list[RegionConfig]:
    return [
        RegionConfig(name=name, url=f"sqlite:///{base / f'{name}.db'}", **fields) for name in names
    ]


def regions_env(configs: list[RegionConfig]) -> str:
    return json.dumps([c.model_dump() for c in configs])


def open_regions(configs: list[RegionConfig], data_dir: Path) -> Regions:
    return Regions.from_settings(Settings(data_dir=data_dir, regions=configs))


def resurrections(backend: RegionBackend) -> list[CopyEvent]:
    """Copies created after central deleted the same cluster's copy in this region."""
    deleted_by_central: set[str] = set()
    found = []
    for event in backend.history():
        if event.op == "DELETE" and event.actor == "central":
            deleted_by_central.add(event.cluster_id)
        elif event.op == "CREATE" and event.cluster_id in deleted_by_central:
            found.append(event)
    return found


__all__ = ["wait_for", "wait_for_action"]


class LiveServer:
    """``herd serve`` as a real process (tests/e2e/server.py) with token auth and regions."""

    def __init__(
        self,
        base: Path,
        db_url: str | None,
        regions: list[RegionConfig],
        *,
        command: list[str] | None = None,
        **env: str,
    ) -> None:
        from tests.conftest import free_port
        from tests.e2e.server import HerdServer

        self.data_dir = base / "data"
        url = db_url or f"sqlite:///{self.data_dir / 'herd.db'}"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        database = Database(url)
        database.migrate()
        self.headers = issue_tokens(database)
        database.dispose()
        full_env = {"HERD_AUTH": "token", "HERD_REGIONS": regions_env(regions), **env}
        self.server = HerdServer(
            self.data_dir, free_port(), db_url=db_url, command=command, **full_env
        )
        self.url = self.server.url

    def __enter__(self) -> LiveServer:
        self.server.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.stop()
