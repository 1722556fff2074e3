"""``herd agent --region R``: keep region R's copies in line with central, through the API.

Every pass the agent lists the central clusters spanning its region
(``GET /v1/clusters?region=R&global_project=true`` with its agent token),
creates the copies that are missing, and for each local copy central no longer
lists asks central directly: a 404 removes the copy. :meth:`Reconciler.ensure`
is the on-demand path of a regional reader that misses locally (Tricircle's
local Neutron asking central on a local miss).

The agent trusts central's 404 alone. While a cluster is being deleted central
answers the agent's credential 404 (its tombstone), so an agent can never
re-create a copy central has already deleted. Copies are created under the
region's write lock from a central answer fetched under that same lock (see
``RegionBackend.create_from``), so an answer can not go stale between the
fetch and the insert either.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass, field

import httpx

from herd.config import Settings
from herd.regions import RegionalCopy, RegionBackend, open_backend

log = logging.getLogger(__name__)

PAGE_SIZE = 500


class CentralUnavailable(Exception):
    """Central did not give a usable answer (down, 5xx, bad body): change nothing."""


@dataclass
class PassReport:
    """What one reconciliation pass did."""

    listed: int = 0
    created: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Reconciler:
    """Reconciles one region's copies with central, as the holder of an agent token."""

    def __init__(
        self, region: str, backend: RegionBackend, client: httpx.Client, *, actor: str = ""
    ) -> None:
        """Reconcile ``backend`` (region ``region``) against the API behind ``client``.

        Args:
            region: the region's name, as in the members' ``placement.region_name``.
            backend: the region's store of copies.
            client: an HTTP client whose base URL is the central API and which
                sends the agent's ``X-Auth-Token``.
            actor: who the region's history records as creator (default ``agent-<region>``).
        """
        self.region = region
        self.backend = backend
        self.client = client
        self.actor = actor or f"agent-{region}"

    # -- central -------------------------------------------------------------------------

    def central_cluster(self, cluster_id: str) -> dict[str, object] | None:
        """Central's view of one cluster, or None when central answers 404."""
        try:
            response = self.client.get(f"/v1/clusters/{cluster_id}")
        except httpx.HTTPError as exc:
            raise CentralUnavailable(f"GET cluster {cluster_id}: {exc}") from exc
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise CentralUnavailable(f"GET cluster {cluster_id}: HTTP {response.status_code}")
        cluster: dict[str, object] = response.json()["cluster"]
        return cluster

    def central_clusters(self) -> dict[str, dict[str, object]]:
        """Every central cluster spanning this region, by id (all pages)."""
        found: dict[str, dict[str, object]] = {}
        params: dict[str, str | int] = {
            "region": self.region,
            "global_project": "true",
            "limit": PAGE_SIZE,
            "sort": "created_at",
        }
        while True:
            try:
                response = self.client.get("/v1/clusters", params=params)
            except httpx.HTTPError as exc:
                raise CentralUnavailable(f"list clusters: {exc}") from exc
            if response.status_code != 200:
                raise CentralUnavailable(f"list clusters: HTTP {response.status_code}")
            page = response.json()["clusters"]
            found.update({item["id"]: item for item in page})
            if len(page) < PAGE_SIZE:
                return found
            params["marker"] = page[-1]["id"]

    def _copy_of(self, view: dict[str, object]) -> RegionalCopy:
        return RegionalCopy(
            cluster_id=str(view["id"]),
            name=str(view.get("name") or ""),
            project=str(view.get("project") or ""),
            created_at=0.0,
            region=self.region,
        )

    def _fetch(self, cluster_id: str) -> RegionalCopy | None:
        view = self.central_cluster(cluster_id)
        return self._copy_of(view) if view is not None else None

    # -- the two paths -------------------------------------------------------------------

    def ensure(self, cluster_id: str) -> RegionalCopy | None:
        """What a regional reader does: the local copy, or one made from central's answer.

        Returns None when central answers 404 (nothing is created).

        Raises:
            CentralUnavailable: central could not be asked; nothing was changed.
        """
        existing = self.backend.get(cluster_id)
        if existing is not None:
            return existing
        # A 404 creates nothing, so it needs no lock: only a 200 is fetched again
        # under the region's lock before the copy is made (readers of deleted
        # clusters would otherwise queue on that lock).
        if self._fetch(cluster_id) is None:
            return None
        return self.backend.create_from(cluster_id, lambda: self._fetch(cluster_id), self.actor)

    def reconcile_once(self) -> PassReport:
        """One pass: create missing copies, remove copies of clusters central answers 404 for."""
        report = PassReport()
        try:
            central = self.central_clusters()
        except CentralUnavailable as exc:
            report.errors.append(str(exc))
            return report
        report.listed = len(central)
        local = {copy.cluster_id for copy in self.backend.copies()}
        for cluster_id in sorted(set(central) - local):
            try:
                # Fetched again under the region's lock: the listing may be stale by now.
                if self.ensure(cluster_id) is not None:
                    report.created.append(cluster_id)
            except CentralUnavailable as exc:
                report.errors.append(str(exc))
        for cluster_id in sorted(local - set(central)):
            try:
                gone = self.central_cluster(cluster_id) is None
            except CentralUnavailable as exc:
                report.errors.append(str(exc))
                continue
            if gone and self.backend.delete(cluster_id, self.actor):
                report.removed.append(cluster_id)
        return report

    def run(self, stop: threading.Event, interval: float) -> None:
        """Reconcile every ``interval`` seconds until ``stop`` is set."""
        while not stop.is_set():
            report = self.reconcile_once()
            if report.created or report.removed:
                log.info(
                    "region %s: created %d, removed %d copies",
                    self.region,
                    len(report.created),
                    len(report.removed),
                )
            for error in report.errors[:3]:
                log.warning("region %s: %s", self.region, error)
            stop.wait(interval)


def agent_client(url: str, token: str | None, timeout: float = 10.0) -> httpx.Client:
    """An HTTP client for the central API with the agent's credential."""
    headers = {"X-Auth-Token": token} if token else {}
    return httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)


def run_forever(settings: Settings, region: str, url: str, token: str | None) -> None:
    """``herd agent --region R``: reconcile region R until SIGINT or SIGTERM."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    config = next((r for r in settings.regions if r.name == region), None)
    if config is None:
        known = ", ".join(r.name for r in settings.regions) or "none"
        raise SystemExit(f"Unknown region '{region}' (configured: {known}); set HERD_REGIONS.")
    backend = open_backend(config, settings.data_dir)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with agent_client(url, token) as client:
        log.info("herd agent for region %s reconciling against %s", region, url)
        started = time.monotonic()
        try:
            Reconciler(region, backend, client).run(stop, settings.agent_interval)
        finally:
            backend.close()
            log.info("herd agent stopped after %.0fs", time.monotonic() - started)
