"""The victim ranking's sort keys, most significant first, and a full sort by all of them.

``herd.policies.ranking`` partitions on them one at a time; ``herd.policies.kept_order``
sorts every member by them once per member table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from herd.policies.columns import FloatArray, IntArray, NodeColumns
from herd.types import Criteria

#: A sort key evaluated lazily for some members (None: all of them, uncopied).
KeyFn = Callable[[IntArray | None], npt.NDArray[np.generic]]


Scalar = TypeVar("Scalar", bound=np.generic)


def column(values: npt.NDArray[Scalar]) -> Callable[[IntArray | None], npt.NDArray[Scalar]]:
    return lambda pos: values if pos is None else values[pos]


def key_functions(cols: NodeColumns, criteria: Criteria, seed: int) -> list[KeyFn]:
    """Sort keys, most significant first; ids are the last resort (``_full_sort``).

    Keys are evaluated only for the members a partition leaves in play, so a
    criterion (or a tie-break) costs nothing when the broken rank fills the count.
    """
    created, index = column(cols.created_at), column(cols.index)
    criterion: KeyFn
    if criteria is Criteria.OLDEST_FIRST:
        criterion = lambda pos: nan_last(created(pos))  # noqa: E731
    elif criteria is Criteria.YOUNGEST_FIRST:
        criterion = lambda pos: nan_last(-created(pos))  # noqa: E731
    elif criteria is Criteria.OLDEST_PROFILE_FIRST:
        profile = column(cols.profile_created_at)
        criterion = lambda pos: nan_last(profile(pos))  # noqa: E731
    else:
        # A keyed hash of the member index rather than a draw in input order:
        # a replay over the same members picks the same victims.
        criterion = lambda pos: _mix(index(pos), seed)  # noqa: E731
    return [
        column(cols.bucket),
        column(cols.deletion_cost),
        criterion,
        lambda pos: nan_last(created(pos)),
        index,
    ]


_MASK64 = (1 << 64) - 1


def _splitmix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """splitmix64's finaliser, in place (wrapping uint64 arithmetic)."""
    z += np.uint64(0x9E3779B97F4A7C15)
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def _mix(index: IntArray, seed: int) -> npt.NDArray[np.uint64]:
    """A seeded pseudo-random permutation key per member index."""
    key = _splitmix64(np.array([seed & _MASK64], dtype=np.uint64))[0]
    mixed = index.astype(np.uint64)
    mixed ^= key
    return _splitmix64(mixed)


def nan_last(values: FloatArray) -> FloatArray:
    """Replace NaN (never created, unknown profile age) by +inf: it sorts last."""
    missing = np.isnan(values)
    if not missing.any():
        return values
    values = values.copy()
    values[missing] = np.inf
    return values


def by_id(positions: IntArray, ids: Sequence[str]) -> IntArray:
    return np.asarray(sorted(positions.tolist(), key=ids.__getitem__), dtype=np.int64)


def full_sort(pos: IntArray, keys: list[KeyFn], ids: Sequence[str]) -> IntArray:
    """Sort ``pos`` by every key, then by id."""
    if len(pos) <= 1:
        return pos
    if not keys:
        return by_id(pos, ids)
    values = [key(pos) for key in keys]
    order = np.lexsort(values[::-1])
    ordered = pos[order]
    same = np.ones(len(ordered) - 1, dtype=bool)
    for column in values:
        sorted_column = column[order]
        same &= sorted_column[1:] == sorted_column[:-1]
    if same.any():
        # Rare: members equal on every numeric key fall back to their ids.
        starts = np.flatnonzero(~np.concatenate(([False], same)))
        ends = np.append(starts[1:], len(ordered))
        ordered = np.concatenate(
            [by_id(ordered[s:e], ids) for s, e in zip(starts, ends, strict=True)]
        )
    return ordered
