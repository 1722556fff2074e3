"""What a shrink decision chose: the victims in removal order, and why each.

A decision over a large cluster chooses thousands of victims, and what reads
them wants columns: the deletion policy stores the candidate ids and the rules
side by side, the engine stores them with the action. :class:`Victims` holds
those two lists and builds a :class:`Victim` only for code that walks the
victims one by one (the preview, tests).

A ranking hands its victims out as positions in the member table's ids and rule
codes (:meth:`Victims.at_positions`): the id strings are gathered when first read,
and the ids and the rules each on their own (the engine reads the ids alone).
Gathering 10,000 ids touches 10,000 string objects scattered over memory, which
cost a decision after a member change (when they were out of the CPU's caches)
more than the ranking itself (issue 28): given the ids as one numpy array of
objects (``NodeColumns.id_objects``), they are gathered by one ``take`` in C
rather than a Python call per victim.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple, overload

import numpy as np
import numpy.typing as npt


class Victim(NamedTuple):
    """A member chosen for removal and the rule that chose it."""

    node_id: str
    rule: str


#: The member ids victims are positions in: a sequence, or a numpy array of the id strings.
Ids = Sequence[str] | npt.NDArray[np.object_]
#: Victims not gathered yet: the ids they are positions in, those positions, the rule
#: texts, and each victim's code in the texts.
_Held = tuple[Ids, npt.NDArray[np.int64], Sequence[str], npt.NDArray[np.integer]]


class Victims(Sequence[Victim]):
    """Victims in removal order, held as a list of node ids and a list of rules.

    Never changed once built; ``node_ids`` and ``rules`` hand out copies. Victims
    built :meth:`at_positions` gather each list on first read (one attribute assigned at
    once: two threads reading at once both build the same list, and either is kept).
    """

    __slots__ = ("_held", "_id_list", "_rule_list")

    def __init__(self, node_ids: Iterable[str] = (), rules: Iterable[str] = ()) -> None:
        ids, texts = list(node_ids), list(rules)
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} victims but {len(texts)} rules")
        self._id_list: list[str] | None = ids
        self._rule_list: list[str] | None = texts
        self._held: _Held | None = None

    @classmethod
    def at_positions(
        cls,
        ids: Ids,
        positions: npt.NDArray[np.int64],
        texts: Sequence[str],
        codes: npt.NDArray[np.integer],
    ) -> Victims:
        """Victims ``ids[p]`` for ``p`` in ``positions``, each chosen by the rule
        ``texts[c]`` for its ``c`` in ``codes``; neither sequence may change after."""
        if len(positions) != len(codes):
            raise ValueError(f"{len(positions)} victims but {len(codes)} rules")
        victims = cls.__new__(cls)
        victims._id_list = victims._rule_list = None
        victims._held = (ids, positions, texts, codes)
        return victims

    @property
    def _ids(self) -> list[str]:
        gathered = self._id_list
        if gathered is None:
            assert self._held is not None
            ids, positions = self._held[0], self._held[1]
            if isinstance(ids, np.ndarray):
                gathered = ids[positions].tolist()  # one take and one list, both in C
            else:
                # map() with __getitem__ gathers without a Python frame per victim.
                gathered = list(map(ids.__getitem__, positions.tolist()))
            self._id_list = gathered
        return gathered

    @property
    def _rules(self) -> list[str]:
        gathered = self._rule_list
        if gathered is None:
            assert self._held is not None
            texts, codes = self._held[2], self._held[3]
            gathered = list(map(texts.__getitem__, codes.tolist()))
            self._rule_list = gathered
        return gathered

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
        """The victims of ``parts``, one after the other (still positions when every part
        is positions in the same ids)."""
        parts = list(parts)
        held = [h for h in (part._held for part in parts) if h is not None]
        if parts and len(held) == len(parts) and all(h[0] is held[0][0] for h in held):
            return cls._joined_positions(held)
        ids: list[str] = []
        rules: list[str] = []
        for part in parts:
            ids += part._ids
            rules += part._rules
        return cls(ids, rules)

    @classmethod
    def _joined_positions(cls, held: list[_Held]) -> Victims:
        texts: list[str] = []
        codes: list[npt.NDArray[np.int64]] = []
        for _, _, part_texts, part_codes in held:
            codes.append(part_codes.astype(np.int64) + len(texts))
            texts += part_texts
        positions = np.concatenate([part[1] for part in held])
        return cls.at_positions(held[0][0], positions, texts, np.concatenate(codes))

    @property
    def node_ids(self) -> list[str]:
        return list(self._ids)

    @property
    def rules(self) -> list[str]:
        return list(self._rules)

    def __len__(self) -> int:
        held = self._held
        return len(self._ids) if held is None else len(held[1])

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
