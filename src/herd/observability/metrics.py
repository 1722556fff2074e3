"""herd's Prometheus metrics: the collectors, on a registry the caller owns.

``HerdMetrics`` is built once per process by whoever starts things (the API
app, ``herd engine``, a test) and handed down: the engine records actions,
locks, lifecycle hooks and victims; the API records requests and conflicts;
the health manager calls :meth:`HerdMetrics.health_detected` and
:meth:`HerdMetrics.health_recovered`. Nothing here is a module global, so two
apps in one process (tests) never share counts.

Every label has a bounded set of values: action names, statuses, error types,
route templates, hook types and results, ranking rules without their zone or
region suffix. Node, cluster and action ids are never labels.

Several API processes: set ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory
shared by the processes before they start; every process then writes its
values there and :func:`exposition` merges them (prometheus_client's
multiprocess mode). Without it each process exposes its own values.
docs/metrics.md says more.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

#: seconds; actions run from milliseconds (sim) to an hour (the default timeout)
ACTION_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600)
API_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
HOOK_BUCKETS = (0.1, 0.5, 1, 5, 10, 30, 60, 180, 600, 1800, 3600)
#: seconds; one coordination transaction (a claim, a lock, a heartbeat) takes a millisecond
#: or two on an idle database and more when engines queue on shared rows
COORDINATION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5)
#: the engine's steps that every engine sharing a database does against the same tables
COORDINATION_STEPS = ("claim", "lock", "finish", "heartbeat", "takeover", "lease")

HEALTH_SOURCES = ("driver", "poll_url", "node_check", "application", "lifecycle_event", "other")
HEALTH_OPERATIONS = ("REBOOT", "REBUILD", "RECREATE", "REPLACE", "OTHER")
HEALTH_OUTCOMES = ("succeeded", "failed")
HOOK_RESULTS = (
    "CONTINUE",
    "ABANDON",
    "TIMEOUT_CONTINUE",
    "TIMEOUT_ABANDON",
    "UNDELIVERED_CONTINUE",
    "UNDELIVERED_ABANDON",
    "CANCELLED",
)

_GROUP_SUFFIX = re.compile(r" \((?:zone|region) [^)]*\)$")


def victim_criterion(rule: str) -> str:
    """A ranking rule without its ``(zone AZ1)`` / ``(region R, redistributed)`` suffix."""
    return _GROUP_SUFFIX.sub("", rule)


def _bounded(value: str, allowed: Iterable[str], other: str) -> str:
    return value if value in allowed else other


class HerdMetrics:
    """Every collector herd exposes, registered on ``registry``."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        # The ``*_created`` series double the series count and say nothing a dashboard uses.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = registry if registry is not None else CollectorRegistry()
        self.scrape_collectors: list[Collector] = []
        r = self.registry
        self.actions = Counter(
            "herd_actions",
            "Actions the engine finished, by action type and final status.",
            ["action", "status"],
            registry=r,
        )
        self.action_duration = Histogram(
            "herd_action_duration_seconds",
            "Run time of finished actions (start to end), by action type and final status.",
            ["action", "status"],
            buckets=ACTION_BUCKETS,
            registry=r,
        )
        self.action_wait = Histogram(
            "herd_action_wait_seconds",
            "Time from an action being stored until the engine held its locks "
            "(queue plus lock waits), by action type.",
            ["action"],
            buckets=ACTION_BUCKETS,
            registry=r,
        )
        self.lock_busy = Counter(
            "herd_lock_busy",
            "Lock attempts by the engine that found the cluster or node lock held.",
            ["scope"],
            registry=r,
        )
        self.api_conflicts = Counter(
            "herd_api_conflicts",
            "API answers 409, by error type (ResourceIsLocked, ActionInProgress, ...).",
            ["type"],
            registry=r,
        )
        self.hook_messages = Counter(
            "herd_lifecycle_hook_messages",
            "Lifecycle hook messages, by hook type and delivery outcome (sent, failed).",
            ["type", "outcome"],
            registry=r,
        )
        self.hook_resolutions = Counter(
            "herd_lifecycle_hook_resolutions",
            "Lifecycle hook waits that ended, by how they ended.",
            ["result"],
            registry=r,
        )
        self.hook_wait = Histogram(
            "herd_lifecycle_hook_wait_seconds",
            "Time a victim waited for its lifecycle hook, by how the wait ended.",
            ["result"],
            buckets=HOOK_BUCKETS,
            registry=r,
        )
        self.victims = Counter(
            "herd_victims",
            "Members chosen for removal by shrinking actions, by the rule that ranked them.",
            ["criterion"],
            registry=r,
        )
        self.health_detections = Counter(
            "herd_health_detections",
            "Members found unhealthy, by what found them.",
            ["source"],
            registry=r,
        )
        self.health_recoveries = Counter(
            "herd_health_recoveries",
            "Recoveries of unhealthy members, by operation and outcome.",
            ["operation", "outcome"],
            registry=r,
        )
        self.api_requests = Counter(
            "herd_api_requests",
            "API requests, by method, route template and HTTP status.",
            ["method", "route", "status"],
            registry=r,
        )
        self.api_latency = Histogram(
            "herd_api_request_duration_seconds",
            "API request latency, by method and route template.",
            ["method", "route"],
            buckets=API_BUCKETS,
            registry=r,
        )
        self.engine_running = Gauge(
            "herd_engine_running",
            "1 while this process runs an engine (dispatcher and heartbeat threads).",
            registry=r,
            multiprocess_mode="livemax",
        )
        self.engine_heartbeat = Gauge(
            "herd_engine_heartbeat_timestamp_seconds",
            "When this process's engine last wrote its heartbeat (Unix time).",
            registry=r,
            multiprocess_mode="max",
        )
        self.coordination = Histogram(
            "herd_engine_coordination_seconds",
            "Time the engine spent in the transactions engines sharing a database coordinate "
            "with (claim, lock, finish, heartbeat, takeover, lease), by step.",
            ["step"],
            buckets=COORDINATION_BUCKETS,
            registry=r,
        )
        self.engine_in_flight = Gauge(
            "herd_engine_actions_in_flight",
            "Top-level actions this process's engine is running now.",
            registry=r,
            multiprocess_mode="livesum",
        )

    # -- recording -----------------------------------------------------------------------

    def action_finished(self, action: str, status: str, duration: float | None) -> None:
        """Count a finished action and observe its run time."""
        self.actions.labels(action, status).inc()
        if duration is not None:
            self.action_duration.labels(action, status).observe(max(duration, 0.0))

    def action_locked(self, action: str, waited: float) -> None:
        """Observe how long an action waited (queued and for locks) before it held its locks."""
        self.action_wait.labels(action).observe(max(waited, 0.0))

    def lock_was_busy(self, scope: str) -> None:
        """Count a lock attempt that found the lock held (``cluster`` or ``node``)."""
        self.lock_busy.labels(_bounded(scope, ("cluster", "node"), "other")).inc()

    def coordinated(self, step: str, seconds: float) -> None:
        """Observe one coordination transaction (``COORDINATION_STEPS``; else ``other``)."""
        self.coordination.labels(_bounded(step, COORDINATION_STEPS, "other")).observe(
            max(seconds, 0.0)
        )

    @contextmanager
    def timed(self, step: str) -> Iterator[None]:
        """Observe the block's wall time as one ``step`` of :meth:`coordinated`."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.coordinated(step, time.perf_counter() - started)

    def conflict(self, error_type: str) -> None:
        """Count an API 409 answer by its error type."""
        self.api_conflicts.labels(error_type).inc()

    def hook_message(self, hook_type: str, delivered: bool) -> None:
        """Count a lifecycle hook message, delivered or not."""
        kind = _bounded(hook_type, ("webhook", "zaqar"), "other")
        self.hook_messages.labels(kind, "sent" if delivered else "failed").inc()

    def hook_resolved(self, result: str, waited: float) -> None:
        """Count a hook wait that ended and observe how long it lasted."""
        label = _bounded(result, HOOK_RESULTS, "OTHER")
        self.hook_resolutions.labels(label).inc()
        self.hook_wait.labels(label).observe(max(waited, 0.0))

    def victims_chosen(self, rules: Iterable[str]) -> None:
        """Count chosen victims by the rule that ranked each of them."""
        for rule in rules:
            self.victims.labels(victim_criterion(rule)).inc()

    def health_detected(self, source: str) -> None:
        """Count a member found unhealthy.

        Args:
            source: what found it: ``driver`` (the driver's check), ``poll_url``,
                ``node_check`` (a NODE_CHECK action), ``application``
                (mark-unhealthy through the API), ``lifecycle_event``
                (a driver's exit event); anything else counts as ``other``.
        """
        self.health_detections.labels(_bounded(source, HEALTH_SOURCES, "other")).inc()

    def health_recovered(self, operation: str, succeeded: bool) -> None:
        """Count a recovery of an unhealthy member.

        Args:
            operation: ``REBOOT``, ``REBUILD``, ``RECREATE`` or ``REPLACE``
                (anything else counts as ``OTHER``).
            succeeded: whether the recovery action succeeded.
        """
        label = _bounded(operation.upper(), HEALTH_OPERATIONS, "OTHER")
        self.health_recoveries.labels(label, "succeeded" if succeeded else "failed").inc()

    # -- exposing ------------------------------------------------------------------------

    def add_scrape_collector(self, collector: Collector) -> None:
        """Add a collector that reads its values at scrape time (e.g. from the store)."""
        self.scrape_collectors.append(collector)
        if not multiprocess_mode():
            self.registry.register(collector)


def multiprocess_mode() -> bool:
    """True when prometheus_client writes values to ``PROMETHEUS_MULTIPROC_DIR``."""
    return bool(os.environ.get(MULTIPROC_ENV))


def exposition(metrics: HerdMetrics) -> bytes:
    """The text exposition of ``metrics`` (merged over processes in multiprocess mode)."""
    if not multiprocess_mode():
        return generate_latest(metrics.registry)
    registry = CollectorRegistry()
    MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    for collector in metrics.scrape_collectors:
        registry.register(collector)
    return generate_latest(registry)
