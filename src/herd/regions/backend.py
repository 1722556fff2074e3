"""What a region backend is: a store of regional copies that central and the agent both reach."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class RegionalCopy:
    """A cluster's record in one region (the group its members there join)."""

    cluster_id: str
    name: str
    project: str
    created_at: float
    region: str


@dataclass(frozen=True)
class CopyEvent:
    """One change to a region's copies, kept so tests can tell a resurrection from a first copy."""

    cluster_id: str
    op: str  # "CREATE" or "DELETE"
    actor: str
    at: float


#: fetches the central view of a cluster and builds its copy; None when central says 404
Fetch = Callable[[], RegionalCopy | None]


class RegionBackend(Protocol):
    """A region's store of copies.

    ``create_from`` runs ``fetch`` while holding the region's write lock, and
    ``delete`` takes the same lock. So a copy is created only from a central
    answer that was current when nothing could delete copies in between: either
    central's regional delete ran first (and the fetch then sees the tombstone,
    404), or the copy existed before that delete (and is deleted by it).
    """

    name: str

    def get(self, cluster_id: str) -> RegionalCopy | None:
        """The copy of one cluster, or None."""
        ...

    def copies(self) -> list[RegionalCopy]:
        """Every copy in the region."""
        ...

    def create_from(self, cluster_id: str, fetch: Fetch, actor: str) -> RegionalCopy | None:
        """Return the existing copy, or create one from ``fetch()`` under the region's lock."""
        ...

    def delete(self, cluster_id: str, actor: str) -> bool:
        """Delete a copy; return False when there was none (deleting is idempotent)."""
        ...

    def history(self) -> list[CopyEvent]:
        """Every create and delete of copies, oldest first."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
