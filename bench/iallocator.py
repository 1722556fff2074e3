"""Benchmark herd's iallocator against Ganeti's hail on generated clusters.

Usage: python bench/iallocator.py [--hail-timeout 120] [--quick] [--hail PATH]

Each scenario builds a consistent protocol-v2 request (free memory and disk
derived from the placements), runs hail and herd on the same file, and
validates both answers with herd's checker (which also computes the final
cluster score). Peak memory is the child process's max RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from herd.planner import check_answer, parse_request

HAIL = "/usr/lib/ganeti/iallocators/hail"
GIB = 1024


@dataclass(frozen=True)
class Scenario:
    label: str
    groups: int
    nodes: int
    instances: int
    request: str  # "change-group" or "node-evacuate"
    count: int  # instances (change-group) or nodes (node-evacuate)
    evac_mode: str = "secondary-only"


SCENARIOS = [
    Scenario("cg-1 100n/1k", 2, 100, 1000, "change-group", 1),
    Scenario("cg-10 600n/8k", 3, 600, 8000, "change-group", 10),
    Scenario("cg-500 600n/8k", 3, 600, 8000, "change-group", 500),
    Scenario("evac-sec 10n 600n/8k", 3, 600, 8000, "node-evacuate", 10),
    Scenario("evac-pri 10n 600n/8k", 3, 600, 8000, "node-evacuate", 10, "primary-only"),
    Scenario("evac-sec 5n 100n/1k 1g", 1, 100, 1000, "node-evacuate", 5),
    Scenario("evac-all 1n 600n/8k", 3, 600, 8000, "node-evacuate", 1, "all"),
    Scenario("cg-10 2000n/30k", 5, 2000, 30000, "change-group", 10),
]


def _ipolicy() -> dict[str, Any]:
    spec = {
        "memory-size": 128,
        "cpu-count": 1,
        "disk-size": 1024,
        "disk-count": 1,
        "nic-count": 1,
        "spindle-use": 1,
    }
    big = {
        "memory-size": 65536,
        "cpu-count": 16,
        "disk-size": 1048576,
        "disk-count": 16,
        "nic-count": 8,
        "spindle-use": 8,
    }
    return {
        "std": spec,
        "minmax": [{"min": spec, "max": big}],
        "vcpu-ratio": 4.0,
        "spindle-ratio": 32.0,
        "disk-templates": ["drbd", "plain", "file", "sharedfile", "rbd", "diskless"],
    }


def generate(s: Scenario, seed: int = 1) -> dict[str, Any]:
    """A cluster with s.groups groups; 70 % DRBD, 30 % plain, spread round-robin."""
    rng = random.Random(seed)
    groups = {
        f"g{g}": {
            "name": f"group{g}",
            "alloc_policy": "preferred",
            "networks": [],
            "ipolicy": _ipolicy(),
            "tags": [],
        }
        for g in range(s.groups)
    }
    per_group = s.nodes // s.groups
    nodes: dict[str, dict[str, Any]] = {}
    members: list[list[str]] = []
    for g in range(s.groups):
        names = [f"node-{g}-{k:04d}" for k in range(per_group)]
        members.append(names)
        for name in names:
            nodes[name] = {
                "group": f"g{g}",
                "offline": False,
                "drained": False,
                "vm_capable": True,
                "master_capable": True,
                "master_candidate": False,
                "tags": [],
                "primary_ip": "1",
                "secondary_ip": "2",
                "ndparams": {"spindle_count": 1, "exclusive_storage": False},
                "total_memory": 256 * GIB,
                "reserved_memory": 4 * GIB,
                "total_disk": 8 * 1024 * GIB,
                "total_cpus": 64,
                "reserved_cpus": 1,
                "total_spindles": 1,
                "free_spindles": 1,
                "_mem": 0,
                "_disk": 0,
            }
    instances: dict[str, dict[str, Any]] = {}
    for k in range(s.instances):
        g = k % s.groups
        drbd = rng.random() < 0.7
        mem = rng.randint(1, 8) * GIB
        disk = rng.randint(10, 100) * GIB
        names = members[g]
        pri = names[(k // s.groups) % len(names)]
        sec = names[(k // s.groups + 1 + rng.randrange(len(names) - 1)) % len(names)]
        up = rng.random() < 0.9
        total = disk + 128 if drbd else disk
        instances[f"inst-{k:05d}"] = {
            "tags": [],
            "admin_state": "up" if up else "down",
            "admin_state_source": "admin",
            "vcpus": rng.randint(1, 4),
            "memory": mem,
            "spindle_use": 1,
            "os": "debian",
            "nodes": [pri, sec] if drbd else [pri],
            "nics": [{"mac": "aa", "ip": None}],
            "disks": [{"size": disk, "mode": "rw", "spindles": 1}],
            "disk_template": "drbd" if drbd else "plain",
            "disks_active": True,
            "hypervisor": "xen-pvm",
            "disk_space_total": total,
        }
        if up:
            nodes[pri]["_mem"] += mem
        nodes[pri]["_disk"] += total
        if drbd:
            nodes[sec]["_disk"] += total
    for node in nodes.values():
        node["free_memory"] = node["total_memory"] - node["reserved_memory"] - node.pop("_mem")
        node["free_disk"] = node["total_disk"] - node.pop("_disk")
        node["i_pri_memory"] = node["i_pri_up_memory"] = 0
    if s.request == "change-group":
        wanted = [n for n in instances if instances[n]["nodes"][0].startswith("node-0-")]
        request: dict[str, Any] = {
            "type": "change-group",
            "instances": wanted[: s.count],
            "target_groups": [],
        }
    else:
        evacuated = set(members[0][: s.count])
        if s.evac_mode == "all":
            wanted = [n for n, i in instances.items() if evacuated & set(i["nodes"])]
        else:
            position = 0 if s.evac_mode == "primary-only" else 1
            wanted = [
                n
                for n, i in instances.items()
                if len(i["nodes"]) > position and i["nodes"][position] in evacuated
            ]
        request = {"type": "node-evacuate", "instances": wanted, "evac_mode": s.evac_mode}
    return {
        "version": 2,
        "cluster_name": "bench",
        "cluster_tags": [],
        "enabled_hypervisors": ["xen-pvm"],
        "ipolicy": _ipolicy(),
        "nodegroups": groups,
        "nodes": nodes,
        "instances": instances,
        "request": request,
    }


_WRAPPER = (
    "import resource,subprocess,sys,time\n"
    "t=time.perf_counter()\n"
    "try:\n"
    "    r=subprocess.run(sys.argv[3:],stdout=open(sys.argv[1],'w'),"
    "stderr=subprocess.DEVNULL,timeout=float(sys.argv[2]))\n"
    "except subprocess.TimeoutExpired:\n"
    "    print('timeout - -'); sys.exit(0)\n"
    "u=resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(time.perf_counter()-t, u.ru_maxrss, u.ru_utime+u.ru_stime)\n"
)


def run(command: list[str], out: Path, timeout: float) -> tuple[str, str, bool]:
    """Run ``command`` with a time limit.

    Returns:
        ("wall s (cpu s)", peak MB, finished). CPU time is reported too because
        the benchmark machine may be shared.
    """
    wrapper = [sys.executable, "-c", _WRAPPER, str(out), str(timeout), *command]
    done = subprocess.run(wrapper, capture_output=True, text=True, check=False)
    seconds, rss_kb, cpu = done.stdout.split()
    if seconds == "timeout":
        return f"timeout ({timeout:.0f})", "-", False
    return f"{float(seconds):.2f} ({float(cpu):.2f})", f"{int(rss_kb) // 1024}", True


def _outcome(data: Any, path: Path) -> tuple[str, str]:
    try:
        answer = json.loads(path.read_text())
    except ValueError:
        return "-", "-"
    report = check_answer(data, answer)
    validity = "" if report.valid else " (INVALID)"
    return f"{report.moved}/{report.moved + report.failed}{validity}", f"{report.score_after:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hail-timeout", type=float, default=120.0)
    parser.add_argument("--hail", default=HAIL)
    parser.add_argument("--only", help="comma-separated scenario labels (prefix match)")
    parser.add_argument("--skip-hail", action="store_true", help="run herd only")
    parser.add_argument(
        "--hail-flags", default="", help="extra hail options, e.g. --no-capacity-checks"
    )
    args = parser.parse_args()
    herd = [sys.executable, "-m", "herd.cli.iallocator"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in SCENARIOS:
            if args.only and not any(scenario.label.startswith(p) for p in args.only.split(",")):
                continue
            request = Path(tmp) / "request.json"
            raw = generate(scenario)
            request.write_text(json.dumps(raw))
            data = parse_request(raw)
            size = len(raw["request"]["instances"])
            herd_out, hail_out = Path(tmp) / "herd.json", Path(tmp) / "hail.json"
            herd_time, herd_mem, _ = run([*herd, str(request)], herd_out, 900)
            herd_moved, herd_score = _outcome(data, herd_out)
            if os.path.exists(args.hail) and not args.skip_hail:
                hail_time, hail_mem, ok = run(
                    [args.hail, *args.hail_flags.split(), str(request)], hail_out, args.hail_timeout
                )
                hail_moved, hail_score = _outcome(data, hail_out) if ok else ("-", "-")
            else:
                hail_time = hail_mem = hail_moved = hail_score = "skipped"
            rows.append(
                (
                    scenario.label,
                    str(size),
                    herd_time,
                    herd_mem,
                    herd_moved,
                    herd_score,
                    hail_time,
                    hail_mem,
                    hail_moved,
                    hail_score,
                )
            )
            print(" | ".join(rows[-1]), flush=True)
    header = (
        "scenario",
        "req",
        "herd wall s (cpu)",
        "herd MB",
        "herd moved",
        "herd score",
        "hail wall s (cpu)",
        "hail MB",
        "hail moved",
        "hail score",
    )
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
