"""The dashboard's first rows at 100,000 members, beside the same page at 1,000 (issue 26).

One real ``herd serve`` (SQLite, ``herd.sim`` driver) holds two clusters, ``big`` (100,000
members by default) and ``peer`` (1,000). Each cluster page is opened in a fresh headless
Chromium (Debian's ``chromium`` and ``chromium-driver``, as the browser tests) several times,
and each load measures:

* the time from the navigation's start to the first member rows in the table, read in the page
  (a MutationObserver installed before the page's own scripts records ``performance.now()``);
* the bytes of the first load: everything the page fetched until its first refresh ended
  (``transferSize`` of the document and every resource, a fresh profile: nothing cached), and
  of it what came from ``/v1``.

Beside them, the plain JSON API: the first page of 50 members, the cluster with and without its
member ids, and the newest 25 cluster actions in Senlin's full view and with ``summary=true``.
The limits are set for the run (``max_nodes_per_cluster``), whatever the defaults are.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.e2e.dashboard.browser
from tests.e2e.dashboard.browser import CHROMEDRIVER, CHROMIUM, chromium

from common import API_HEADERS, herd_server, sim_cluster, table

# Installed before the page's scripts: when the member table first has rows, note the time.
FIRST_ROWS_PROBE = """
window.__herdFirstRows = null;
new MutationObserver((records, observer) => {
  if (document.querySelector("#members tbody tr")) {
    window.__herdFirstRows = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""
# Bytes on the wire of the document and of every resource, and of the /v1 reads alone.
LOADED = """
const nav = performance.getEntriesByType("navigation")[0];
const all = performance.getEntriesByType("resource");
const api = all.filter((e) => new URL(e.name).pathname.startsWith("/v1/"));
const sum = (entries) => entries.reduce((total, e) => total + e.transferSize, 0);
return { total: nav.transferSize + sum(all), api: sum(api), requests: all.length + 1 };
"""
# the cluster page's own list (api.js CLUSTER_ACTIONS)
ACTIONS = (
    "CLUSTER_CREATE,CLUSTER_DELETE,CLUSTER_UPDATE,CLUSTER_SCALE_OUT,CLUSTER_SCALE_IN,"
    "CLUSTER_RESIZE,CLUSTER_ADD_NODES,CLUSTER_DEL_NODES,CLUSTER_REPLACE_NODES,"
    "CLUSTER_REPLACE_UNHEALTHY,CLUSTER_CHECK,CLUSTER_RECOVER,CLUSTER_ATTACH_POLICY,"
    "CLUSTER_DETACH_POLICY,CLUSTER_UPDATE_POLICY"
)


def page_load(url: str, cluster: str) -> dict[str, float]:
    """One load of the cluster page in a fresh browser: first rows (s) and bytes."""
    with chromium() as driver:
        driver.set_script_timeout(300)
        driver.execute_cdp_cmd(
            "Page.addScriptToEvaluateOnNewDocument", {"source": FIRST_ROWS_PROBE}
        )
        # no timer refresh during the measure: only the first load's requests are counted
        driver.get(f"{url}/ui/clusters/{cluster}?poll=3600")
        end = time.monotonic() + 300
        first_rows = None
        while first_rows is None and time.monotonic() < end:
            first_rows = driver.execute_script("return window.__herdFirstRows")
            time.sleep(0.05)
        if first_rows is None:
            raise RuntimeError("no member row within 300 s")
        # the first refresh has ended when the timeline is drawn
        while time.monotonic() < end:
            if driver.execute_script(
                "return !!document.querySelector('#timeline ul, #timeline p')"
            ):
                break
            time.sleep(0.05)
        time.sleep(0.5)  # the chart's last requests settle
        loaded = driver.execute_script(LOADED)
    return {"first_rows": first_rows / 1000, **loaded}


def api_read(client: httpx.Client, path: str, repeat: int) -> tuple[float, int]:
    """Median seconds of ``repeat`` reads after a warm-up, and the body's bytes."""
    client.get(path).raise_for_status()
    times = []
    size = 0
    for _ in range(repeat):
        started = time.perf_counter()
        r = client.get(path)
        times.append(time.perf_counter() - started)
        r.raise_for_status()
        size = len(r.content)
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--members", type=int, default=100_000)
    parser.add_argument("--peer", type=int, default=1_000)
    parser.add_argument("--loads", type=int, default=3, help="page loads per cluster")
    args = parser.parse_args()
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        sys.exit(f"bench/dashboard.py needs {CHROMIUM} and {CHROMEDRIVER} (chromium-driver)")
    with tempfile.TemporaryDirectory(prefix="herd-bench-dashboard-") as tmp:
        limit = str(max(args.members, args.peer))
        server = herd_server(Path(tmp) / "data", HERD_MAX_NODES_PER_CLUSTER=limit)
        try:
            run(server.url, args)
        finally:
            server.stop()


def run(url: str, args: argparse.Namespace) -> None:
    with httpx.Client(base_url=url, headers=API_HEADERS, timeout=3600) as client:
        clusters = {}
        for name, size in (("peer", args.peer), ("big", args.members)):
            started = time.perf_counter()
            clusters[size] = sim_cluster(client, size, name=name)
            print(f"{size:,} members created in {time.perf_counter() - started:.1f} s")
        pages = []
        for size, cluster in clusters.items():
            loads = [page_load(url, cluster) for _ in range(args.loads)]
            first = sorted(load["first_rows"] for load in loads)
            last = loads[-1]
            pages.append(
                [
                    f"cluster page, {size:,} members",
                    f"{statistics.median(first):.2f} ({first[0]:.2f}-{first[-1]:.2f})",
                    f"{int(last['total']):,}",
                    f"{int(last['api']):,}",
                    str(int(last["requests"])),
                ]
            )
        table(
            f"Cluster page in headless Chromium: first member rows and first load "
            f"(median of {args.loads} fresh loads)",
            ["page", "first rows s (min-max)", "first load bytes", "of it /v1 bytes", "requests"],
            pages,
        )
        reads = []
        for size, cluster in clusters.items():
            for label, path in (
                (
                    "members, the page's first 50",
                    f"/v1/nodes?cluster_id={cluster}&limit=51&sort=index:asc",
                ),
                ("cluster, show_nodes=false", f"/v1/clusters/{cluster}?show_nodes=false"),
                ("cluster, with member ids", f"/v1/clusters/{cluster}"),
                ("newest 25 actions, full", actions_path(cluster, summary=False)),
                ("newest 25 actions, summary", actions_path(cluster, summary=True)),
            ):
                seconds, size_bytes = api_read(client, path, repeat=3)
                reads.append([f"{size:,}", label, f"{seconds * 1000:,.0f}", f"{size_bytes:,}"])
        table(
            "The JSON API alone (httpx, median of 3 after a warm-up)",
            ["members", "read", "ms", "bytes"],
            reads,
        )


def actions_path(cluster: str, *, summary: bool) -> str:
    path = f"/v1/actions?cluster_id={cluster}&sort=created_at:desc&limit=25"
    path += "".join(f"&action={name}" for name in ACTIONS.split(","))
    return path + ("&summary=true" if summary else "")


if __name__ == "__main__":
    main()
