"""What the OpenStack drivers (``os.nova.server``, ``os.heat.stack``) hold alike.

Both talk to the cloud the operator's options name (:class:`NovaCloud`, its limits and
retries), and with Keystone trusts (``nova_trusts``) act for each node through its
owner's trust, never with the clouds.yaml credentials.
"""

from __future__ import annotations

from herd.drivers.base import Driver
from herd.drivers.nova.cloud import NovaCloud, NovaOptions
from herd.drivers.nova.trusts import TrustedConnections
from herd.errors import DriverError


class CloudDriver(Driver):
    """A driver on the configured OpenStack cloud, or on its users' trusts."""

    def __init__(
        self,
        options: NovaOptions,
        *,
        cloud: NovaCloud | None = None,
        trusts: TrustedConnections | None = None,
    ) -> None:
        """Talk to the cloud ``options`` names; nothing is contacted before the first call.

        With ``trusts`` every node is acted on through its owner's Keystone trust
        (:mod:`herd.drivers.nova.trusts`), never with the clouds.yaml credentials.
        """
        super().__init__()
        self.options = options
        self.cloud = cloud or NovaCloud(options)
        self.trusts = trusts

    def refuse_with_trusts(self, doing: str) -> None:
        """Calls that act for no node use the configured cloud: refused with trusts.

        Raises:
            DriverError: herd acts through Keystone trusts.
        """
        if self.trusts is not None:
            raise DriverError(
                f"{doing} is not available when herd acts through Keystone trusts "
                "(nova_trusts): it acts for no node's owner, and herd never uses other credentials"
            )
