"""Rows for health tests: clusters with health policies, engines, an engine context."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from herd.config import Settings
from herd.drivers.registry import default_driver_registry
from herd.engine.context import EngineContext
from herd.policies.registry import default_policy_registry
from herd.store.database import Database
from herd.store.models import BindingRow, ClusterRow, EngineRow, PolicyRow, ProfileRow

PROJECT = "p1"
HEALTH_SPEC: dict[str, Any] = {
    "type": "senlin.policy.health",
    "version": "1.1",
    "properties": {
        "detection": {"detection_modes": [{"type": "NODE_STATUS_POLLING"}], "interval": 5},
        "recovery": {"actions": [{"name": "RECREATE"}]},
    },
}


def dead_pid() -> int:
    """A pid that no process has now (a child that already ended and was reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def add_engine(database: Database, engine_id: str, *, alive: bool = True) -> None:
    now = time.time()
    with database.write() as session:
        session.add(
            EngineRow(
                id=engine_id,
                host=socket.gethostname(),
                pid=os.getpid() if alive else dead_pid(),
                started_at=now,
                heartbeat_at=now if alive else now - 3600,
            )
        )


def engine_context(database: Database, engine_id: str, data_dir: Path) -> EngineContext:
    settings = Settings(data_dir=data_dir, db_url=database.url, engine_dead_after=3.0)
    return EngineContext(
        settings=settings,
        database=database,
        drivers=default_driver_registry(data_dir),
        policies=default_policy_registry(),
        engine_id=engine_id,
    )


def health_cluster(database: Database, name: str, *, enabled: bool = True) -> str:
    """A cluster (no members) with a health policy attached; returns its id."""
    now = time.time()
    profile = ProfileRow(
        id=str(uuid.uuid4()),
        name=f"prof-{name}",
        type="herd.sim-1.0",
        spec={"type": "herd.sim", "version": "1.0", "properties": {}},
        meta_data={},
        project=PROJECT,
        created_at=now,
    )
    cluster = ClusterRow(
        id=str(uuid.uuid4()),
        name=name,
        profile_id=profile.id,
        init_at=now,
        status="ACTIVE",
        project=PROJECT,
        meta_data={},
        data={},
        config={},
        dependents={},
    )
    policy = PolicyRow(
        id=str(uuid.uuid4()),
        name=f"hp-{name}",
        type="senlin.policy.health-1.1",
        spec=HEALTH_SPEC,
        data={},
        project=PROJECT,
        created_at=now,
    )
    with database.write() as session:
        # One flush per row: without ORM relationships the flush order ignores foreign keys.
        for row in (profile, cluster, policy):
            session.add(row)
            session.flush()
        session.add(
            BindingRow(
                id=str(uuid.uuid4()),
                cluster_id=cluster.id,
                policy_id=policy.id,
                enabled=enabled,
                priority=600,
                data={},
            )
        )
    return cluster.id
