"""The ``os.nova.server`` driver: a node is a Nova server, made through openstacksdk.

Each server carries two tags, this herd's owner tag and ``herd-node-<node id>``,
and Senlin's metadata (``cluster_node_id``...). ``create`` first looks for a
server with the node's tag, so a create resumed after ``kill -9`` finds the
server its first run made instead of booting a second one; ``discover`` lists
the owner's servers so the engine can adopt those whose node has no physical
id yet and delete those without a node.

A server that goes to ERROR, or does not become ACTIVE in time, is deleted
before the create fails (with Nova's fault text): nothing half made is left.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from herd.drivers.base import (
    CreatedResource,
    HealthReport,
    NodeRequest,
    ResourceEvent,
    ResourceRef,
    ServerGroup,
)
from herd.drivers.nova.cloud import NovaCloud, NovaOptions, node_tag
from herd.drivers.nova.cloud_driver import CloudDriver
from herd.drivers.nova.groups import create_group, delete_group, find_group
from herd.drivers.nova.notifications import NotificationListener
from herd.drivers.nova.operations import NOVA_OPERATIONS, NovaOperationsMixin
from herd.drivers.nova.placement import keep_group, region_of
from herd.drivers.nova.resolve import Resolver
from herd.drivers.nova.sdk import NovaConnection
from herd.drivers.nova.servers import (
    UNHEALTHY,
    ServerFailed,
    boot_arguments,
    delete_and_wait,
    fault_text,
    find_by_tag,
    get_server,
    node_data,
    server_name,
    wait_for,
)
from herd.drivers.nova.spec import PROPERTIES_SCHEMA, validate_server_properties
from herd.drivers.nova.trusts import TrustedConnections
from herd.drivers.nova.updates import update_server
from herd.drivers.operations import OperationSpec
from herd.errors import DriverError

log = logging.getLogger(__name__)


class NovaServerDriver(NovaOperationsMixin, CloudDriver):
    """Nova servers on the configured cloud."""

    profile_type = "os.nova.server"
    # 1.1 (subnet) and 1.2 (volume_type) added keys; Senlin's schema was the same for all
    versions = ("1.0", "1.1", "1.2")
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2016.04"}],
        "1.1": [{"status": "SUPPORTED", "since": "2023.04"}],
        "1.2": [{"status": "SUPPORTED", "since": "2023.07"}],
    }
    properties_schema: ClassVar[dict[str, dict[str, Any]]] = PROPERTIES_SCHEMA
    operations_schema: ClassVar[Mapping[str, OperationSpec]] = NOVA_OPERATIONS
    supports_reboot = True
    supports_rebuild = True
    supports_update = True

    def __init__(
        self,
        options: NovaOptions,
        *,
        cloud: NovaCloud | None = None,
        trusts: TrustedConnections | None = None,
    ) -> None:
        """See :class:`CloudDriver`; the notification listener starts with the first watch."""
        super().__init__(options, cloud=cloud, trusts=trusts)
        self.resolver = Resolver(self.cloud)
        self._watched: dict[str, str] = {}  # server id -> node id
        #: server id -> until when its events are herd's own doing (a stop, a reboot)
        self._quiet: dict[str, float] = {}
        self._watch_lock = threading.Lock()
        self._events: NotificationListener | None = None  # started by the first watch

    @classmethod
    def validate_properties(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        """Senlin's spec, checked without the cloud (see :mod:`herd.drivers.nova.spec`)."""
        return validate_server_properties(properties)

    def check_against_backend(self, properties: Mapping[str, Any]) -> None:
        """At profile create/validate: the names exist and the cloud can honour the spec.

        With trusts nothing acts for a profile (only for nodes): the names are checked
        when a node boots, through its owner's trust.
        """
        if self.trusts is None:
            self.resolver.check(properties)

    def node_connection(self, node_id: str, region: str | None) -> NovaConnection:
        """The connection acting for a node: its owner's trust, or the configured cloud."""
        if self.trusts is not None:
            return self.trusts.connection(node_id, region)
        return self.cloud.connection(region)

    def _shared_connection(self, region: str | None, doing: str) -> NovaConnection:
        """The configured cloud, for calls that act for no node; refused with trusts."""
        self.refuse_with_trusts(doing)
        return self.cloud.connection(region)

    # -- create / delete -----------------------------------------------------------------

    def create(self, request: NodeRequest) -> CreatedResource:
        """Boot the node's server and wait until it is ACTIVE (or find the one made before).

        Raises:
            DriverError: Nova refused, the server went to ERROR (Nova's fault text) or
                was not ACTIVE in time; in the last two cases it has been deleted.
        """
        region = region_of(request.placement, request.properties)
        conn = self.node_connection(request.node_id, region)
        found = self._resume(conn, request.node_id, region)
        if found is not None:
            return keep_group(request, found)
        flavor_id, image_id, networks = self.resolver.boot_ids(conn, region, request.properties)
        kwargs = boot_arguments(
            request,
            flavor_id=flavor_id,
            image_id=image_id,
            owner_tag=self.options.owner_tag,
            networks=networks,
        )
        try:
            server = self.cloud.call_once(
                "creating the server", conn.compute.create_server, **kwargs
            )
        except DriverError:
            # The answer may be lost while Nova made the server: look for it by its tag.
            self._remove_tagged(conn, request.node_id)
            raise
        return keep_group(request, self._settle(conn, server.id, region, "booting"))

    def _settle(
        self, conn: NovaConnection, server_id: str, region: str | None, doing: str
    ) -> CreatedResource:
        """Wait for ACTIVE; on ERROR or timeout delete the server and fail with why."""
        try:
            server = wait_for(self.cloud, conn, server_id, {"ACTIVE"}, self.options.timeout, doing)
        except DriverError as exc:
            reason = str(exc)
            try:
                delete_and_wait(self.cloud, conn, server_id, self.options.timeout)
            except DriverError as cleanup:
                raise DriverError(
                    f"{reason}; deleting server {server_id} failed too: {cleanup}"
                ) from None
            raise DriverError(
                f"{reason} (server {server_id} was deleted)", retryable=False
            ) from None
        return CreatedResource(server.id, node_data(server, region))

    def _resume(
        self, conn: NovaConnection, node_id: str, region: str | None
    ) -> CreatedResource | None:
        """The server an earlier run of this create made (engine killed meanwhile), if any."""
        servers = find_by_tag(self.cloud, conn, node_tag(node_id))
        for extra in servers[1:]:  # never more than one server per node
            delete_and_wait(self.cloud, conn, extra.id, self.options.timeout)
        if not servers:
            return None
        log.info("node %s: resuming with its server %s", node_id, servers[0].id)
        try:
            return self._settle(conn, servers[0].id, region, "booting (resumed)")
        except DriverError:
            return None  # it failed and was deleted: boot a fresh one

    def _remove_tagged(self, conn: NovaConnection, node_id: str) -> None:
        try:
            for server in find_by_tag(self.cloud, conn, node_tag(node_id)):
                delete_and_wait(self.cloud, conn, server.id, self.options.timeout)
        except DriverError as exc:
            log.warning("node %s: cannot clean up after a failed boot: %s", node_id, exc)

    def delete(self, ref: ResourceRef) -> None:
        """Delete the server and wait until Nova no longer has it (a 404 is success)."""
        self.unwatch(ref.node_id)
        if not ref.physical_id:
            return
        conn = self.node_connection(
            ref.node_id, region_of(ref.data.get("placement") or {}, ref.properties)
        )
        delete_and_wait(self.cloud, conn, ref.physical_id, self.options.timeout)

    # -- health ----------------------------------------------------------------------------

    def check(self, ref: ResourceRef) -> HealthReport:
        """Healthy unless the server is gone, or ERROR, SHUTOFF or DELETED (Senlin's list).

        When Nova cannot be asked the node counts as healthy, as in Senlin: a cloud
        API blip must not make herd replace every server.
        """
        if not ref.physical_id:
            return HealthReport(False, "node has no server")
        conn = self.node_connection(
            ref.node_id, region_of(ref.data.get("placement") or {}, ref.properties)
        )
        try:
            server = get_server(self.cloud, conn, ref.physical_id)
        except DriverError as exc:
            log.warning("node %s: cannot ask Nova, counted healthy: %s", ref.node_id, exc)
            return HealthReport(True, f"Nova could not be asked: {exc}")
        if server is None:
            return HealthReport(False, f"server {ref.physical_id} does not exist")
        if server.status in UNHEALTHY:
            detail = f": {fault_text(server)}" if server.status == "ERROR" else ""
            return HealthReport(False, f"server {ref.physical_id} is {server.status}{detail}")
        return HealthReport(True)

    # -- recovery in place -----------------------------------------------------------------

    def reboot(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """REBOOT recovery: a HARD reboot (Senlin's default for recovery), then ACTIVE."""
        return self.reboot_server(ref, request, "HARD")

    def reboot_server(self, ref: ResourceRef, request: NodeRequest, kind: str) -> CreatedResource:
        conn, server_id, region = self._target(ref, request)
        self.cloud.call("rebooting the server", conn.compute.reboot_server, server_id, kind)
        return self._active(conn, server_id, region, "rebooting")

    def update(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """A new profile in place: rename, rebuild for an image, resize for a flavor
        (see :mod:`herd.drivers.nova.updates`)."""
        return update_server(self, ref, request)

    def rebuild(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """REBUILD recovery: the profile's image (else the server's own), name and password."""
        conn, server_id, region = self._target(ref, request)
        props = request.properties
        image_id = None
        if props.get("image"):
            image = self.resolver.image(conn, region, props["image"])
            image_id = image.id if image is not None else None
        if image_id is None:
            server = get_server(self.cloud, conn, server_id)
            own = node_data(server, region)["image"] if server is not None else None
            image_id = own if isinstance(own, str) else None  # node_data's image: str or None
        if not image_id:
            raise DriverError(f"cannot REBUILD server {server_id}: it has no image to rebuild")
        extra = {"admin_password": props["admin_pass"]} if props.get("admin_pass") else {}
        self.cloud.call(
            "rebuilding the server",
            conn.compute.rebuild_server,
            server_id,
            image_id,
            name=server_name(request),
            **extra,
        )
        return self._active(conn, server_id, region, "rebuilding")

    def _target(
        self, ref: ResourceRef, request: NodeRequest
    ) -> tuple[NovaConnection, str, str | None]:
        """The node's server, for an action herd takes on it (its events meanwhile are
        herd's own doing, not failures)."""
        if not ref.physical_id:
            raise DriverError(f"node {ref.node_id} has no server")
        self.quiet(ref.physical_id, self.options.timeout)
        region = region_of(ref.data.get("placement") or {}, request.properties)
        return self.node_connection(ref.node_id, region), ref.physical_id, region

    def _active(
        self, conn: NovaConnection, server_id: str, region: str | None, doing: str
    ) -> CreatedResource:
        try:
            server = wait_for(self.cloud, conn, server_id, {"ACTIVE"}, self.options.timeout, doing)
        except ServerFailed as exc:
            raise DriverError(f"server {server_id} went to ERROR while {doing}: {exc}") from None
        finally:
            self.quiet(server_id)  # its last notifications may still be on their way
        return CreatedResource(server.id, node_data(server, region))

    # -- events (LIFECYCLE_EVENTS) ---------------------------------------------------------

    def watch(self, ref: ResourceRef) -> bool:
        """Report this server's failures from Nova's notifications; one already failed at once.

        Returns False (no events) when no notification bus is configured.
        """
        if not self.options.notifications_url or not ref.physical_id:
            return False
        started = None
        with self._watch_lock:
            if self._events is None:
                started = self._events = NotificationListener(
                    self.options.notifications_url, self._on_failure
                )
                started.start()
            self._watched[ref.physical_id] = ref.node_id
        if started is not None:
            # Once the queue is bound no failure is missed; a bus that is away leaves the
            # check below (and polling modes), and the listener keeps trying.
            started.wait_ready(10)
        report = self.check(ref)  # a server that died before the watch began
        if not report.healthy:
            self._on_failure(ref.physical_id, report.reason)
        return True

    def unwatch(self, node_id: str) -> None:
        with self._watch_lock:
            for server_id in [s for s, n in self._watched.items() if n == node_id]:
                del self._watched[server_id]

    def quiet(self, server_id: str, seconds: float = 10.0) -> None:
        """Events of this server for a while are herd's own doing (an operation), not failures."""
        with self._watch_lock:
            self._quiet[server_id] = time.monotonic() + seconds

    def _on_failure(self, server_id: str, reason: str) -> None:
        with self._watch_lock:
            node_id = self._watched.get(server_id)
            if node_id is None or self._quiet.get(server_id, 0.0) > time.monotonic():
                return
            del self._watched[server_id]  # reported once; the health manager watches again
        self.emit(ResourceEvent(node_id, server_id, reason))

    def events_ready(self, timeout: float) -> bool:
        """Test hook: whether the notification queue is bound."""
        return self._events is not None and self._events.wait_ready(timeout)

    # -- server groups (senlin.policy.affinity) -------------------------------------------

    def find_server_group(
        self, name_or_id: str, properties: Mapping[str, Any]
    ) -> ServerGroup | None:
        """The project's Nova server group by name or id, in the profile's region."""
        conn = self._shared_connection(region_of({}, properties), "a Nova server group")
        return find_group(self.cloud, conn, name_or_id)

    def create_server_group(
        self, name: str, policy: str, properties: Mapping[str, Any]
    ) -> ServerGroup:
        """A new Nova server group with ``policy``, in the profile's region."""
        conn = self._shared_connection(region_of({}, properties), "a Nova server group")
        return create_group(self.cloud, conn, name, policy)

    def delete_server_group(self, group_id: str, properties: Mapping[str, Any]) -> None:
        conn = self._shared_connection(region_of({}, properties), "a Nova server group")
        delete_group(self.cloud, conn, group_id)

    # -- restart ---------------------------------------------------------------------------

    def discover(self) -> dict[str, CreatedResource]:
        """This herd's servers (its owner tag) in the default region, by node id."""
        if not self.cloud.configured or self.trusts is not None:
            # with trusts, each project's servers are only seen through its owner's trust
            return {}
        try:
            conn = self.cloud.connection(None)
            servers = find_by_tag(self.cloud, conn, self.options.owner_tag)
        except Exception as exc:  # the engine starts even when the cloud is away
            raise DriverError(
                f"cannot list the servers of {self.options.owner_tag}: {exc}"
            ) from None
        found: dict[str, CreatedResource] = {}
        for server in servers:
            node_id = (server.metadata or {}).get("cluster_node_id")
            if node_id and server.status not in ("DELETED", "SOFT_DELETED"):
                found[str(node_id)] = CreatedResource(server.id, node_data(server, None))
        return found

    def close(self) -> None:
        if self._events is not None:
            self._events.stop()
        self.cloud.close()
        if self.trusts is not None:
            self.trusts.close()
        super().close()
