"""``senlin.policy.affinity-1.0``: Nova server groups, validated here, placed by a Nova driver.

The spec is Senlin's: ``servergroup: {name, policies}`` (``policies`` one of
affinity, soft-affinity, anti-affinity (default), soft-anti-affinity),
``availability_zone`` and ``enable_drs_extension`` (default false). The policy
can only be attached to clusters of ``os.nova.server`` profiles: herd's other
drivers (``herd.process``, ``herd.sim``) have no server groups to put members
in, and the attach is refused with that reason. Creating server groups and
passing their hints to new servers belongs to the Nova driver; until it exists
this class decides nothing (its BEFORE checks pass data through).
"""

from __future__ import annotations

from typing import ClassVar

from herd.policies.base import Policy
from herd.policies.spec import Boolean, Field, Map, String
from herd.types import ActionName, Phase

GROUP_POLICIES = ("affinity", "soft-affinity", "anti-affinity", "soft-anti-affinity")

PROPERTIES_SCHEMA: dict[str, Field] = {
    "servergroup": Map(
        schema={
            "name": String(),
            "policies": String(default="anti-affinity", allowed=GROUP_POLICIES),
        }
    ),
    "availability_zone": String(),
    "enable_drs_extension": Boolean(default=False),
}


class AffinityPolicy(Policy):
    """Server-group placement of new members (Nova only)."""

    type_name = "senlin.policy.affinity"
    versions = ("1.0",)
    schema: ClassVar[dict[str, Field]] = PROPERTIES_SCHEMA
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2016.10"}]
    }
    priority = 300
    singleton = True
    targets = frozenset(
        (Phase.BEFORE, action)
        for action in (
            ActionName.CLUSTER_SCALE_OUT,
            ActionName.CLUSTER_RESIZE,
            ActionName.NODE_CREATE,
        )
    )
    profile_types = ("os.nova.server-1.0", "os.nova.server-1.1", "os.nova.server-1.2")
    profile_type_reason = (
        "senlin.policy.affinity places members in Nova server groups, and only "
        "os.nova.server profiles have them"
    )
