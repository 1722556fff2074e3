"""What a shrink decision chose: the victims in removal order, and why each.

A decision over a large cluster chooses thousands of victims, and what reads
them wants columns: the deletion policy stores the candidate ids and the rules
side by side, the engine stores them with the action. :class:`Victims` holds
those two lists and builds a :class:`Victim` only for code that walks the
victims one by one (the preview, tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple, overload


class Victim(NamedTuple):
    """A member chosen for removal and the rule that chose it."""

    node_id: str
    rule: str


class Victims(Sequence[Victim]):
    """Victims in removal order, held as a list of node ids and a list of rules.

    Never changed once built; ``node_ids`` and ``rules`` hand out copies.
    """

    __slots__ = ("_ids", "_rules")

    def __init__(self, node_ids: Iterable[str] = (), rules: Iterable[str] = ()) -> None:
        self._ids = list(node_ids)
        self._rules = list(rules)
        if len(self._ids) != len(self._rules):
            raise ValueError(f"{len(self._ids)} victims but {len(self._rules)} rules")

    @classmethod
    def by_one_rule(cls, node_ids: Iterable[str], rule: str) -> Victims:
        """Victims that one rule chose (explicit candidates, a node deleted directly)."""
        ids = list(node_ids)
        return cls(ids, [rule] * len(ids))

    @classmethod
    def of(cls, victims: Iterable[Victim]) -> Victims:
        """Victims from single ones."""
        pairs = list(victims)
        return cls([v.node_id for v in pairs], [v.rule for v in pairs])

    @classmethod
    def joined(cls, parts: Iterable[Victims]) -> Victims:
        """The victims of ``parts``, one after the other."""
        ids: list[str] = []
        rules: list[str] = []
        for part in parts:
            ids += part._ids
            rules += part._rules
        return cls(ids, rules)

    @property
    def node_ids(self) -> list[str]:
        return list(self._ids)

    @property
    def rules(self) -> list[str]:
        return list(self._rules)

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, position: int) -> Victim: ...

    @overload
    def __getitem__(self, position: slice) -> Victims: ...

    def __getitem__(self, position: int | slice) -> Victim | Victims:
        if isinstance(position, slice):
            return Victims(self._ids[position], self._rules[position])
        return Victim(self._ids[position], self._rules[position])

    def __iter__(self) -> Iterator[Victim]:
        # tuple.__new__ through map: no Python frame per victim.
        return map(tuple.__new__, repeat(Victim), zip(self._ids, self._rules, strict=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Victims):
            return self._ids == other._ids and self._rules == other._rules
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Victims({list(self)!r})"


@dataclass(frozen=True, slots=True)
class RankResult:
    """The victims in removal order; ``error`` is set when fewer could be chosen."""

    victims: Victims
    requested: int
    shortfall: int = 0
    error: str | None = None

    @property
    def node_ids(self) -> list[str]:
        return self.victims.node_ids


def shortfall_text(requested: int, available: int) -> str:
    """The reason given when protection leaves too few removable members."""
    nodes = "node" if requested == 1 else "nodes"
    members = "member" if available == 1 else "members"
    return f"Cannot remove {requested} {nodes}: only {available} unprotected {members}"
