"""Regions: where the regional copies of clusters live, and how central deletes them.

A cluster with members in region R has a regional copy there (its regional
record). Regional agents (``herd.agent``) create copies; the central engine
deletes them during CLUSTER_DELETE, before the central row (docs/deletion.md).
"""

from herd.regions.backend import CopyEvent, RegionalCopy, RegionBackend
from herd.regions.service import Regions, open_backend

__all__ = ["CopyEvent", "RegionBackend", "RegionalCopy", "Regions", "open_backend"]
