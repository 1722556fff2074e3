"""Valid request bodies for every route that reads one, naming real resources.

The access matrix sends the first body of a route as another project's caller (it must be
refused before anything happens); the fuzzing test takes every body as a base and makes each
of its leaves hostile in turn (a valid base gets past the other checks, so the hostile value
is what the server meets). A route whose ``/openapi.json`` operation has a body and no entry
here fails the access matrix, so a new endpoint gets its samples.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.functional.api.helpers import DELETION_SPEC, SIM_SPEC
from tests.unit.planner import factory

Route = tuple[str, str]


#: a small iallocator request (Ganeti's message to its allocator, protocol version 2): one
#: group, three nodes, a DRBD instance on n1 and n2, its secondary evacuated (hail moves it
#: to n3, as herd does)
IALLOCATOR_EVACUATE: dict[str, Any] = factory.cluster(
    {"g1": ["n1", "n2", "n3"]},
    {"web1": factory.instance("drbd", ["n1", "n2"], memory=512)},
    {"type": "node-evacuate", "evac_mode": "secondary-only", "instances": ["web1"]},
)


def sample_bodies(ids: dict[str, str]) -> dict[Route, list[Any]]:
    """Bodies per (method, path template); ``ids`` has profile, policy, cluster and node ids."""
    profile, policy, cluster, node = ids["profile"], ids["policy"], ids["cluster"], ids["node"]
    metadata = {"owner": "team-a", "deletion_cost": 3}
    return {
        ("PATCH", "/v1/clusters/{cluster_id}/nodes/{node_id}"): [
            {"mark_unhealthy": True, "resource_status_reason": "samples"}
        ],
        ("POST", "/v1/profiles"): [
            {"profile": {"name": "pb", "spec": SIM_SPEC, "metadata": {"owner": "a"}}}
        ],
        ("POST", "/v1/profiles/validate"): [{"profile": {"spec": SIM_SPEC}}],
        ("PATCH", "/v1/profiles/{profile_id}"): [
            {"profile": {"name": "renamed", "metadata": {"owner": "b"}}}
        ],
        ("POST", "/v1/policies"): [{"policy": {"name": "dp", "spec": DELETION_SPEC}}],
        ("POST", "/v1/policies/validate"): [{"policy": {"spec": DELETION_SPEC}}],
        ("PATCH", "/v1/policies/{policy_id}"): [{"policy": {"name": "renamed"}}],
        ("POST", "/v1/clusters"): [
            {
                "cluster": {
                    "name": "cb",
                    "profile_id": profile,
                    "desired_capacity": 0,
                    "min_size": 0,
                    "max_size": 5,
                    "timeout": 60,
                    "metadata": {"owner": "a"},
                    "config": {"node.name.format": "n-$nI"},
                }
            }
        ],
        ("PATCH", "/v1/clusters/{cluster_id}"): [
            {"cluster": {"name": "renamed", "timeout": 30, "metadata": {"owner": "b"}}}
        ],
        ("DELETE", "/v1/clusters/{cluster_id}"): [None, {"force": True}],
        ("POST", "/v1/clusters/{cluster_id}/actions"): [
            {"scale_out": {"count": 1, "seed": 7}},
            {"scale_in": {"count": 1, "seed": 7}},
            {
                "resize": {
                    "adjustment_type": "EXACT_CAPACITY",
                    "number": 2,
                    "min_size": 0,
                    "max_size": 5,
                    "min_step": 1,
                    "strict": True,
                }
            },
            {"del_nodes": {"nodes": [node], "destroy_after_deletion": True}},
            {"policy_update": {"policy_id": policy, "enabled": False}},
            {"replace_unhealthy": {"batch_size": 1}},
            {"recover": {"operation": "RECREATE", "check": True}},
            {"check": {}},
        ],
        ("POST", "/v1/nodes"): [
            {
                "node": {
                    "name": "nb",
                    "profile_id": profile,
                    "cluster_id": cluster,
                    "role": "web",
                    "metadata": metadata,
                }
            }
        ],
        ("PATCH", "/v1/nodes/{node_id}"): [
            {"node": {"name": "renamed", "role": "db", "metadata": metadata}}
        ],
        ("DELETE", "/v1/nodes/{node_id}"): [None, {"force": True}],
        ("POST", "/v1/nodes/{node_id}/actions"): [
            {"check": {}},
            {"recover": {"operation": "REBOOT"}},
        ],
        ("PATCH", "/v1/actions/{action_id}"): [{"action": {"status": "CANCELLED"}}],
        ("POST", "/v1/nodes/adopt-preview"): [
            {
                "identity": "no-such-server",
                "type": "herd.sim-1.0",
                "overrides": {},
                "snapshot": False,
            }
        ],
        ("POST", "/v1/nodes/adopt"): [
            {
                "identity": "no-such-server",
                "type": "herd.sim-1.0",
                "name": "adopted",
                "role": "web",
                "metadata": {"owner": "a"},
            }
        ],
        ("POST", "/v1/clusters/{cluster_id}/metadata"): [{"metadata": {"owner": "c"}}],
        ("PUT", "/v1/clusters/{cluster_id}/metadata"): [{"metadata": {"owner": "d", "tier": 1}}],
        ("PUT", "/v1/clusters/{cluster_id}/metadata/{key}"): [{"meta": {"owner": "e"}}],
        ("POST", "/v1/nodes/{node_id}/ops"): [{"signal": {"signal": "SIGHUP"}}, {"reboot": {}}],
        ("POST", "/v1/clusters/{cluster_id}/ops"): [
            {"signal": {"params": {"signal": "SIGHUP"}, "filters": {"role": "web"}}}
        ],
        ("POST", "/v1/receivers"): [
            {
                "receiver": {
                    "name": "rb",
                    "type": "webhook",
                    "cluster_id": cluster,
                    "action": "CLUSTER_SCALE_OUT",
                    "params": {"count": 1},
                }
            }
        ],
        ("PATCH", "/v1/receivers/{receiver_id}"): [
            {"receiver": {"name": "renamed", "params": {"count": 2}}}
        ],
        ("POST", "/v1/webhooks/{receiver_id}/trigger"): [{"params": {"count": 1}}],
        ("POST", "/v1/relocation-plans"): [copy.deepcopy(IALLOCATOR_EVACUATE)],
        ("POST", "/v1/webhooks/{receiver_id}/alertmanager"): [
            {
                "version": "4",
                "status": "firing",
                "groupKey": '{}:{alertname="HighLoad"}',
                "receiver": "herd",
                "alerts": [
                    {
                        "status": "firing",
                        "labels": {"alertname": "HighLoad"},
                        "startsAt": "2026-11-23T10:00:00Z",
                        "fingerprint": "a1b2c3",
                    }
                ],
            }
        ],
    }
