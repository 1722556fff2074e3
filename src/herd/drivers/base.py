"""The contract between the engine and the things that back nodes.

A driver makes and destroys real resources (an OS process, a simulated
server). Calls are blocking and are made from engine worker threads. A driver
keeps no state that the engine needs: whatever it must remember about a
resource goes into ``CreatedResource.data``, which the engine stores on the
node row and hands back in :class:`ResourceRef`.

Besides create, delete and check, a driver may recover a resource in place
(``reboot``, ``rebuild``; see ``supports_reboot`` / ``supports_rebuild``) and
report failures it sees by itself (``watch`` plus listeners), which is what the
health manager's LIFECYCLE_EVENTS detection listens to.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from herd.errors import DriverError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NodeRequest:
    """What the engine asks a driver to create."""

    node_id: str
    name: str
    index: int
    cluster_id: str | None
    properties: Mapping[str, Any]  # the profile's validated properties
    placement: Mapping[str, str] = field(default_factory=dict)  # zone / region_name
    metadata: Mapping[str, str] = field(default_factory=dict)


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
class ServerGroup:
    """A group of resources the backend places together or apart (a Nova server group)."""

    id: str
    name: str
    policy: str  # affinity, anti-affinity, soft-affinity, soft-anti-affinity


@dataclass(frozen=True)
class HealthReport:
    healthy: bool
    reason: str = ""


@dataclass(frozen=True)
class ResourceEvent:
    """A failure the driver saw by itself (a process exited, a server broke)."""

    node_id: str
    physical_id: str
    reason: str


ResourceListener = Callable[[ResourceEvent], None]


class ResourceGone(DriverError):
    """The backend no longer has the resource (``current_details``)."""


class Driver(ABC):
    """Base class of drivers, registered under a profile type such as ``herd.process-1.0``."""

    profile_type: ClassVar[str]
    versions: ClassVar[tuple[str, ...]] = ("1.0",)
    #: ``reboot`` restarts the same resource (REBOOT recovery)
    supports_reboot: ClassVar[bool] = False
    #: ``rebuild`` rebuilds the resource in place (REBUILD recovery)
    supports_rebuild: ClassVar[bool] = False
    #: ``update`` moves a resource to a new profile of the same type in place
    supports_update: ClassVar[bool] = False

    def __init__(self) -> None:
        self._listeners: list[ResourceListener] = []
        self._listeners_lock = threading.Lock()

    @classmethod
    @abstractmethod
    def validate_properties(cls, properties: Mapping[str, object]) -> dict[str, object]:
        """Return the profile properties with defaults, or raise InvalidSpec naming the key."""

    def check_against_backend(self, properties: Mapping[str, object]) -> None:  # noqa: B027
        """At profile create and validate only: refuse what the backend lacks.

        ``validate_properties`` is pure (the engine calls it on every load); a
        driver whose properties name things in a cloud (a flavor, an image) checks
        them here and raises InvalidSpec naming the property. The default checks
        nothing.
        """

    def calls_are_quick(self, properties: Mapping[str, object]) -> bool:
        """Whether ``create`` and ``delete`` with these properties return at once.

        The engine runs such calls in batches, many per pool task, instead of one
        thread hop per node; a driver that waits on anything must keep the default.
        """
        return False

    @abstractmethod
    def create(self, request: NodeRequest) -> CreatedResource:
        """Create the resource; raise DriverError when it cannot be made."""

    @abstractmethod
    def delete(self, ref: ResourceRef) -> None:
        """Destroy the resource. A resource that is already gone is not an error."""

    def create_many(self, requests: Sequence[NodeRequest]) -> list[CreatedResource | Exception]:
        """Create several resources: each result is the resource or why that one failed.

        The engine calls this for drivers whose calls are quick; the default
        creates one after another.
        """
        out: list[CreatedResource | Exception] = []
        for request in requests:
            try:
                out.append(self.create(request))
            except Exception as exc:  # reported per node, as a single create would be
                out.append(exc)
        return out

    def delete_many(self, refs: Sequence[ResourceRef]) -> list[Exception | None]:
        """Destroy several resources: each result is None or why that one failed."""
        out: list[Exception | None] = []
        for ref in refs:
            try:
                self.delete(ref)
                out.append(None)
            except Exception as exc:
                out.append(exc)
        return out

    @abstractmethod
    def check(self, ref: ResourceRef) -> HealthReport:
        """Tell whether the resource is alive and healthy."""

    def recover(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Bring a broken resource back; the default recreates it."""
        self.delete(ref)
        return self.create(request)

    def reboot(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Stop and start the same resource; return it as it now is.

        The node's operation ``reboot`` and REBOOT recovery both call this. Drivers
        that can set ``supports_reboot``; the default refuses.

        Raises:
            DriverError: the driver cannot reboot, or the reboot failed.
        """
        raise DriverError(f"profile type {self.profile_type} cannot REBOOT a node")

    def update(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Bring the resource from ``ref.properties`` (its old profile) to ``request.properties``
        (the new one, same type) in place; drivers with ``supports_update`` override. Without
        it a profile change recreates the resource.

        Raises:
            DriverError: the driver cannot update, or the update failed.
        """
        raise DriverError(f"profile type {self.profile_type} cannot update a node in place")

    def rebuild(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """Rebuild the resource in place (REBUILD recovery); drivers that can override.

        Raises:
            DriverError: the driver cannot rebuild, or the rebuild failed.
        """
        raise DriverError(f"profile type {self.profile_type} cannot REBUILD a node")

    def current_details(self, ref: ResourceRef) -> dict[str, Any] | None:
        """The resource's details as the backend has them now, for one node shown with
        ``show_details`` (``herd.api.services.live_details``); None (the default): the
        stored ``data`` are the details. Called from an API thread, bounded by the API.

        Raises:
            ResourceGone: the backend no longer has the resource.
            DriverError: the backend could not be asked.
        """
        return None

    # -- events (LIFECYCLE_EVENTS) ------------------------------------------------------

    def watch(self, ref: ResourceRef) -> bool:
        """Report this resource's failures to the listeners from now on.

        A resource that has already failed is reported at once. Returns False when
        the driver sees no events (the default).
        """
        return False

    def unwatch(self, node_id: str) -> None:  # noqa: B027 - optional, empty on purpose
        """Stop reporting events of a node."""

    def add_listener(self, listener: ResourceListener) -> None:
        """Call ``listener`` for every event of a watched resource (from a driver thread)."""
        with self._listeners_lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: ResourceListener) -> None:
        with self._listeners_lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def emit(self, event: ResourceEvent) -> None:
        """Hand ``event`` to every listener; a failing listener does not stop the others."""
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # a listener bug must not kill the driver's watcher thread
                log.exception("resource event listener failed")

    # -- server groups (the affinity policy; only drivers whose backend has them) -------------

    def find_server_group(
        self, name_or_id: str, properties: Mapping[str, object]
    ) -> ServerGroup | None:
        """The group named (or with the id) ``name_or_id`` where ``properties`` put nodes.

        Raises:
            DriverError: the backend has no server groups, or could not be asked.
        """
        raise DriverError(f"{self.profile_type} has no server groups")

    def create_server_group(
        self, name: str, policy: str, properties: Mapping[str, object]
    ) -> ServerGroup:
        """Make a group with ``policy`` where ``properties`` put nodes."""
        raise DriverError(f"{self.profile_type} has no server groups")

    def delete_server_group(self, group_id: str, properties: Mapping[str, object]) -> None:
        """Delete the group; one already gone is not an error."""
        raise DriverError(f"{self.profile_type} has no server groups")

    def discover(self) -> dict[str, CreatedResource]:
        """Resources this driver owns, keyed by node id (used after a crash to find orphans)."""
        return {}

    def close(self) -> None:  # noqa: B027 - an optional hook, empty on purpose
        """Release driver-held resources when the engine stops (resources themselves stay)."""
