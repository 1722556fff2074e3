"""The Nova bed's own figures: what the Nova tests pay before herd does anything.

Starts the bed (``tests/nova_bed``: needs ``make nova-bed``), then measures through
openstacksdk: the start-up time (and its phases), the memory of every bed process (RSS, and
PSS which counts shared pages once), one boot to ACTIVE (the median of ``--single`` boots),
``--many`` boots at once to all ACTIVE, and deleting them all; then stops the bed.

Run: ``.venv/bin/python bench/nova_bed.py [--single 3] [--many 20]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.nova_bed
from tests.nova_bed.bed import NovaBed
from tests.nova_bed.fixture import NovaCloud

from common import table


def memory_mb(pids: list[int]) -> tuple[float, float]:
    """(RSS, PSS) summed over ``pids``, in MB."""
    rss = pss = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, pss / 1024


def boot(conn: Any, cloud: NovaCloud, name: str) -> Any:
    image = conn.image.find_image(cloud.image, ignore_missing=False)
    flavor = conn.compute.find_flavor(cloud.flavor, ignore_missing=False)
    return conn.compute.create_server(
        name=name, image_id=image.id, flavor_id=flavor.id, networks="none"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--single", type=int, default=3)
    parser.add_argument("--many", type=int, default=20)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="herd-nova-bench-"))
    bed = NovaBed(base)
    started = time.monotonic()
    info = bed.start()
    start_s = time.monotonic() - started
    try:
        rss, pss = memory_mb(bed.pids())
        cloud = NovaCloud(info)
        conn = cloud.connect()
        singles = []
        for i in range(args.single):
            t0 = time.monotonic()
            server = boot(conn, cloud, f"bench-one-{i}")
            conn.compute.wait_for_server(server, interval=0.1, wait=300)
            singles.append(time.monotonic() - t0)
            conn.compute.delete_server(server)
            conn.compute.wait_for_delete(server, interval=0.1, wait=300)
        t0 = time.monotonic()
        servers = [boot(conn, cloud, f"bench-many-{i}") for i in range(args.many)]
        for server in servers:
            conn.compute.wait_for_server(server, interval=0.1, wait=600)
        many_s = time.monotonic() - t0
        rss_busy, pss_busy = memory_mb(bed.pids())
        t0 = time.monotonic()
        for server in servers:
            conn.compute.delete_server(server)
        for server in servers:
            conn.compute.wait_for_delete(server, interval=0.1, wait=600)
        delete_s = time.monotonic() - t0
    finally:
        t0 = time.monotonic()
        bed.stop()
        stop_s = time.monotonic() - t0
    median = statistics.median(singles)
    phases = ", ".join(f"{k} {v:.0f}" for k, v in info.timings.items())
    rows = [
        ["start, s (phases: cumulative s)", f"{start_s:.1f} ({phases})"],
        ["memory after start, MB RSS / PSS", f"{rss:,.0f} / {pss:,.0f}"],
        [f"memory with {args.many} servers, MB RSS / PSS", f"{rss_busy:,.0f} / {pss_busy:,.0f}"],
        [f"one boot to ACTIVE, s (median of {args.single})", f"{median:.2f}"],
        [f"{args.many} boots at once to all ACTIVE, s", f"{many_s:.1f}"],
        [f"{args.many} deletes to all gone, s", f"{delete_s:.1f}"],
        ["stop, s", f"{stop_s:.1f}"],
    ]
    table("Nova bed (nova 34, fake virt driver, 2 compute hosts)", ["measure", "value"], rows)


if __name__ == "__main__":
    main()
