"""What the two trust tests (``test_nova_trusts.py``, ``test_heat_trusts.py``) check alike.

In both, carla (a member of project ``demo``) made a cluster through herd, which acts for
her through a Keystone trust; then her user is deleted, and what herd does next must not
depend on which service the cluster's members live in.
"""

from __future__ import annotations

from typing import Any

import httpx
from tests.e2e.nova.herd_api import V, act, members_of
from tests.keystone_bed import KeystoneBed


def herd_as(herd_url: str, token: str, timeout: float = 60.0) -> httpx.Client:
    """herd's API with a user's own Keystone token."""
    return httpx.Client(base_url=herd_url, headers={**V, "X-Auth-Token": token}, timeout=timeout)


def scale_out_after_the_trustor_is_deleted(
    keystone: KeystoneBed, herd_url: str, cluster: str, timeout: float
) -> dict[str, Any]:
    """carla's user is deleted in Keystone, and alice (another member of ``demo``) scales
    ``cluster`` out: the action fails, and its one new member is ERROR with no resource and a
    reason naming carla's dead trust (her user and the project): herd tries nothing else.
    Returns that member."""
    admin = keystone.token("admin", "admin")
    deleted = httpx.delete(
        f"{keystone.url}/users/{keystone.users['carla'].id}",
        headers={"X-Auth-Token": admin},
        timeout=60,
    )
    assert deleted.status_code == 204, deleted.text
    alice = herd_as(herd_url, keystone.token("alice", "demo"), timeout=120)
    before = {m["id"] for m in members_of(alice, cluster)}
    action = act(alice, cluster, {"scale_out": {"count": 1}}, timeout=timeout)
    assert action["status"] == "FAILED", action
    failed = [m for m in members_of(alice, cluster) if m["id"] not in before]
    assert len(failed) == 1 and failed[0]["status"] == "ERROR", failed
    reason = failed[0]["status_reason"]
    assert "trust" in reason and "no longer valid" in reason, reason
    assert keystone.users["carla"].id in reason and keystone.projects["demo"] in reason, reason
    assert not failed[0]["physical_id"], failed
    return dict(failed[0])
