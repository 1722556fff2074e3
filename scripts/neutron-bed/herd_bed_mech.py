"""An ML2 mechanism driver for herd's test bed: it binds every port, with no agent.

The bed's Nova runs the fake virt driver, which plugs nothing: no Open vSwitch, no Linux
bridge, no agent to report a port up. A real mechanism driver (openvswitch, ovn) would wait for
an agent that cannot exist here and leave the port ``binding_failed``, so this one binds the
first segment it is offered (flat or vlan) with VIF type ``other`` and marks the port ACTIVE at
once, as an agent reporting "device up" would. Everything else (networks, subnets, IP
allocation, ports, bindings, the database) is Neutron's own.

Loaded by name (``mechanism_drivers = herd_bed``) through the entry point the bed writes beside
its configuration (``tests/nova_bed/neutron.py``), so nothing is installed into the bed's venv.
"""

from __future__ import annotations

from typing import Any

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api

VIF_TYPE = "other"


class HerdBedMechanismDriver(api.MechanismDriver):  # type: ignore[misc]
    def initialize(self) -> None:
        pass

    @property
    def connectivity(self) -> str:
        return str(portbindings.CONNECTIVITY_L2)

    def bind_port(self, context: Any) -> None:
        if context.current.get(portbindings.VNIC_TYPE) != portbindings.VNIC_NORMAL:
            return  # direct/SR-IOV ports stay unbound, as on a host without such devices
        for segment in context.segments_to_bind:
            context.set_binding(
                segment[api.ID],
                VIF_TYPE,
                {portbindings.CAP_PORT_FILTER: False},
                status=constants.PORT_STATUS_ACTIVE,
            )
            return
