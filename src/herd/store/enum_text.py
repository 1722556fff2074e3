"""Enum-typed columns: a ``StrEnum`` stored as its string value.

The columns stay ``VARCHAR`` (the stored values are Senlin's wire values, and no
migration is needed); rows read back as enum members, and a value that is not a
member is refused when it is written, before it reaches the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TypeVar

from sqlalchemy import ColumnElement, Dialect, String, false
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.types import TypeDecorator

E = TypeVar("E", bound=StrEnum)
T = TypeVar("T")


class EnumText(TypeDecorator[E]):
    impl = String
    cache_ok = True

    def __init__(self, enum: type[E], length: int) -> None:
        super().__init__(length)
        self.enum = enum
        # A dict lookup per value read: Enum's own call is several times slower, and the
        # engine reads 100,000 statuses for one scale-in decision.
        self._members: dict[str, E] = {m.value: m for m in enum}
        # member or its string -> the plain string (str and StrEnum hash alike)
        self._wire: dict[str, str] = {m.value: str.__str__(m) for m in enum}

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        wire = self._wire.get(value)
        # Not a member: the enum's own call raises ValueError naming the value.
        return wire if wire is not None else self.enum(value).value

    def process_result_value(self, value: str | None, dialect: Dialect) -> E | None:
        if value is None:
            return None
        member = self._members.get(value)
        return member if member is not None else self.enum(value)

    def copy(self, **kw: object) -> EnumText[E]:
        return EnumText(self.enum, getattr(self.impl_instance, "length", None) or 0)


def equal_to_any(
    column: ColumnElement[T] | QueryableAttribute[T], values: Sequence[object]
) -> ColumnElement[bool]:
    """``column`` holds one of ``values``: for an enum column, values that are not members
    match nothing (a list filtered on an unknown status is empty, not an error)."""
    kind = getattr(column, "type", None)
    if isinstance(kind, EnumText):
        values = [v for v in values if v in kind._members]
        if not values:
            return false()
    clause: ColumnElement[bool] = (
        column == values[0] if len(values) == 1 else column.in_(list(values))
    )
    return clause
