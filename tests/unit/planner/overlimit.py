"""Clusters where several nodes already exceed their spindle limit.

Ganeti's spindle limit is ``spindle-ratio x spindle_count`` per node; the
load is the ``spindle_use`` of the primaries and secondaries of its
local-storage (drbd, plain) instances. These builders skew placements so
that a few nodes of each group are over that limit before the request.
"""

from __future__ import annotations

import random
from typing import Any

from .factory import IPOLICY, cluster, instance
from .replay import over_limit_nodes

SOURCE = ["n1", "n2", "n3", "n4", "n5"]
TARGET = ["m1", "m2", "m3", "m4"]
MODES = ["change-group", "primary-only", "secondary-only", "all"]


def _pick(rng: random.Random, names: list[str], weights: list[int], but: str = "") -> str:
    pool = [(n, w) for n, w in zip(names, weights, strict=True) if n != but]
    return rng.choices([n for n, _ in pool], weights=[w for _, w in pool])[0]


def overlimit_cluster(rng: random.Random, mode: str, offline: str | None = None) -> dict[str, Any]:
    """A two-group cluster with nodes over their spindle limit, and a request.

    Args:
        rng: decides the placements (seeded by the caller).
        mode: ``change-group`` (every movable instance of the source group)
            or a node-evacuate mode for the most loaded source node.
        offline: a node to mark offline (its dynamic data removed).

    Returns:
        The raw request; at least two source nodes are over their limit.
    """
    while True:
        raw = _attempt(rng, mode, offline)
        if len([n for n in over_limit_nodes(raw) if n in SOURCE]) >= 2:
            return raw


def _attempt(rng: random.Random, mode: str, offline: str | None) -> dict[str, Any]:
    ratio = {"g1": rng.choice([3.0, 4.0]), "g2": rng.choice([3.0, 4.0, 6.0])}
    instances: dict[str, dict[str, Any]] = {}
    heavy = [6, 4, 2, 1, 1]
    for k in range(rng.randint(10, 15)):
        template = rng.choice(["drbd"] * 6 + ["plain", "rbd"])
        primary = _pick(rng, SOURCE, heavy)
        nodes = [primary]
        if template == "drbd":
            nodes.append(_pick(rng, SOURCE, heavy, but=primary))
        instances[f"s{k:02d}"] = instance(
            template,
            nodes,
            memory=rng.choice([512, 1024, 2048]),
            spindle_use=rng.choice([1, 1, 2]),
            admin_state=rng.choice(["up", "up", "up", "down"]),
        )
    for k in range(rng.randint(3, 6)):
        primary = _pick(rng, TARGET, [6, 2, 1, 1])
        instances[f"t{k:02d}"] = instance(
            "drbd",
            [primary, _pick(rng, TARGET, [6, 2, 1, 1], but=primary)],
            spindle_use=rng.choice([1, 2]),
        )
    overrides: dict[str, dict[str, Any]] = {
        name: {"total_memory": 65536} for name in SOURCE + TARGET
    }
    raw = cluster({"g1": SOURCE, "g2": TARGET}, instances, {}, overrides)
    for node in raw["nodes"].values():
        node["free_memory"] += 65536 - 32768
    for group, value in ratio.items():
        raw["nodegroups"][group]["ipolicy"] = {**IPOLICY, "spindle-ratio": value}
    if offline is not None:
        body = raw["nodes"][offline]
        body["offline"] = True
        for key in [k for k in body if k.startswith(("total_", "free_", "reserved_"))]:
            del body[key]
    raw["request"] = _request(raw, mode)
    return raw


def _request(raw: dict[str, Any], mode: str) -> dict[str, Any]:
    instances = raw["instances"]
    if mode == "change-group":
        wanted = [n for n in sorted(instances) if n.startswith("s")]
        return {"type": "change-group", "instances": wanted, "target_groups": []}
    loads = {n: 0 for n in SOURCE}
    for inst in instances.values():
        for node in inst["nodes"]:
            if node in loads:
                loads[node] += inst["spindle_use"]
    evacuated = max(SOURCE, key=lambda n: (loads[n], n))
    if mode == "all":
        wanted = [n for n in sorted(instances) if evacuated in instances[n]["nodes"]]
    else:
        position = 0 if mode == "primary-only" else 1
        wanted = [
            n
            for n in sorted(instances)
            if len(instances[n]["nodes"]) > position
            and instances[n]["nodes"][position] == evacuated
        ]
    return {"type": "node-evacuate", "instances": wanted, "evac_mode": mode}
