"""A node's details read from its backend when one node is shown (``GET /v1/nodes/<id>
?show_details=true``), for drivers that can (``Driver.current_details``).

Senlin's ``do_get_details`` asked the cloud on every node show; herd keeps what the driver
reported after the last create or update, and asks again only here: one node, on request,
within :data:`TIMEOUT` seconds. Lists never ask (a page of 1,000 nodes would be 1,000
backend calls). When the backend cannot answer, the stored details are shown with
Senlin's ``Error`` key (``code``, ``message``) saying why they may be stale.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from herd.api.deps import Services, run_database
from herd.api.view_models import NodeView
from herd.drivers.base import Driver, ResourceGone, ResourceRef
from herd.engine.driver_args import ref_of
from herd.errors import DriverError, HerdError
from herd.store import profiles

log = logging.getLogger(__name__)

#: seconds a node show waits for the backend before it shows the stored details
TIMEOUT = 10.0
#: backend reads in flight per API process; more node shows get the stored details at once
READS_IN_FLIGHT = 4
#: where the app keeps its :class:`BackendReads` (``Services.extra``)
BACKEND_READS = "live_details_reads"
#: how many profiles' drivers and properties are remembered
CACHED_PROFILES = 1024


Target = tuple[Driver, dict[str, Any]] | None


def _read_target(services: Services, profile_id: str) -> Target:
    """The profile's driver and validated properties (None: no live read for this type)."""
    with services.database.read() as session:
        profile = profiles.get(session, profile_id)
        if profile is None:
            return None
        ptype, spec = profile.type, dict(profile.spec or {})
    try:
        driver = services.drivers.get(ptype)
        if type(driver).current_details is Driver.current_details:
            return None
        return driver, dict(driver.validate_properties(spec.get("properties") or {}))
    except HerdError:
        return None  # an unknown type or a spec no longer valid: what is stored is shown


async def _target(services: Services, profile_id: str) -> Target:
    """:func:`_read_target`, remembered: a profile's spec never changes (only its name and
    metadata do), so a node show costs no profile read after the first of its profile."""
    known: dict[str, Target] = services.extra.setdefault("live_details_targets", {})
    if profile_id in known:
        return known[profile_id]
    target = await run_database(services, _read_target, services, profile_id)
    if len(known) >= CACHED_PROFILES:
        known.clear()  # rare: more profiles than this shown since the last clear
    known[profile_id] = target
    return target


async def refresh(services: Services, view: NodeView) -> NodeView:
    """``view`` with its ``details`` as the backend has them now, when its driver can tell."""
    if not view.get("physical_id") or "details" not in view:
        return view
    target = await _target(services, str(view["profile_id"]))
    if target is None:
        return view
    driver, properties = target
    ref = ref_of(view["id"], view["physical_id"], view.get("data"), properties)
    try:
        current = await _read(services, driver, ref)
    except _Busy:
        busy = (
            f"{READS_IN_FLIGHT} earlier reads of the {driver.profile_type} backend are unanswered"
        )
        return _stale(view, 503, busy)
    except TimeoutError:
        return _stale(
            view, 504, f"the {driver.profile_type} backend did not answer in {TIMEOUT:g} s"
        )
    except DriverError as exc:
        return _stale(view, 404 if isinstance(exc, ResourceGone) else 503, str(exc))
    except Exception as exc:  # a driver bug must not make the node unreadable
        log.exception("node %s: reading its details failed", view["id"])
        return _stale(view, 500, f"reading the details failed: {exc}")
    if current is not None:
        view["details"] = current
    return view


class _Busy(Exception):
    """Every slot for backend reads is taken (by reads the backend has not answered)."""


class BackendReads:
    """The API process's threads for backend reads of node details: at most
    :data:`READS_IN_FLIGHT` at once, joined when the app stops (its lifespan calls
    :meth:`close`). Each read is bounded by the cloud connection's own request timeout
    (``nova_request_timeout``), so a hung backend frees its thread, and the join ends."""

    def __init__(self, slots: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="herd-live-details")
        self._free = threading.BoundedSemaphore(slots)

    def submit(self, driver: Driver, ref: ResourceRef) -> Future[dict[str, Any] | None]:
        """Start ``driver.current_details(ref)``.

        Raises:
            _Busy: every slot holds a read the backend has not answered.
        """
        if not self._free.acquire(blocking=False):
            raise _Busy
        try:
            future = self._pool.submit(driver.current_details, ref)
        except RuntimeError:  # closed: the app is stopping
            self._free.release()
            raise _Busy from None
        future.add_done_callback(lambda _done: self._free.release())
        return future

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def backend_reads(services: Services) -> BackendReads:
    """This app's :class:`BackendReads` (made on first use; the lifespan closes it)."""
    reads = services.extra.get(BACKEND_READS)
    if reads is None:
        reads = services.extra.setdefault(BACKEND_READS, BackendReads(READS_IN_FLIGHT))
    assert isinstance(reads, BackendReads)
    return reads


async def _read(services: Services, driver: Driver, ref: ResourceRef) -> dict[str, Any] | None:
    """``driver.current_details(ref)`` on an owned thread, waited for at most :data:`TIMEOUT`.

    A read the show stopped waiting for keeps its thread and slot until the backend answers
    or the connection's request timeout ends it: node shows never starve the API's other
    work or the engine's calls to the same cloud.
    """
    future = backend_reads(services).submit(driver, ref)
    return await asyncio.wait_for(asyncio.wrap_future(future), timeout=TIMEOUT)


def _stale(view: NodeView, code: int, message: str) -> NodeView:
    details = dict(view.get("details") or {})
    details["Error"] = {
        "code": code,
        "message": f"{message}; these details are from the node's last create or update",
    }
    view["details"] = details
    return view
