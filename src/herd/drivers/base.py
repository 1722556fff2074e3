"""The contract between the engine and the things that back nodes.

A driver makes and destroys real resources (an OS process, a simulated
server). Calls are blocking and are made from engine worker threads. A driver
keeps no state that the engine needs: whatever it must remember about a
resource goes into ``CreatedResource.data``, which the engine stores on the
node row and hands back in :class:`ResourceRef`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class NodeRequest:
    """What the engine asks a driver to create."""

    node_id: str
    name: str
    index: int
    cluster_id: str | None
    properties: Mapping[str, Any]  # the profile's validated properties
    placement: Mapping[str, Any] = field(default_factory=dict)  # zone / region_name
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CreatedResource:
    """A resource the driver made: its physical id and the data to keep on the node."""

    physical_id: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ResourceRef:
    """A resource the engine asks a driver about."""

    node_id: str
    physical_id: str | None
    data: Mapping[str, Any]
    properties: Mapping[str, Any]


@dataclass(frozen=True)
class HealthReport:
    healthy: bool
    reason: str = ""


class Driver(ABC):
    """Base class of drivers, registered under a profile type such as ``herd.process-1.0``."""

    profile_type: ClassVar[str]
    versions: ClassVar[tuple[str, ...]] = ("1.0",)

    @classmethod
    @abstractmethod
    def validate_properties(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        """Return the profile properties with defaults, or raise InvalidSpec naming the key."""

    @abstractmethod
    def create(self, request: NodeRequest) -> CreatedResource:
        """Create the resource; raise DriverError when it cannot be made."""

    @abstractmethod
    def delete(self, ref: ResourceRef) -> None:
        """Destroy the resource. A resource that is already gone is not an error."""

    @abstractmethod
    def check(self, ref: ResourceRef) -> HealthReport:
        """Tell whether the resource is alive and healthy."""

    def recover(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Bring a broken resource back; the default recreates it."""
        self.delete(ref)
        return self.create(request)

    def discover(self) -> dict[str, CreatedResource]:
        """Resources this driver owns, keyed by node id (used after a crash to find orphans)."""
        return {}

    def close(self) -> None:  # noqa: B027 - an optional hook, empty on purpose
        """Release driver-held resources when the engine stops (resources themselves stay)."""
