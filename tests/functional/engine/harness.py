"""A real engine on a temporary SQLite store, driven by writing rows as the API would."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import select
from tests.waiting import wait_for

from herd.config import Settings, load_settings
from herd.engine.service import EngineService, build_engine
from herd.store import actions as action_store
from herd.store import tombstones
from herd.store.database import Database
from herd.store.models import ActionRow, ClusterRow, EventRow, NodeRow, PolicyRow, ProfileRow
from herd.types import ActionControl, ActionName, ResourceType

PROJECT = "p1"


class Harness:
    def __init__(self, settings: Settings, database: Database, engine: EngineService) -> None:
        self.settings = settings
        self.db = database
        self.engine = engine

    def profile(self, properties: dict[str, Any] | None = None, type_: str = "herd.sim") -> str:
        row = ProfileRow(
            id=str(uuid.uuid4()),
            name=f"prof-{uuid.uuid4().hex[:6]}",
            type=f"{type_}-1.0",
            spec={"type": type_, "version": "1.0", "properties": properties or {}},
            meta_data={},
            project=PROJECT,
            created_at=time.time(),
        )
        with self.db.write() as session:
            session.add(row)
        return row.id

    def cluster(
        self,
        desired: int,
        *,
        min_size: int = 0,
        max_size: int = -1,
        profile: str | None = None,
        name: str = "c",
    ) -> str:
        profile_id = profile or self.profile()
        row = ClusterRow(
            id=str(uuid.uuid4()),
            name=name,
            profile_id=profile_id,
            init_at=time.time(),
            min_size=min_size,
            max_size=max_size,
            desired_capacity=desired,
            next_index=1,
            timeout=3600,
            status="INIT",
            project=PROJECT,
            created_at=time.time(),
            meta_data={},
            data={},
            config={},
            dependents={},
        )
        with self.db.write() as session:
            session.add(row)
        action = self.run(ActionName.CLUSTER_CREATE, row.id)
        assert action.status == "SUCCEEDED", action.status_reason
        return row.id

    def policy(self, spec: dict[str, Any], name: str = "pol") -> str:
        full_type, _ = self.engine.ctx.policies.create(spec)
        row = PolicyRow(
            id=str(uuid.uuid4()),
            name=name,
            type=full_type,
            spec=spec,
            data={},
            project=PROJECT,
            created_at=time.time(),
        )
        with self.db.write() as session:
            session.add(row)
        return row.id

    def attach(self, cluster_id: str, spec: dict[str, Any], name: str = "pol") -> str:
        policy_id = self.policy(spec, name)
        action = self.run(
            ActionName.CLUSTER_ATTACH_POLICY, cluster_id, {"policy_id": policy_id, "enabled": True}
        )
        assert action.status == "SUCCEEDED", action.status_reason
        return policy_id

    def submit(self, verb: ActionName, target: str, inputs: dict[str, Any] | None = None) -> str:
        with self.db.write() as session:
            node = session.get(NodeRow, target)
            cluster_id = target if verb.is_cluster_action else (node.cluster_id if node else None)
            row = action_store.new_action(
                action=verb,
                target=target,
                cluster_id=cluster_id,
                project=PROJECT,
                inputs=inputs or {},
                now=time.time(),
            )
            session.add(row)
        self.engine.notify()
        return row.id

    def tombstone(self, kind: ResourceType, resource_id: str, action_id: str | None = None) -> None:
        """Record the deletion of a resource, as a DELETE through the API does first."""
        with self.db.write() as session:
            inserted = tombstones.insert(
                session,
                resource_type=kind,
                resource_id=resource_id,
                project=PROJECT,
                requested_by="u",
                action_id=action_id,
                now=time.time(),
            )
            assert inserted

    def wait(self, action_id: str, timeout: float = 30.0) -> ActionRow:
        end = time.time() + timeout
        while time.time() < end:
            with self.db.read() as session:
                row = session.get(ActionRow, action_id)
                assert row is not None
                if row.status in ("SUCCEEDED", "FAILED", "CANCELLED"):
                    return row
            time.sleep(0.02)
        raise AssertionError(f"action {action_id} did not finish in {timeout}s")

    def cancel_when(
        self, action_id: str, ready: Callable[[], object], timeout: float = 60.0
    ) -> ActionRow:
        """Once ``ready()`` is true, ask the running action to stop (its ``control``, as
        ``PATCH /v1/actions/<id>`` does); the action once it has ended."""
        wait_for(ready, timeout)
        with self.db.write() as session:
            row = session.get(ActionRow, action_id)
            assert row is not None and row.status == "RUNNING", row and row.status
            row.control = ActionControl.CANCEL
        return self.wait(action_id, timeout)

    def run(
        self,
        verb: ActionName,
        target: str,
        inputs: dict[str, Any] | None = None,
        timeout: float = 30.0,
    ) -> ActionRow:
        return self.wait(self.submit(verb, target, inputs), timeout)

    def nodes(self, cluster_id: str | None) -> list[NodeRow]:
        with self.db.read() as session:
            query = select(NodeRow).where(NodeRow.cluster_id == cluster_id).order_by(NodeRow.index)
            return list(session.scalars(query).all())

    def node(self, node_id: str) -> NodeRow | None:
        with self.db.read() as session:
            return session.get(NodeRow, node_id)

    def get_cluster(self, cluster_id: str) -> ClusterRow | None:
        with self.db.read() as session:
            return session.get(ClusterRow, cluster_id)

    def set_node(self, node_id: str, **values: Any) -> None:
        with self.db.write() as session:
            row = session.get(NodeRow, node_id)
            assert row is not None
            for key, value in values.items():
                setattr(row, key, value)

    def children(self, action_id: str) -> list[ActionRow]:
        with self.db.read() as session:
            return list(action_store.children(session, action_id))

    def events(self, oid: str) -> list[EventRow]:
        with self.db.read() as session:
            return list(
                session.scalars(
                    select(EventRow).where(EventRow.oid == oid).order_by(EventRow.timestamp)
                ).all()
            )


@contextmanager
def running_engine(data_dir: Path, **overrides: Any) -> Iterator[Harness]:
    settings = load_settings(
        data_dir=data_dir,
        engine_heartbeat_interval=0.5,
        engine_dead_after=3.0,
        lock_retry_interval=0.1,
        **overrides,
    )
    database = Database(settings.database_url())
    database.migrate()
    engine = build_engine(settings, database)
    engine.start()
    try:
        yield Harness(settings, database, engine)
    finally:
        engine.stop()
        engine.ctx.drivers.close()
        database.dispose()
