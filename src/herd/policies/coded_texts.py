"""A text per member held as one byte per member: a member table's statuses and healths.

A decision after another process changed the status of 1% of a cluster's members
patches its member table (``members.MemberTable.with_states``). Held as a list of
100,000 strings, the statuses were copied whole for 1,000 new values (0.13 ms of the
decision: 800 KB written, a reference count touched per member); held as codes, the copy
is 100 KB of bytes and the new values are put in with one numpy assignment (issue 28).
The list is built only when code reads the table's lists whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
#: the most distinct texts one byte tells apart (statuses and healths are a dozen at most)
_MOST = 256


@dataclass(frozen=True, slots=True)
class CodedTexts:
    """Texts by member: ``texts[codes[i]]`` is member ``i``'s. Never changed once built."""

    codes: npt.NDArray[np.uint8]
    texts: tuple[str, ...]
    code_of: dict[str, int] = field(repr=False, compare=False)

    @classmethod
    def of(cls, values: Sequence[str]) -> CodedTexts | None:
        """``values`` coded (None: more distinct texts than a byte holds)."""
        texts = tuple(dict.fromkeys(values))  # in order of first use: no comparison needed
        if len(texts) > _MOST:
            return None
        code_of = {text: code for code, text in enumerate(texts)}
        codes = np.frombuffer(bytes(map(code_of.__getitem__, values)), np.uint8)
        return cls(codes, texts, code_of)

    def __getitem__(self, position: int) -> str:
        return self.texts[int(self.codes[position])]

    def at(self, where: IntArray) -> list[str]:
        """The texts of the members at ``where``."""
        return list(map(self.texts.__getitem__, self.codes[where].tolist()))

    def as_list(self) -> list[str]:
        """Every member's text, in order (the same string objects as ``texts``)."""
        texts = np.empty(len(self.texts), dtype=object)
        texts[:] = self.texts
        values: list[str] = texts[self.codes].tolist()
        return values

    def updated(self, where: IntArray, given: list[str | None]) -> CodedTexts | None:
        """These texts with ``given`` put at ``where`` (None: that member's is unchanged);
        self if none differs; None if the new texts make more distinct ones than a byte
        holds."""
        if None in given:
            before = self.at(where)
            now: list[str] = [b if g is None else g for b, g in zip(before, given, strict=True)]
        else:
            now = given  # type: ignore[assignment]  # no None in it
        texts, code_of = self.texts, self.code_of
        new = [text for text in dict.fromkeys(now) if text not in code_of]
        if new:
            texts = (*texts, *new)
            if len(texts) > _MOST:
                return None
            code_of = {text: code for code, text in enumerate(texts)}
        codes = np.frombuffer(bytes(map(code_of.__getitem__, now)), np.uint8)
        if not new and np.array_equal(self.codes[where], codes):
            return self
        changed = self.codes.copy()
        changed[where] = codes
        return CodedTexts(changed, texts, code_of)
