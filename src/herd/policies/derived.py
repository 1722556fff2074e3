"""Values derived from one immutable set of member columns, built on first use and kept.

A :class:`~herd.policies.columns.NodeColumns` never changes once built, so what a
ranking derives from it (group codes, the kept orders of the age criteria, bucket
masks) stays right for as long as the columns live. They are kept in a
:class:`DerivedValues` the columns own (their ``derived`` field): the columns are
frozen; the one mutable thing beside them is this explicit object.

Thread discipline (decisions share member tables across threads; this layer takes no
locks, import-linter keeps threads out of it): ``_values`` is touched only by single dict
operations, each atomic (``get``, ``setdefault``, a copy by ``dict()``), never iterated in
place. A value is built outside any of them (a sort of 100,000 members must not hold up
other decisions), so two decisions may build the same value at once; the first one stored
wins and both return it. Every value is a pure function of the columns, so either is right.
Stored values are never changed (numpy arrays are handed out as they are: readers must not
write into them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar, cast

T = TypeVar("T")


class DerivedValues:
    """A thread-safe memo of values derived from the immutable columns that own it."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[str, object] = {}

    def get(self, key: str, kind: type[T]) -> T | None:
        """The value kept under ``key`` if it is a ``kind``; None if none is yet."""
        value = self._values.get(key)
        return value if isinstance(value, kind) else None

    def get_or_build(self, key: str, build: Callable[[], T]) -> T:
        """The value under ``key``, built by ``build()`` (outside any lock) if none is kept.

        A key always holds what its one builder returns, so the kept value is a ``T``.
        """
        if key in self._values:
            return cast(T, self._values[key])
        return self.keep(key, build())

    def keep(self, key: str, value: T) -> T:
        """Keep ``value`` under ``key`` unless one is kept already; return the kept one."""
        return cast(T, self._values.setdefault(key, value))

    def keep_all(self, items: Iterable[tuple[str, object]]) -> None:
        """:meth:`keep` each pair (values carried over from other columns' derived values)."""
        for key, value in items:
            self._values.setdefault(key, value)

    def with_prefix(self, prefix: str | tuple[str, ...]) -> dict[str, object]:
        """A copy of the kept values whose key starts with ``prefix`` (or one of them)."""
        held = dict(self._values)  # one atomic copy: another decision may be adding values
        return {key: value for key, value in held.items() if key.startswith(prefix)}

    def __len__(self) -> int:
        return len(self._values)
