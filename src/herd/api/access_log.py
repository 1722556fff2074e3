"""One access log line per request: method, route template, status, duration, request id.

The line goes through herd's logging (``herd.access`` logger), so with ``--log-format json``
it is one JSON object carrying ``request_id`` from the log context (the request-id middleware
wraps this one) and the fields below as keys. The route is the *template*
(``/v1/clusters/{cluster_id}``), never the raw path: ids in paths would make every line
unique and leak names into log indexes. uvicorn's own access log stays off (server.py).

Health probes (``/healthz``) and ``/metrics`` scrapes are logged at DEBUG: a
monitoring system calling them every few seconds would otherwise drown the API's lines.
"""

from __future__ import annotations

import logging

from starlette.types import Scope

from herd.api.metrics import route_template

log = logging.getLogger("herd.access")

#: routes a monitor calls on a timer: their lines are DEBUG
PROBE_ROUTES = frozenset({"/healthz", "/metrics"})


#: the access line's message; its arguments are the method, route, status and duration
MESSAGE = "%s %s %s %.1fms"


def log_request(scope: Scope, status: int, seconds: float) -> None:
    """Writes the access line once the answer has been sent (a ``FinishedHook``)."""
    route = route_template(scope)
    level = logging.DEBUG if route in PROBE_ROUTES else logging.INFO
    if not log.isEnabledFor(level):
        return
    duration_ms = round(seconds * 1000, 3)
    method = str(scope.get("method", ""))
    # The record is made directly, not through ``log.log``: that would look up the
    # caller's file and line (``findCaller`` walks the stack), which no format of herd's
    # writes, on every request (issue 28: a tenth of the event loop's time went to this
    # line). Filters and handlers run as before (``Logger.handle``).
    record = log.makeRecord(
        log.name,
        level,
        "(unknown file)",
        0,
        MESSAGE,
        (method, route, status, duration_ms),
        None,
        func="(unknown function)",  # what logging writes when it finds no caller
        extra={"method": method, "route": route, "status": status, "duration_ms": duration_ms},
    )
    log.handle(record)
