"""One action while it runs: its stored fields plus the helpers handlers use."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, TypeVar, cast

from herd.engine.context import EngineContext
from herd.store import actions as action_store
from herd.store import events
from herd.store.database import Session
from herd.store.models import ActionRow, ClusterRow
from herd.types import ActionCause, ActionName, ActionStatus


class NodeEventFields(TypedDict):
    """The keyword fields of ``herd.store.events.record`` for a node event."""

    otype: str
    oid: str
    oname: str
    project: str
    user: str
    cluster_id: str | None
    action: str
    status: str
    reason: str
    level: str


class EventSubject(Protocol):
    """What a node event names of its node (a row, or the columns a bulk write read)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def project(self) -> str: ...
    @property
    def cluster_id(self) -> str | None: ...


T = TypeVar("T")


class ActionCancelled(Exception):
    """Raised inside a handler when the action was asked to stop."""


@dataclass(frozen=True)
class Outcome:
    """How a handler ended: SUCCEEDED, FAILED or CANCELLED with a reason."""

    status: ActionStatus
    reason: str
    outputs: dict[str, object] = field(default_factory=dict)

    @classmethod
    def ok(cls, reason: str, **outputs: object) -> Outcome:
        return cls(ActionStatus.SUCCEEDED, reason, dict(outputs))

    @classmethod
    def failed(cls, reason: str, **outputs: object) -> Outcome:
        return cls(ActionStatus.FAILED, reason, dict(outputs))


def action_seed(action_id: str, inputs: dict[str, object]) -> int:
    """The request's ``seed`` when it gave one, else a stable seed from the action id."""
    given = inputs.get("seed")
    if isinstance(given, int) and not isinstance(given, bool):
        return given
    return zlib.crc32(action_id.encode())


class ActionExecution:
    """A running action. Handlers read ``inputs`` and ``data`` and call the helpers."""

    def __init__(self, ctx: EngineContext, row: ActionRow) -> None:
        self.ctx = ctx
        self.id = row.id
        self.name = row.name
        self.action = ActionName(row.action)
        self.target = row.target
        self.cluster_id = row.cluster_id
        self.cause = ActionCause(row.cause)
        self.project = row.project
        self.user = row.user
        self.parent_id = row.parent_id
        self.inputs: dict[str, Any] = dict(row.inputs or {})
        self.data: dict[str, Any] = dict(row.data or {})
        #: the results of :meth:`once` (the action row's ``steps``), apart from ``data``,
        #: which is Senlin's and which a policy check replaces as a whole
        self.steps: dict[str, Any] = dict(row.steps or {})
        #: guards ``steps`` and its save: writers are the pool threads of one action's steps
        self._steps_lock = threading.Lock()
        self.outputs: dict[str, Any] = dict(row.outputs or {})
        #: what the policies explained about their decisions in this run (not stored)
        self.notes: dict[str, object] = {}
        self.start_time = row.start_time or ctx.now()
        self.timeout = row.timeout
        #: the seed of every random choice the action makes: the one its request gave
        #: (so a preview's victims can be run exactly), else one derived from its id
        self.seed = action_seed(row.id, self.inputs)

    # -- persistence -------------------------------------------------------------------

    def save_data(self) -> None:
        with self.ctx.database.write() as session:
            action_store.save_progress(
                session, self.id, self.data, self.outputs, self.ctx.now(), dict(self.steps)
            )

    # -- durable steps (the rule: herd/engine/actions/__init__.py) ----------------------

    def once(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()`` for this action, computed at most once and stored.

        The result is saved in the action's row (``steps[key]``) before ``once``
        returns, so before any side effect that follows from it; a run resumed after
        its engine died, or run again over the same stored state, gets the stored
        result and does not compute again. Results are JSON values (a tuple comes
        back as a list). A ``compute`` that only decides (reads, chooses) is exactly
        once; one that acts (a driver call) is at least once, since the engine may
        die after the act and before the result is stored.
        """
        if key in self.steps:
            return cast(T, self.steps[key])
        value = compute()
        # Steps of one action may end on several pool threads: each save holds all before it.
        with self._steps_lock:
            self.steps[key] = value
            self.save_data()
        return value

    def planned(self) -> bool:
        """Whether this action already stored its plan of child actions.

        A plan is its own durable record: the node rows and the children are written in
        one transaction, so their presence (one EXISTS query) says the plan was made.
        """
        with self.ctx.database.read() as session:
            return action_store.has_children(session, self.id)

    def add_child(
        self,
        session: Session,
        action: ActionName,
        *,
        node_id: str,
        cluster_id: str | None,
        project: str,
        inputs: dict[str, object],
        now: float,
    ) -> str:
        """Store a child of this action on one node, RUNNING on this engine, and its id.

        The child is DERIVED, and depends on this action, so it ends with it.
        """
        child = action_store.new_action(
            action=action,
            target=node_id,
            cluster_id=cluster_id,
            project=project,
            user=self.user,
            cause=ActionCause.DERIVED,
            inputs=inputs,
            status=ActionStatus.RUNNING,
            parent_id=self.id,
            owner=self.ctx.engine_id,
            now=now,
        )
        action_store.add(session, child)
        action_store.add_dependency(session, child.id, self.id)
        return child.id

    def check_cancel(self) -> None:
        """Stop the handler if a cancel was requested or the action timed out."""
        with self.ctx.database.read() as session:
            control = action_store.control(session, self.id)
        if control is not None:  # a cancel, or a forced delete took its locks
            raise ActionCancelled(f"{self.action} [{self.id[:8]}] cancelled")
        if self.timeout > 0 and self.ctx.now() - self.start_time > self.timeout:
            raise ActionCancelled(f"{self.action} [{self.id[:8]}] timeout")

    def wait(self, seconds: float) -> None:
        """Sleep in short steps, honouring cancel requests (grace periods, hook waits)."""
        end = self.ctx.now() + max(0.0, seconds)
        while True:
            self.check_cancel()
            left = end - self.ctx.now()
            if left <= 0:
                return
            self.ctx.sleep(min(left, 0.2))

    # -- events ------------------------------------------------------------------------

    def cluster_event(
        self, cluster: ClusterRow, status: str, reason: str, level: str = "INFO"
    ) -> None:
        with self.ctx.database.write() as session:
            events.record(
                session,
                otype="CLUSTER",
                oid=cluster.id,
                oname=cluster.name,
                project=cluster.project,
                user=self.user,
                cluster_id=cluster.id,
                action=self.action,
                status=status,
                reason=reason,
                level=level,
                now=self.ctx.now(),
            )

    def node_event_row(
        self, node: EventSubject, status: str, reason: str, level: str = "INFO"
    ) -> NodeEventFields:
        """Event fields for a node, for callers that batch events into one transaction."""
        return {
            "otype": "NODE",
            "oid": node.id,
            "oname": node.name,
            "project": node.project,
            "user": self.user,
            "cluster_id": node.cluster_id,
            "action": self.action,
            "status": status,
            "reason": reason,
            "level": level,
        }
