"""Independent replays of an answer's jobs, written apart from the planner.

The tests use these to show that herd's answers never pass through a state
that Ganeti's model refuses, without trusting herd's own checker.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

LOCAL_STORAGE = {"drbd", "plain"}


def spindle_limit(raw: dict[str, Any], node: str) -> float:
    """``spindle-ratio`` of the node's group times its ``spindle_count``."""
    body = raw["nodes"][node]
    ratio = float(raw["nodegroups"][body["group"]]["ipolicy"]["spindle-ratio"])
    return ratio * float(body["ndparams"].get("spindle_count", 1))


def spindle_load(raw: dict[str, Any]) -> Counter[str]:
    """Spindles in use per node: primaries and secondaries of local-storage instances."""
    load: Counter[str] = Counter()
    for inst in raw["instances"].values():
        if inst["disk_template"] in LOCAL_STORAGE:
            for node in inst["nodes"]:
                load[node] += inst["spindle_use"]
    return load


def over_limit_nodes(raw: dict[str, Any]) -> list[str]:
    load = spindle_load(raw)
    return [n for n in raw["nodes"] if load[n] > spindle_limit(raw, n)]


def _is_offline(body: dict[str, Any]) -> bool:
    return bool(body["offline"] or body["drained"] or not body.get("vm_capable", True))


def spindle_refusals(raw: dict[str, Any], result: list[Any]) -> list[str]:
    """Opcodes after which a node that took the instance is over its spindle limit.

    Ganeti's rule (htools ``addPriEx``/``addSecExEx``, ganeti.md 4.3): every
    node that receives the instance in a move, as primary (local storage
    only) or as secondary, must stay within ``spindle-ratio x spindle_count``
    after it, even when its load did not grow (the old primary taking the
    instance back as secondary in a failover). The check is skipped when the
    node the move leaves is offline or drained, and on exclusive-storage
    nodes. Jobs are replayed in answer order (hail's sequential plan).
    """
    load = spindle_load(raw)
    where = {name: list(inst["nodes"]) for name, inst in raw["instances"].items()}
    found = []
    for index, job in enumerate(result[2]):
        for op in job:
            name = op["instance_name"]
            inst = raw["instances"][name]
            use = inst["spindle_use"] if inst["disk_template"] in LOCAL_STORAGE else 0
            now = where[name]
            if op["OP_ID"] == "OP_INSTANCE_REPLACE_DISKS":
                new, left, receivers = [now[0], op["remote_node"]], now[1], [op["remote_node"]]
            elif inst["disk_template"] != "drbd":
                new, left = [op["target_node"]], now[0]
                receivers = new if use else []
            else:
                new, left, receivers = [now[1], now[0]], now[0], [now[1], now[0]]
            for node in now:
                load[node] -= use
            for node in new:
                load[node] += use
            where[name] = new
            if _is_offline(raw["nodes"][left]):
                continue
            for node in receivers:
                exclusive = raw["nodes"][node]["ndparams"].get("exclusive_storage", False)
                if not exclusive and load[node] > spindle_limit(raw, node):
                    found.append(
                        f"job {index} {op['OP_ID']} {name}: {node} holds {load[node]} spindles,"
                        f" limit {spindle_limit(raw, node)}"
                    )
    return found
