"""``GET /metrics`` and what the API itself measures: requests, latency, 409s.

The request counters are labelled with the route *template*
(``/v1/clusters/{cluster_id}``), never the raw path, so ids never become
label values. Requests that match no route count as ``<unmatched>``. The
tombstone and engine gauges are read from the store when Prometheus scrapes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.concurrency import run_in_threadpool
from starlette.types import Scope

from herd.api.deps import Services
from herd.observability.metrics import CONTENT_TYPE, HerdMetrics, exposition
from herd.store import engines, tombstones
from herd.store.database import Database

log = logging.getLogger("herd.api")
router = APIRouter(tags=["metrics"])

UNMATCHED = "<unmatched>"


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus' text format (no auth, as usual for a scrape target; nothing secret in it)."""
    herd_metrics: HerdMetrics = request.app.state.herd.metrics
    body = await run_in_threadpool(exposition, herd_metrics)
    return Response(body, media_type=CONTENT_TYPE)


class StoreCollector(Collector):
    """Gauges read from the store at scrape time: open tombstones and engine liveness."""

    def __init__(self, database: Database, clock: Callable[[], float], dead_after: float) -> None:
        self.database = database
        self.clock = clock
        self.dead_after = dead_after

    def describe(self) -> list[Metric]:
        # Registering must not query the store: describe the families, empty.
        return list(self._families())

    def collect(self) -> Iterator[Metric]:
        try:
            now = self.clock()
            with self.database.read() as session:
                stones = tombstones.summary(session)
                alive = engines.liveness_counts(session, now - self.dead_after)
        except Exception:  # a scrape must still answer when the store does not
            log.exception("reading the store for /metrics failed")
            yield from self._families()
            return
        yield from self._families(now, stones, alive)

    def _families(
        self,
        now: float = 0.0,
        stones: list[tuple[str, str, int, float]] | None = None,
        alive: dict[str, int] | None = None,
    ) -> Iterator[Metric]:
        open_count = GaugeMetricFamily(
            "herd_tombstones_open",
            "Resources being deleted (tombstones), by resource type and status.",
            labels=["resource_type", "status"],
        )
        oldest = GaugeMetricFamily(
            "herd_tombstone_oldest_age_seconds",
            "Age of the oldest open tombstone, by resource type.",
            labels=["resource_type"],
        )
        ages: dict[str, float] = {}
        for kind, status, count, deleted_at in stones or []:
            open_count.add_metric([kind, status], count)
            ages[kind] = max(ages.get(kind, 0.0), now - deleted_at)
        for kind, age in sorted(ages.items()):
            oldest.add_metric([kind], max(age, 0.0))
        engine_family = GaugeMetricFamily(
            "herd_engines",
            "Engines registered in the store, alive (fresh heartbeat) or dead.",
            labels=["state"],
        )
        if alive is not None:
            for state in ("alive", "dead"):
                engine_family.add_metric([state], alive.get(state, 0))
        yield open_count
        yield oldest
        yield engine_family


def route_template(scope: Scope) -> str:
    """The path template of the route that served ``scope`` (after routing ran)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else UNMATCHED


#: the methods counted by name; any other (a client may send any token) counts as ``other``,
#: so made-up methods cannot add series to /metrics
STANDARD_METHODS = frozenset(
    ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT")
)


def method_label(method: str) -> str:
    return method if method in STANDARD_METHODS else "other"


class RequestMetrics:
    """Counts requests by method, route template and status (a ``FinishedHook``)."""

    def __init__(self, metrics: HerdMetrics) -> None:
        self.metrics = metrics
        # The labelled children, looked up once per series: ``labels()`` checks and joins
        # its values under a lock on every call. The series are bounded (route templates,
        # standard methods, statuses) and never removed, so the children stay valid.
        self._counted: dict[tuple[str, str, int], Counter] = {}
        self._timed: dict[tuple[str, str], Histogram] = {}

    def __call__(self, scope: Scope, status: int, seconds: float) -> None:
        route = route_template(scope)
        method = method_label(str(scope.get("method", "")))
        counted = self._counted.get((method, route, status))
        if counted is None:
            counted = self._counted.setdefault(
                (method, route, status),
                self.metrics.api_requests.labels(method, route, str(status)),
            )
        counted.inc()
        timed = self._timed.get((method, route))
        if timed is None:
            timed = self._timed.setdefault(
                (method, route), self.metrics.api_latency.labels(method, route)
            )
        timed.observe(seconds)
        if status == 409:
            error_type = (scope.get("state") or {}).get("error_type") or "Conflict"
            self.metrics.conflict(str(error_type))


def install_metrics(app: FastAPI, services: Services) -> RequestMetrics:
    """Serve ``/metrics`` and read store gauges at scrape time; the hook that counts every
    request (``herd.api.finished_request``: the app puts it beside the access log's)."""
    settings = services.settings
    services.metrics.add_scrape_collector(
        StoreCollector(services.database, services.clock, settings.engine_dead_after)
    )
    app.include_router(router)
    return RequestMetrics(services.metrics)
