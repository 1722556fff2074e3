"""Finding a resource by id, name or short id, as Senlin's API does, within a project scope."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar, TypeVarTuple

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from herd.errors import MultipleChoices, NotFound
from herd.store.models import EventRow
from herd.store.models.base import OwnedMixin

Row = TypeVar("Row")
Columns = TypeVarTuple("Columns")


@dataclass(frozen=True)
class Scope:
    """Which rows a caller may see: one project, or every project for admins."""

    project: str
    all_projects: bool = False

    def apply(
        self, query: Select[*Columns], model: type[OwnedMixin] | type[EventRow]
    ) -> Select[*Columns]:
        if self.all_projects:
            return query
        return query.where(model.project == self.project)


def find(session: Session, model: type[Row], identity: str, scope: Scope, kind: str) -> Row:
    """Resolve ``identity`` (a full id, a unique name, or a unique id prefix) to a row.

    Raises:
        NotFound: nothing visible matches.
        MultipleChoices: a name or short id matches more than one row.
    """
    m: Any = model
    row = session.get(model, identity) if len(identity) == 36 else None
    if row is not None and (scope.all_projects or m_project(row) == scope.project):
        return row
    by_name = session.scalars(scope.apply(select(m).where(m.name == identity), m).limit(2)).all()
    if len(by_name) == 1:
        return by_name[0]  # type: ignore[no-any-return]
    if len(by_name) > 1:
        raise MultipleChoices(
            f"Multiple results found matching the query criteria '{identity}'. "
            "Please be more specific."
        )
    if len(identity) < 36:
        escaped = identity.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = select(m).where(m.id.like(escaped + "%", escape="\\"))
        by_prefix = session.scalars(scope.apply(query, m).limit(2)).all()
        if len(by_prefix) == 1:
            return by_prefix[0]  # type: ignore[no-any-return]
        if len(by_prefix) > 1:
            raise MultipleChoices(
                f"Multiple results found matching the query criteria '{identity}'. "
                "Please be more specific."
            )
    raise NotFound(kind, identity)


def find_event(session: Session, identity: str, scope: Scope) -> EventRow:
    """An event by full id or unique id prefix (events have no name)."""
    query = select(EventRow).where(EventRow.id.startswith(identity, autoescape=True))
    rows: list[EventRow] = list(session.scalars(scope.apply(query, EventRow).limit(2)).all())
    exact = [row for row in rows if row.id == identity]
    if len(rows) == 1 or exact:
        return exact[0] if exact else rows[0]
    if len(rows) > 1:
        raise MultipleChoices(
            f"Multiple results found matching the query criteria '{identity}'. "
            "Please be more specific."
        )
    raise NotFound("event", identity)


def m_project(row: Any) -> str:
    return str(row.project)
