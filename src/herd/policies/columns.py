"""Members as columns: what the victim ranking sorts.

A :class:`NodeColumns` holds one numpy array per sort key plus the member ids
and group labels. It is built once per member table (from a column-wise query,
or from snapshots) and never changed; what rankings derive from it (group codes,
kept orders) is kept in the :class:`~herd.policies.derived.DerivedValues` it owns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import repeat
from operator import attrgetter
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from herd.domain.snapshots import NodeSnapshot
from herd.policies.coded_texts import CodedTexts
from herd.policies.derived import DerivedValues
from herd.types import HealthStatus, NodeStatus

FloatArray = npt.NDArray[np.float64]
#: the derived key of :meth:`NodeColumns.id_objects` (a table with the same ids carries it)
IDS_KEY = "ids-objects"
IntArray = npt.NDArray[np.int64]


class Bucket(IntEnum):
    """Removal ranks of members; lower goes first."""

    ERROR = 0
    WARNING = 1
    UNHEALTHY = 2
    TAINTED = 3
    NEVER_CREATED = 4
    GOOD = 5


# Plain ints (not Bucket members): numpy converts an IntEnum member through a slow path.
_STATUS_BUCKET: dict[str, int] = {
    NodeStatus.ERROR.value: int(Bucket.ERROR),
    NodeStatus.WARNING.value: int(Bucket.WARNING),
}
_HEALTH_BUCKET: dict[str, int] = {HealthStatus.CHECK_FAILED.value: int(Bucket.UNHEALTHY)}


def _bucket_codes(values: Any, table: Mapping[str, int], n: int) -> npt.NDArray[np.int8]:
    """Map status-like values to buckets (GOOD for anything not in ``table``); read-only."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "U":
        codes = np.full(n, Bucket.GOOD, dtype=np.int8)
        for text, bucket in table.items():
            codes[values == text] = bucket
        return codes
    # str and StrEnum hash alike, so one dict serves both. Through bytes: a third of the
    # cost of np.fromiter for the 1,000 members a patch ranks again.
    codes = np.frombuffer(bytes(map(table.get, values, repeat(int(Bucket.GOOD)))), np.int8)
    if len(codes) != n:
        raise ValueError(f"{len(codes)} values for {n} members")
    return codes


@dataclass(frozen=True)
class NodeColumns:
    """Members as columns: what the ranking actually sorts.

    ``zone`` and ``region`` labels may be left out and are then read from
    ``source`` (the snapshots) the first time a per-group ranking needs them.
    """

    ids: Sequence[str]
    index: IntArray
    bucket: npt.NDArray[np.int8]
    created_at: FloatArray  # NaN: never created
    profile_created_at: FloatArray  # NaN: unknown
    deletion_cost: FloatArray
    protected: npt.NDArray[np.bool_]
    zone: Sequence[str | None] | None = None
    region: Sequence[str | None] | None = None
    source: Sequence[NodeSnapshot] | None = field(default=None, repr=False, compare=False)
    #: what rankings derived from these columns (owned by them; its own lock)
    derived: DerivedValues = field(default_factory=DerivedValues, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.ids)

    def labels(self, key: Literal["zone", "region"]) -> Sequence[str | None]:
        """The zone or region of every member."""
        given = self.zone if key == "zone" else self.region
        if given is not None:
            return given
        source = self.source or ()
        labels: Sequence[str | None] = self.derived.get_or_build(
            key, lambda: [getattr(n, key) for n in source] or [None] * len(self)
        )
        return labels

    def id_objects(self) -> npt.NDArray[np.object_]:
        """The ids as one numpy array of the same string objects (built once, kept).

        Victims are gathered from it with one ``take`` (``victims.Victims``): 10,000 ids
        by a Python call each cost 0.4 ms more, with the strings in the CPU's caches.
        """

        def build() -> npt.NDArray[np.object_]:
            array = np.empty(len(self.ids), dtype=object)
            array[:] = self.ids
            return array

        result: npt.NDArray[np.object_] = self.derived.get_or_build(IDS_KEY, build)
        return result

    def group_codes(self, key: Literal["zone", "region"]) -> tuple[IntArray, dict[str | None, int]]:
        """Integer codes of the groups (cached), and the code of each label."""

        def build() -> tuple[IntArray, dict[str | None, int]]:
            code_of: dict[str | None, int] = {}
            codes = np.fromiter(
                (code_of.setdefault(g, len(code_of)) for g in self.labels(key)),
                dtype=np.int64,
                count=len(self),
            )
            return codes, code_of

        result: tuple[IntArray, dict[str | None, int]] = self.derived.get_or_build(
            f"{key}-codes", build
        )
        return result

    @classmethod
    def from_nodes(cls, nodes: Sequence[NodeSnapshot]) -> NodeColumns:
        """Build columns from snapshots, one attribute at a time (zone/region lazily)."""
        n = len(nodes)
        if not n:
            return cls.from_arrays([])

        def column(name: str) -> list[Any]:
            return list(map(attrgetter(name), nodes))

        created = np.asarray(column("created_at"), dtype=np.float64)
        bucket = np.full(n, Bucket.GOOD, dtype=np.int8)
        bucket[np.isnan(created)] = Bucket.NEVER_CREATED
        bucket[np.asarray(column("tainted"), dtype=bool)] = Bucket.TAINTED
        bucket = np.minimum(bucket, _bucket_codes(column("health"), _HEALTH_BUCKET, n))
        bucket = np.minimum(bucket, _bucket_codes(column("status"), _STATUS_BUCKET, n))
        return cls(
            ids=column("id"),
            index=np.asarray(column("index"), dtype=np.int64),
            bucket=bucket,
            created_at=created,
            profile_created_at=np.asarray(column("profile_created_at"), dtype=np.float64),
            deletion_cost=np.asarray(column("deletion_cost"), dtype=np.float64),
            protected=np.asarray(column("protected"), dtype=bool),
            source=nodes,
        )

    @classmethod
    def from_arrays(
        cls,
        ids: Sequence[str],
        *,
        index: Sequence[int] | npt.ArrayLike | None = None,
        status: Sequence[str] | npt.ArrayLike | None = None,
        health: Sequence[str] | npt.ArrayLike | None = None,
        tainted: Sequence[bool] | npt.ArrayLike | None = None,
        created_at: Sequence[float | None] | npt.ArrayLike | None = None,
        profile_created_at: Sequence[float | None] | npt.ArrayLike | None = None,
        deletion_cost: Sequence[float] | npt.ArrayLike | None = None,
        protected: Sequence[bool] | npt.ArrayLike | None = None,
        zone: Sequence[str | None] | None = None,
        region: Sequence[str | None] | None = None,
    ) -> NodeColumns:
        """Build columns from plain sequences or arrays (e.g. straight from a query).

        Missing columns take the NodeSnapshot defaults. ``created_at`` of None or
        NaN means the member was never created.
        """
        n = len(ids)
        idx = np.arange(n, dtype=np.int64) if index is None else np.asarray(index, np.int64)
        created = _floats(created_at, n)
        bucket = removal_ranks(created, tainted, health, status)
        costs = np.zeros(n) if deletion_cost is None else np.asarray(deletion_cost, np.float64)
        guard = np.zeros(n, bool) if protected is None else np.asarray(protected, dtype=bool)
        return cls(
            ids=ids,
            index=idx,
            bucket=bucket,
            created_at=created,
            profile_created_at=_floats(profile_created_at, n),
            deletion_cost=costs,
            protected=guard,
            zone=zone,
            region=region,
        )


def removal_ranks(
    created_at: FloatArray,
    tainted: Sequence[bool] | npt.ArrayLike | None = None,
    health: Sequence[str] | npt.ArrayLike | None = None,
    status: Sequence[str] | npt.ArrayLike | None = None,
) -> npt.NDArray[np.int8]:
    """Each member's :class:`Bucket` (``created_at`` NaN: never created)."""
    return state_ranks(base_ranks(created_at, tainted), health, status)


def base_ranks(
    created_at: FloatArray, tainted: Sequence[bool] | npt.ArrayLike | None = None
) -> npt.NDArray[np.int8]:
    """Each member's :class:`Bucket` before its status and health count: TAINTED,
    NEVER_CREATED or GOOD (what a status change or a mark leaves as it was)."""
    bucket = np.full(len(created_at), Bucket.GOOD, dtype=np.int8)
    # Assigned from least to most severe so that the worst reason wins.
    bucket[np.isnan(created_at)] = Bucket.NEVER_CREATED
    if tainted is not None:
        bucket[np.asarray(tainted, dtype=bool)] = Bucket.TAINTED
    return bucket


def state_ranks(
    base: npt.NDArray[np.int8],
    health: Sequence[str] | npt.ArrayLike | None = None,
    status: Sequence[str] | npt.ArrayLike | None = None,
) -> npt.NDArray[np.int8]:
    """The members' :func:`base_ranks` lowered by their health and status."""
    n, bucket = len(base), base
    if health is not None:
        bucket = np.minimum(bucket, _bucket_codes(health, _HEALTH_BUCKET, n))
    if status is not None:
        bucket = np.minimum(bucket, _bucket_codes(status, _STATUS_BUCKET, n))
    return bucket


def state_ranks_at(
    base: npt.NDArray[np.int8], health: CodedTexts, status: CodedTexts, where: IntArray
) -> npt.NDArray[np.int8]:
    """:func:`state_ranks` of the members at ``where`` (``base``: their base ranks), their
    health and status read as codes: one rank per distinct text, not per member."""
    ranks = np.minimum(base, _ranks_of(health, _HEALTH_BUCKET)[health.codes[where]])
    np.minimum(ranks, _ranks_of(status, _STATUS_BUCKET)[status.codes[where]], out=ranks)
    return ranks


def _ranks_of(coded: CodedTexts, table: Mapping[str, int]) -> npt.NDArray[np.int8]:
    return np.array([table.get(text, int(Bucket.GOOD)) for text in coded.texts], np.int8)


def _floats(values: Sequence[float | None] | npt.ArrayLike | None, n: int) -> FloatArray:
    if values is None:
        return np.full(n, np.nan)
    return np.asarray(values, dtype=np.float64)


def columns_of(nodes: Sequence[NodeSnapshot] | NodeColumns) -> NodeColumns:
    """The columns of ``nodes``; a member table read column-wise already holds them."""
    if isinstance(nodes, NodeColumns):
        return nodes
    held = getattr(nodes, "columns", None)  # herd.policies.members.MemberTable
    if isinstance(held, NodeColumns):
        return held
    return NodeColumns.from_nodes(nodes)
