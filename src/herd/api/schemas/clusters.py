"""Cluster metadata bodies (openstacksdk's ``set_cluster_metadata``)."""

from __future__ import annotations

from typing import Any

from herd.api.schemas.parsing import RequestModel


class ClusterMetadata(RequestModel):
    """``{"metadata": {...}}`` for ``POST`` (merge) and ``PUT`` (replace)."""

    metadata: dict[str, Any]
