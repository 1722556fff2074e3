"""A batch of member marks read and written set-wise: a few statements per batch, not per mark.

On PostgreSQL every statement is a round trip to the server, and a mark made one at a time
(``herd.store.member_marks``) took four (the cluster, the member with its lock, the UPDATE,
the event) plus the batch's own. Here a whole batch of marks
(``herd.api.services.member_health.mark_members``) reads every member it names by id, with
its cluster and whatever may stop the mark, in one statement (locking the member rows on
PostgreSQL, in id order), and writes every changed member with one executemany UPDATE and
every event with one INSERT. Marks that name a member or cluster otherwise (a name, a short
id) or that this read does not answer are looked up one by one with
``herd.store.member_marks``, as before. Every function runs in the caller's transaction.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, String, bindparam, insert, literal_column, select
from sqlalchemy.orm import Session

from herd.store import locks, member_marks, nodes
from herd.store.bulk import chunked
from herd.store.member_marks import ClusterRef, MarkedMember
from herd.store.models import ActionRow, ClusterRow, EventRow, NodeRow
from herd.types import ResourceType

#: full ids are 36 characters: anything shorter is a name or a short id
FULL_ID = 36


@dataclass(frozen=True, slots=True)
class ReadMember:
    """A member read by id, with the cluster it belongs to."""

    member: MarkedMember
    cluster: ClusterRef
    cluster_project: str
    #: the row's version (PostgreSQL's ``xmin``) when read to be written without a lock
    version: str | None = None


#: PostgreSQL: the version of the node row read (``xmin``, which every write of it changes)
_ROW_VERSION = literal_column(f"CAST({NodeRow.__tablename__}.xmin AS text)", String)


@functools.cache
def _members_by_id(for_update: bool, versioned: bool = False) -> Select[Any]:
    query = (
        member_marks.member_select(NodeRow.cluster_id)
        .add_columns(
            ClusterRow.name,
            ClusterRow.project,
            member_marks.tombstoned(ResourceType.CLUSTER, ClusterRow.id),
        )
        .join(ClusterRow, ClusterRow.id == NodeRow.cluster_id)
        .where(NodeRow.id.in_(bindparam("ids", expanding=True)))
        # Rows are locked in the order they are returned: one order for every batch, so
        # two batches (two API workers) never wait for each other in a cycle.
        .order_by(NodeRow.id)
    )
    if versioned:
        query = query.add_columns(_ROW_VERSION)
    return query.with_for_update(of=NodeRow) if for_update else query


def read_members(
    connection: Connection, node_ids: Collection[str], *, versioned: bool = False
) -> dict[str, ReadMember]:
    """The members of these full ids (in any cluster), each with its cluster.

    On PostgreSQL their rows are locked until the transaction ends, so a concurrent mark of
    the same member (another API worker) waits instead of losing an update. ``versioned``
    (PostgreSQL): the rows are not locked but read with their version, for a write that
    takes only rows still of that version (``mark_statement.write_all``).
    """
    postgresql = connection.dialect.name == "postgresql"
    statement = _members_by_id(postgresql and not versioned, postgresql and versioned)
    found: dict[str, ReadMember] = {}
    for chunk in chunked(sorted({i for i in node_ids if len(i) == FULL_ID})):
        for row in connection.execute(statement, {"ids": chunk}):
            values = list(row)
            version = values.pop() if postgresql and versioned else None
            member = member_marks.member_from(values[:-3])
            name, project, deleting = values[-3:]
            cluster = ClusterRef(values[2], name, bool(deleting))
            found[member.id] = ReadMember(member, cluster, project, version)
    return found


def live_holder_names(
    connection: Connection, action_ids: Iterable[str], dead_before: float
) -> dict[str, str]:
    """Of these lock holders, those still holding, each with its action's name.

    The rule is ``herd.store.locks.live_holders``'s (one rule for every lock reader).
    """
    alive = locks.live_holders(connection, set(action_ids), dead_before)
    names: dict[str, str] = {}
    for chunk in chunked(sorted(alive)):
        query = select(ActionRow.id, ActionRow.action).where(ActionRow.id.in_(chunk))
        names.update({str(i): str(name) for i, name in connection.execute(query)})
    return names


_INSERT_EVENTS = insert(EventRow)


def write_health(session: Session, written: Mapping[str, tuple[str, Sequence[Any]]]) -> None:
    """Store the members' health as their view values now say, in one executemany.

    ``written`` maps a member id to its cluster id and its view values after its last mark
    of the batch (``member_marks.HEALTH`` and the columns beside it).
    """
    nodes.write_health_many(
        session,
        [
            nodes.HealthWrite(
                node_id=node_id,
                cluster_id=cluster_id,
                health=values[member_marks.HEALTH],
                reason=values[member_marks.HEALTH_REASON],
                marked_by=values[member_marks.MARKED_BY],
                marked_at=values[member_marks.MARKED_AT],
                generation=values[member_marks.GENERATION],
            )
            for node_id, (cluster_id, values) in written.items()
        ],
    )


def record_events(connection: Connection, events: Sequence[Mapping[str, object]]) -> None:
    """Insert the events (each with every column but the id) in one statement."""
    if events:
        rows = [{"id": str(uuid.uuid4()), "meta_data": {}, **fields} for fields in events]
        connection.execute(_INSERT_EVENTS, rows)
