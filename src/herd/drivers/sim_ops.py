"""Operations on ``herd.sim`` servers, and adopting simulated servers herd did not create.

The simulated cloud can hold servers that no node created (``add_external``,
a test hook standing for "made by somebody else"); adopt-preview describes one
and adopt makes it a node's resource. Operations change the server's simulated
state, which ``check`` reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from herd.drivers.adoption import AdoptedResource, merge_overrides
from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.drivers.sim_state import SimServer, SimServers
from herd.errors import Conflict, DriverError, InvalidRequest

if TYPE_CHECKING:
    from herd.drivers.sim import SimDriver

_STATES = {"stop": "stopped", "start": "running", "pause": "paused", "unpause": "running"}


def _server(servers: SimServers, physical_id: str | None) -> SimServer:
    server = servers.get(physical_id) if physical_id else None
    if server is None:
        raise DriverError(f"simulated server {physical_id} does not exist")
    return server


class SimOperationsMixin:
    """Operations and adoption of :class:`~herd.drivers.sim.SimDriver`."""

    def run_operation(
        self, ref: ResourceRef, request: NodeRequest, operation: str, params: Mapping[str, object]
    ) -> CreatedResource:
        """Run a profile operation (see ``SIM_OPERATIONS``) on the simulated server."""
        driver = cast("SimDriver", self)
        if operation == "reboot":
            rebooted = driver.reboot(ref, request)
            with driver._locked() as servers:
                count = _server(servers, ref.physical_id).rebooted
            return CreatedResource(rebooted.physical_id, {**rebooted.data, "reboots": count})
        with driver._locked() as servers:
            server = _server(servers, ref.physical_id)
            if operation == "signal":
                server.signals.append(str(params.get("signal")))
                servers.put(str(ref.physical_id), server)
                return CreatedResource(str(ref.physical_id), {"signals": list(server.signals)})
            if operation not in _STATES:
                raise DriverError(f"unknown operation '{operation}'")
            if operation == "unpause" and server.state != "paused":
                raise DriverError(f"simulated server {ref.physical_id} is not paused")
            server.state = _STATES[operation]
            servers.put(str(ref.physical_id), server)
            return CreatedResource(str(ref.physical_id), {"sim_state": server.state})

    def sim_state(self, physical_id: str) -> dict[str, object]:
        """Test hook: a server's simulated state, reboot count and signals received."""
        driver = cast("SimDriver", self)
        with driver._locked() as servers:
            server = _server(servers, physical_id)
            return {"state": server.state, "reboots": server.rebooted, "signals": server.signals}

    def add_external(self, zone: str | None = None, region_name: str | None = None) -> str:
        """Test hook: a server that herd did not create (what adopt takes over)."""
        driver = cast("SimDriver", self)
        with driver._locked() as servers:
            physical_id = f"{driver._prefix}{next(driver._counter)}"
            servers.put(physical_id, SimServer(None, zone, region_name))
        return physical_id

    def adopt_preview(
        self, identity: str, overrides: Mapping[str, object] | None, snapshot: bool
    ) -> AdoptedResource:
        """Describe simulated server ``identity``; with ``snapshot`` its placement is kept."""
        driver = cast("SimDriver", self)
        with driver._locked() as servers:
            server = servers.get(identity)
            if server is None:
                raise InvalidRequest(
                    f"The specified simulated server '{identity}' could not be found.",
                    field="identity",
                )
            if server.node_id is not None:
                raise Conflict(
                    f"The simulated server '{identity}' already backs node '{server.node_id}'."
                )
            data = server.data()
            generated: dict[str, object] = {}
            if snapshot:
                generated = {"zone": server.zone, "region": server.region_name}
        properties = driver.validate_properties(merge_overrides(generated, overrides))
        return AdoptedResource(identity, properties, data)

    def claim(self, resource: AdoptedResource, node_id: str) -> None:
        """Make the server the node's resource (so discover() reports it from now on)."""
        driver = cast("SimDriver", self)
        with driver._locked() as servers:
            server = _server(servers, resource.physical_id)
            if server.node_id is not None and server.node_id != node_id:
                raise Conflict(
                    f"The simulated server '{resource.physical_id}' already backs node "
                    f"'{server.node_id}'."
                )
            server.node_id = node_id
            servers.put(resource.physical_id, server)
