"""Marking a cluster member unhealthy (Heat's ``mark_unhealthy`` PATCH), herd-style.

The body (``herd.api.schemas.member_health``) is validated in Heat's order with
Heat's texts (unknown keys, then a missing ``mark_unhealthy``, then a value that
is not a boolean). The change is made in a short write transaction that holds the
member's row lock (``FOR UPDATE`` on PostgreSQL; SQLite write transactions are
serialised by ``BEGIN IMMEDIATE``), or on PostgreSQL first by one statement that writes
the member only if its row is still the version the mark was decided on (else the mark
is made again, locked): two concurrent marks never lose an update. A mark is refused
with 409 while an action holds the cluster lock or the node lock.

Concurrent marks share transactions (``group_commit``), and a batch is read and
written set-wise (``herd.store.mark_batches``): the members it names by id in one
statement, every member it changed in one UPDATE, every event in one INSERT. Each mark
still gets its own answer, 404 or 409, and sees the marks of its batch made before it
(a member marked twice in one batch is written once, with both marks' generations
counted, and both answers show their own mark).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.member_health import MarkUnhealthy
from herd.api.services.group_commit import GroupCommitter, Outcome
from herd.errors import ActionInProgress, HerdError, ResourceDeleting
from herd.observability import context as log_context
from herd.store import mark_batches, mark_statement, member_marks
from herd.store.database import Connection, Session
from herd.store.mark_batches import FULL_ID, ReadMember
from herd.store.member_marks import ClusterRef, MarkedMember
from herd.types import HealthStatus, NodeStatus, ResourceType

DEFAULT_REASON = "state changed by resource_mark_unhealthy api"
COMMITTER = "mark_committer"


@dataclass(frozen=True)
class Mark:
    """One mark asked for: by whom, of which member, with which body."""

    ctx: RequestContext
    cluster: str
    node: str
    request: MarkUnhealthy
    #: the API request that asked (its events carry it)
    request_id: str | None = field(default_factory=log_context.request_id.get)


@dataclass(frozen=True)
class MarkResult:
    #: the member's view values (``herd.api.views.node_view_from_values``)
    values: list[Any]
    changed: bool
    message: str


def committer(services: Services) -> GroupCommitter[Mark]:
    """This app's group committer for marks (made on first use)."""
    found = services.extra.get(COMMITTER)
    if not isinstance(found, GroupCommitter):
        # On PostgreSQL a batch waits for the server at each of its statements: written on a
        # thread, the loop meanwhile reads the next requests (on SQLite the loop is faster:
        # the writer and the loop only fought for the GIL, docs/benchmarks.md).
        threads = services.settings.api_database_threads or not services.database.is_sqlite
        found = services.extra[COMMITTER] = GroupCommitter(
            services.database,
            threads=threads,
            batch=lambda marks: write_marks(services, marks),
        )
    return found


def write_marks(services: Services, marks: list[Mark]) -> list[Outcome]:
    """Make ``marks`` in order; each one's answer or refusal.

    On PostgreSQL a batch is first made outside any transaction: a read, then one statement
    that writes only the members still as read (``mark_statement.write_all``), two round
    trips instead of four (BEGIN and COMMIT are round trips of their own). The marks of a
    member written by someone else between the two, and a batch naming a member otherwise
    than by its full id, are made again in a transaction that locks the rows
    (:func:`mark_members`), as on SQLite.
    """
    database = services.database
    if database.is_sqlite:
        with database.write() as session:
            return mark_members(session, services, marks)
    made = _mark_unlocked(services, marks)  # raises only if it wrote nothing
    redo = [mark for mark, outcome in zip(marks, made, strict=True) if outcome is None]
    if not redo:
        return [outcome for outcome in made if outcome is not None]
    try:
        with database.write() as session:
            again = mark_members(session, services, redo)
    except Exception:
        # The others are written already: never hand them back to be made again.
        again = [_alone(services, mark) for mark in redo]
    rest = iter(again)
    return [next(rest) if outcome is None else outcome for outcome in made]


def _alone(services: Services, mark: Mark) -> Outcome:
    try:
        with services.database.write() as session:
            return mark_members(session, services, [mark])[0]
    except Exception as exc:
        return Outcome(error=exc)


def _mark_unlocked(services: Services, marks: list[Mark]) -> list[Outcome | None]:
    """PostgreSQL: the marks made without BEGIN, COMMIT or row locks; None for each mark
    that is left to make again in a transaction."""
    with services.database.autocommit() as connection:
        read = mark_batches.read_members(connection, _full_ids(marks), versioned=True)
        found: list[tuple[ClusterRef, MarkedMember] | HerdError] = []
        for mark in marks:
            try:
                found.append(_find(connection, mark, read))
            except HerdError as exc:
                found.append(exc)
            else:
                if _answered(mark, read) is None:
                    # Found by a name or a short id: its row carries no version to check.
                    return [None] * len(marks)
        batch = _Batch.made(connection, services, marks, found)
        versions = {node_id: read[node_id].version for node_id in batch.written}
        done = mark_statement.write_all(connection, batch.written, batch.events, versions)
    return [
        None if member in batch.written and member not in done else outcome
        for outcome, member in zip(batch.outcomes, batch.members, strict=True)
    ]


def mark_members(session: Session, services: Services, marks: list[Mark]) -> list[Outcome]:
    """Make ``marks`` in order in the caller's transaction; each one's answer or refusal.

    A refused mark (404, 409) writes nothing; the others' writes are made together at the
    end, so the batch costs the same few statements however many marks it holds. On
    PostgreSQL the members' rows are locked from the read on.
    """
    connection = session.connection()
    read = mark_batches.read_members(connection, _full_ids(marks))
    found: list[tuple[ClusterRef, MarkedMember] | HerdError] = []
    for mark in marks:
        try:
            found.append(_find(connection, mark, read))
        except HerdError as exc:
            found.append(exc)
    batch = _Batch.made(connection, services, marks, found)
    if connection.dialect.name == "postgresql":
        # One statement, one round trip, for every write of the batch.
        mark_statement.write_all(connection, batch.written, batch.events)
    else:
        mark_batches.write_health(session, batch.written)
        mark_batches.record_events(connection, batch.events)
    return batch.outcomes


def _full_ids(marks: list[Mark]) -> list[str]:
    return [mark.node for mark in marks if len(mark.cluster) == FULL_ID]


@dataclass
class _Batch:
    """A batch's marks decided: each one's outcome and member, and what to write."""

    outcomes: list[Outcome] = field(default_factory=list)
    #: each mark's member id (None: refused before one was found)
    members: list[str | None] = field(default_factory=list)
    #: member id -> its cluster id and its values after this batch's marks
    written: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def made(
        cls,
        connection: Connection,
        services: Services,
        marks: list[Mark],
        found: list[tuple[ClusterRef, MarkedMember] | HerdError],
    ) -> _Batch:
        """Each mark decided in order, on its member as the marks before it left it."""
        holders = {
            holder
            for item in found
            if not isinstance(item, HerdError)
            for holder in _holders(item[1])
        }
        alive = (
            mark_batches.live_holder_names(connection, holders, services.dead_before())
            if holders
            else {}
        )
        batch = cls()
        current: dict[str, list[Any]] = {}  # member id -> its values after this batch's marks
        for mark, item in zip(marks, found, strict=True):
            if isinstance(item, HerdError):
                batch.outcomes.append(Outcome(error=item))
                batch.members.append(None)
                continue
            cluster, member = item
            batch.members.append(member.id)
            busy = next((alive[h] for h in _holders(member) if h in alive), None)
            if busy is not None:
                message = f"Cluster {cluster.name} already has an action ({busy}) in progress."
                batch.outcomes.append(Outcome(error=ActionInProgress(message)))
                continue
            values = current.get(member.id, member.values)
            result, event = _decide(services, mark, member, values)
            if result.values is not values:
                current[member.id] = result.values
                batch.written[member.id] = (cluster.id, result.values)
            if event is not None:
                batch.events.append(event | {"cluster_id": cluster.id})
            batch.outcomes.append(Outcome(value=result))
        return batch


def _answered(mark: Mark, read: dict[str, ReadMember]) -> ReadMember | None:
    """The batch read's member for ``mark``, when it is what the lookups would find first:
    the cluster by its full id, in scope, and the member by its full id in that cluster."""
    found = read.get(mark.node)
    if found is None or found.cluster.id != mark.cluster:
        return None
    scope = mark.ctx.scope()
    return found if scope.all_projects or found.cluster_project == scope.project else None


def _find(
    connection: Connection, mark: Mark, read: dict[str, ReadMember]
) -> tuple[ClusterRef, MarkedMember]:
    """The mark's cluster and member: from the batch's read when it answers, else looked up."""
    answered = _answered(mark, read)
    if answered is not None:
        _refuse_deleting(answered.cluster)
        return answered.cluster, answered.member
    cluster = member_marks.find_cluster(connection, mark.cluster, mark.ctx.scope())
    _refuse_deleting(cluster)
    return cluster, member_marks.find_member(connection, cluster, mark.node)


def _refuse_deleting(cluster: ClusterRef) -> None:
    if cluster.deleting:
        raise ResourceDeleting(
            f"The cluster '{cluster.id}' is being deleted: it cannot be used or changed.",
            resource_type=ResourceType.CLUSTER,
            resource_id=cluster.id,
        )


def _holders(member: MarkedMember) -> list[str]:
    holders = list(member.cluster_lock_holders)
    if member.node_lock_holder is not None:
        holders.append(member.node_lock_holder)
    return holders


def _decide(
    services: Services, mark: Mark, member: MarkedMember, values: list[Any]
) -> tuple[MarkResult, dict[str, Any] | None]:
    """The mark's answer (new values when it writes) and its event, if it changes anything."""
    request, ctx = mark.request, mark.ctx
    if values[member_marks.STATUS] == NodeStatus.DELETING or member.delete_pending:
        return MarkResult(
            values, False, "The node is being deleted; its health was not changed."
        ), None
    current_health = values[member_marks.HEALTH]
    if request.mark_unhealthy:
        new_health = HealthStatus.CHECK_FAILED
    elif current_health == HealthStatus.CHECK_FAILED:
        new_health = HealthStatus.CHECK_COMPLETE
    else:
        return MarkResult(values, False, "The node is not marked unhealthy; nothing changed."), None
    reason = request.resource_status_reason or DEFAULT_REASON
    changed = (current_health, values[member_marks.HEALTH_REASON]) != (new_health, reason)
    now = services.now()
    values = list(values)
    values[member_marks.HEALTH], values[member_marks.HEALTH_REASON] = new_health, reason
    values[member_marks.MARKED_BY], values[member_marks.MARKED_AT] = ctx.user or ctx.project, now
    values[member_marks.GENERATION] = (values[member_marks.GENERATION] or 0) + 1
    values[member_marks.UPDATED_AT] = now
    event = None
    if changed:
        event = {
            "timestamp": now,
            "otype": "NODE",
            "oid": member.id,
            "oname": values[1],
            "project": values[6],
            "user": ctx.user,
            "action": "NODE_MARK_UNHEALTHY" if request.mark_unhealthy else "NODE_MARK_HEALTHY",
            "status": new_health,
            "status_reason": reason,
            "level": "WARNING" if request.mark_unhealthy else "INFO",
            "request_id": mark.request_id,
        }
    message = "Marked unhealthy." if request.mark_unhealthy else "Marked healthy."
    return MarkResult(values, changed, message if changed else "No change."), event
