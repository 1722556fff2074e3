"""Adopting resources herd did not create (Senlin API 1.7): the driver contract."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class AdoptedResource:
    """An existing resource as a node would hold it, and the profile that describes it."""

    physical_id: str
    properties: dict[str, object]  # validated profile properties (what recreating it would run)
    data: dict[str, object] = field(default_factory=dict)  # the node's data


@runtime_checkable
class AdoptionDriver(Protocol):
    """What a driver implements to support adopt and adopt-preview."""

    def adopt_preview(
        self, identity: str, overrides: Mapping[str, object] | None, snapshot: bool
    ) -> AdoptedResource:
        """Describe the resource ``identity`` without changing anything.

        Raises:
            InvalidRequest: the identity is malformed, unknown, or cannot be adopted.
            InvalidSpec: ``overrides`` make invalid profile properties.
            Conflict: the resource already backs a node.
        """
        ...

    def claim(self, resource: AdoptedResource, node_id: str) -> None:
        """Record that ``resource`` now backs node ``node_id``."""
        ...


def merge_overrides(
    properties: Mapping[str, object], overrides: Mapping[str, object] | None
) -> dict[str, object]:
    """Senlin's adopt overrides: top-level keys replace the generated properties."""
    merged = dict(properties)
    for key, value in (overrides or {}).items():
        merged[str(key)] = value
    return merged
