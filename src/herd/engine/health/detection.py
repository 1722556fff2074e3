"""Asking about one node: the driver (NODE_STATUS_POLLING) and its poll URL (NODE_STATUS_POLL_URL).

Each probe returns a :class:`ModeAnswer` and never raises: a probe that cannot
be made is an answer too (with ``poll_url_conn_error_as_unhealthy`` deciding
what a connection error means). Probes run on the health manager's probe pool;
poll URL retries sleep on a stop event, so an engine that stops does not wait
for them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from herd.drivers.base import Driver, ResourceRef
from herd.engine.driver_args import ref_of
from herd.engine.outbound import OutboundGuard
from herd.errors import HerdError, OutboundRefused
from herd.policies.health_rules import ModeAnswer
from herd.policies.health_settings import DetectionMode
from herd.types import DetectionType

_PLACEHOLDER = re.compile(r"\{(nodename|node_id|index|cluster_id|physical_id|port)\}")


@dataclass(frozen=True, slots=True)
class ProbeTarget:
    """A member as the probes need it."""

    node_id: str
    name: str
    index: int
    cluster_id: str | None
    physical_id: str | None
    data: Mapping[str, object] = field(default_factory=dict)
    properties: Mapping[str, object] = field(default_factory=dict)

    def ref(self) -> ResourceRef:
        return ref_of(self.node_id, self.physical_id, self.data, self.properties)


def expand_poll_url(template: str, target: ProbeTarget) -> str:
    """Fill ``{nodename}`` (Senlin's) and herd's ``{node_id}``, ``{index}``,
    ``{cluster_id}``, ``{physical_id}`` and ``{port}`` (from the node's data).

    Raises:
        ValueError: the template needs a value the node does not have.
    """
    values = {
        "nodename": target.name,
        "node_id": target.node_id,
        "index": str(target.index),
        "cluster_id": target.cluster_id or "",
        "physical_id": target.physical_id or "",
        "port": "" if target.data.get("port") is None else str(target.data["port"]),
    }

    def fill(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        if not value:
            raise ValueError(f"the node has no {match.group(1)} for {match.group(0)}")
        return value

    return _PLACEHOLDER.sub(fill, template)


def probe_status(driver: Driver, target: ProbeTarget) -> ModeAnswer:
    """NODE_STATUS_POLLING: ask the driver (process alive and healthy; sim server fine)."""
    mode = DetectionType.NODE_STATUS_POLLING
    if not target.physical_id:
        return ModeAnswer(mode, False, "node has no physical resource")
    try:
        report = driver.check(target.ref())
    except HerdError as exc:
        return ModeAnswer(mode, False, f"check failed: {exc}")
    except Exception as exc:  # a driver bug is reported, not raised into the manager
        return ModeAnswer(mode, False, f"check failed: {exc!r}")
    return ModeAnswer(mode, report.healthy, report.reason or ("healthy" if report.healthy else ""))


class PollUrlClients:
    """One HTTP client per ``poll_url_ssl_verify`` value, shared by every probe, and the
    outbound guard every poll goes through (it follows the redirects, each one checked)."""

    def __init__(self, guard: OutboundGuard | None = None) -> None:
        self.guard = guard if guard is not None else OutboundGuard()
        # Proxies from the environment must not intercept health probes.
        self._clients = {
            verify: httpx.Client(verify=verify, trust_env=False, follow_redirects=False)
            for verify in (True, False)
        }

    def get(self, verify: bool) -> httpx.Client:
        return self._clients[verify]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()


def _attempt(clients: PollUrlClients, url: str, mode: DetectionMode) -> tuple[bool | None, str]:
    """One GET: (True, ...) healthy, (False, why) unhealthy, (None, why) connection error.

    The reasons never quote the answer's body: they are shown to the tenant, and the
    body of whatever the URL reached is none of its business (docs/security.md).
    """
    timeout = max(mode.poll_url_retry_interval * 0.1, 1.0)  # Senlin's per-attempt timeout
    client = clients.get(mode.poll_url_ssl_verify)
    try:
        response = clients.guard.request(client, "GET", url, field="poll_url", timeout=timeout)
    except OutboundRefused as exc:
        return None, f"refused: {exc.message}"
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if not response.is_success:
        return False, f"poll URL answered HTTP {response.status_code}"
    pattern = mode.poll_url_healthy_response
    if pattern and re.search(pattern, response.text) is None:
        return False, f"poll URL answer did not match {pattern!r}"
    return True, f"poll URL answered HTTP {response.status_code}"


def probe_poll_url(
    clients: PollUrlClients, mode: DetectionMode, target: ProbeTarget, stop: threading.Event
) -> ModeAnswer:
    """NODE_STATUS_POLL_URL: GET the expanded URL, retrying while it fails.

    ``poll_url_retry_limit`` attempts in all (at least one, as Senlin's
    ``stop_after_attempt``), ``poll_url_retry_interval`` seconds apart; the node is
    healthy as soon as one attempt is. An answer other than 2xx, or a body without the
    ``poll_url_healthy_response`` pattern, is a failed attempt; a connection error
    is one only with ``poll_url_conn_error_as_unhealthy``.
    """
    kind = DetectionType.NODE_STATUS_POLL_URL
    try:
        url = expand_poll_url(mode.poll_url, target)
    except ValueError as exc:
        return ModeAnswer(kind, False, f"poll_url {mode.poll_url}: {exc}")
    attempts = max(1, mode.poll_url_retry_limit)
    reason = ""
    for attempt in range(1, attempts + 1):
        healthy, reason = _attempt(clients, url, mode)
        if healthy is None:
            if not mode.poll_url_conn_error_as_unhealthy:
                return ModeAnswer(kind, True, f"{url}: connection error ignored ({reason})")
            healthy = False
        if healthy:
            return ModeAnswer(kind, True, f"{url}: {reason}")
        if attempt < attempts and stop.wait(mode.poll_url_retry_interval):
            break
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    return ModeAnswer(kind, False, f"{url} failed: {reason} ({tries})")
