"""The configured regions, and central's side of a cluster deletion: delete every copy."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from herd.config import RegionConfig, Settings
from herd.errors import HerdError
from herd.regions.backend import RegionBackend
from herd.regions.sim import SimRegionBackend
from herd.store.models import ClusterRow

log = logging.getLogger(__name__)

CENTRAL_ACTOR = "central"


def region_url(config: RegionConfig, data_dir: Path) -> str:
    """The store of a ``sim`` region: its configured URL or ``<data_dir>/regions/<name>.db``."""
    if config.url:
        return config.url
    return f"sqlite:///{(data_dir / 'regions' / f'{config.name}.db').resolve()}"


def open_backend(config: RegionConfig, data_dir: Path) -> RegionBackend:
    """Open the backend of one region (only ``sim`` exists so far)."""
    if config.backend != "sim":  # pragma: no cover - the config type allows only "sim"
        raise HerdError(f"Unknown region backend '{config.backend}' for region {config.name}.")
    return SimRegionBackend(
        config.name, region_url(config, data_dir), delete_latency=config.delete_latency
    )


class Regions:
    """Every configured region's backend, by name."""

    def __init__(self, backends: Mapping[str, RegionBackend]) -> None:
        """Hold already opened backends (see :meth:`from_settings`)."""
        self.backends = dict(backends)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """Open the backend of every region in ``settings.regions``."""
        return cls({r.name: open_backend(r, settings.data_dir) for r in settings.regions})

    def delete_copies(self, cluster: ClusterRow) -> str | None:
        """Delete the cluster's copy in every region; return an error text, or None.

        Every region is asked, not only those in ``cluster.data['regions']``: a
        copy may exist where central never recorded one (an agent's on-demand
        fetch), and deleting a missing copy costs one query.
        """
        errors = []
        for name, backend in sorted(self.backends.items()):
            try:
                backend.delete(cluster.id, CENTRAL_ACTOR)
            except Exception as exc:  # a region's failure must not hide the others'
                log.warning("deleting the copy of %s in %s failed: %s", cluster.id, name, exc)
                errors.append(f"region {name}: {exc}")
        return "; ".join(errors) or None

    def holding(self, cluster_id: str) -> list[str]:
        """The regions that still hold a copy of the cluster (one lookup per region)."""
        found = []
        for name, backend in sorted(self.backends.items()):
            try:
                if backend.get(cluster_id) is not None:
                    found.append(name)
            except Exception as exc:  # an unreachable region may hold one: say so
                log.warning("reading the copy of %s in %s failed: %s", cluster_id, name, exc)
                found.append(f"{name} (unreachable)")
        return found

    def close(self) -> None:
        """Close every backend."""
        for backend in self.backends.values():
            backend.close()
