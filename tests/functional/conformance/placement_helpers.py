"""Shared set-up for the S6 scenarios: a cluster spread 4/2 over two zones or regions."""

from __future__ import annotations

from typing import Any

from tests.functional.conformance.conftest import Api

FIELD = {"zones": "zone", "regions": "region_name"}


def placement_spec(key: str, names: dict[str, int]) -> dict[str, Any]:
    kind = "zone_placement" if key == "zones" else "region_placement"
    return {
        "type": f"senlin.policy.{kind}",
        "version": "1.0",
        "properties": {key: [{"name": n, "weight": w} for n, w in names.items()]},
    }


def spread_cluster(api: Api, key: str) -> tuple[str, dict[str, list[str]]]:
    """Six members placed one at a time by a placement policy (weights 2:1).

    Returns the cluster and the members of each group, oldest first.
    """
    cluster = api.cluster(0)
    api.attach(cluster, placement_spec(key, {"G-1": 200, "G-2": 100}), name="place")
    for _ in range(6):
        assert api.act(cluster, {"scale_out": {"count": 1}})["status"] == "SUCCEEDED"
    groups: dict[str, list[str]] = {}
    for node in api.members(cluster):
        groups.setdefault(node["data"]["placement"][FIELD[key]], []).append(node["id"])
    return cluster, groups
