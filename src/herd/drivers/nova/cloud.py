"""Which cloud herd talks to, one openstacksdk connection per region, bounded and retried.

The cloud is the clouds.yaml entry named by ``HERD_NOVA_CLOUD``, or else the
``OS_*`` variables (openstacksdk's own loading, so whatever ``openstack`` the CLI
accepts works). Credentials stay inside openstacksdk: herd never copies them
into node data, events, errors or logs.

Every call to the cloud goes through :meth:`NovaCloud.call`, which holds one of
``max_calls`` slots (a per-cloud limit on requests in flight; waiting for a
server to become ACTIVE holds no slot between polls) and retries the answers
that mean "later": 409 (Nova is busy with the server), 429 and 503, with
exponential back-off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from herd.config import Settings
from herd.drivers.nova.sdk import NovaConnection
from herd.errors import DriverError

T = TypeVar("T")
P = ParamSpec("P")

#: Nova answers meaning "not now": the server is busy, too many requests, unavailable
RETRYABLE_STATUS = frozenset({409, 429, 503})

#: openstacksdk's and keystoneauth's exceptions for a request that got no answer
NO_ANSWER = frozenset(
    {
        "ConnectFailure",
        "ConnectTimeout",
        "ConnectionError",
        "RetriableConnectionFailure",
        "DiscoveryFailure",
    }
)


@dataclass(frozen=True)
class NovaOptions:
    """The operator's settings for ``os.nova.server`` (see ``herd.config.Settings``)."""

    cloud: str | None = None
    max_calls: int = 10
    timeout: float = 600.0
    #: seconds one request may take (openstacksdk's ``api_timeout``)
    request_timeout: float = 60.0
    retries: int = 5
    retry_delay: float = 0.5
    #: marks this herd's servers (their owner tag): two herds never touch each other's
    owner: str = "herd"
    notifications_url: str | None = None

    @classmethod
    def for_data_dir(cls, data_dir: Path, **given: Any) -> NovaOptions:
        """Options whose owner defaults to this host and data directory (as the process
        driver's marker does), so two herds on one cloud never adopt each other's servers."""
        if not given.get("owner"):
            given["owner"] = f"herd@{socket.gethostname()}:{Path(data_dir).resolve()}"
        return cls(**{key: value for key, value in given.items() if value is not None})

    @classmethod
    def from_settings(cls, settings: Settings) -> NovaOptions:
        """The options the operator set (``HERD_NOVA_*``).

        The default owner is the database herd keeps its nodes in: every engine sharing
        a PostgreSQL database is one herd (it may resume another's creates and clean up
        its orphans), while a SQLite file is one host's (its path may repeat elsewhere).
        Only a hash of it reaches the cloud, so a password in the URL goes nowhere.
        """
        url = settings.nova_notifications_url
        database = settings.database_url()
        owner = settings.nova_owner or (
            f"herd@{socket.gethostname()}:{database}"
            if database.startswith("sqlite")
            else f"herd@{database}"
        )
        return cls.for_data_dir(
            settings.data_dir,
            cloud=settings.nova_cloud,
            max_calls=settings.nova_max_concurrent_calls,
            timeout=settings.nova_timeout,
            request_timeout=settings.nova_request_timeout,
            retries=settings.nova_retries,
            owner=owner,
            notifications_url=url.get_secret_value() if url is not None else None,
        )

    @property
    def owner_tag(self) -> str:
        """The Nova tag every server of this herd carries (tags are at most 60 characters)."""
        return "herd-" + hashlib.sha256(self.owner.encode()).hexdigest()[:16]


def node_tag(node_id: str) -> str:
    """The tag that finds a node's server again (a create resumed after a crash)."""
    return f"herd-node-{node_id}"


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an openstacksdk error, if it has one."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def nova_message(exc: BaseException) -> str:
    """What Nova said, without the request's URL; never a credential."""
    details = getattr(exc, "details", None)
    if isinstance(details, str) and details.strip():
        status = status_of(exc)
        return f"{details.strip()} (HTTP {status})" if status else details.strip()
    return str(exc).strip() or type(exc).__name__


class NovaCloud:
    """Connections to the configured cloud, by region, and the guarded way to call it."""

    def __init__(
        self,
        options: NovaOptions,
        *,
        connect: Callable[..., NovaConnection] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Hold the options; nothing is contacted until the first call.

        Args:
            options: the operator's settings.
            connect: makes a connection (``openstack.connect`` by default; tests of
                the pure parts may pass their own).
            sleep: how back-off is spent.
        """
        self.options = options
        self._connect = connect
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(options.max_calls)
        self._lock = threading.Lock()
        self._connections: dict[str | None, NovaConnection] = {}

    @property
    def configured(self) -> bool:
        """Whether an operator named a cloud (else herd never contacts one by itself)."""
        return bool(
            self.options.cloud or os.environ.get("OS_CLOUD") or os.environ.get("OS_AUTH_URL")
        )

    def connection(self, region: str | None = None) -> NovaConnection:
        """The openstacksdk connection for ``region`` (the cloud's default when None).

        Raises:
            DriverError: no cloud is configured, or its configuration is unusable.
        """
        with self._lock:
            if region in self._connections:
                return self._connections[region]
            if not self.configured:
                raise DriverError(
                    "no OpenStack cloud is configured: set HERD_NOVA_CLOUD to a clouds.yaml "
                    "entry, or the OS_* variables (OS_CLOUD, OS_AUTH_URL...)"
                )
            connect = self._connect
            if connect is None:
                import openstack  # a heavy import, only for those who use Nova

                connect = openstack.connect
            kwargs: dict[str, Any] = {
                "cloud": self.options.cloud or os.environ.get("OS_CLOUD"),
                "api_timeout": self.options.request_timeout,
            }
            if region:
                kwargs["region_name"] = region
            try:
                connection = connect(**kwargs)
            except Exception as exc:  # openstacksdk raises its own and keystoneauth's
                raise DriverError(f"cannot use the configured cloud: {nova_message(exc)}") from None
            self._connections[region] = connection
            return connection

    def call(self, what: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run one request to the cloud within the concurrency limit, retrying "later" answers.

        Only for requests that may be sent twice (reads, deletes, actions on one
        server): a create goes through :meth:`call_once`.

        Raises:
            DriverError: the cloud refused (``what`` and Nova's message), or kept
                answering 409/429/503 through every retry.
            Exception: a 404 is re-raised as openstacksdk's NotFoundException so that
                callers can treat "gone" as they need.
        """
        return self._call(what, self.options.retries, lambda: fn(*args, **kwargs))

    def call_once(self, what: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """:meth:`call` without retries (a retried create could make a second server)."""
        return self._call(what, 0, lambda: fn(*args, **kwargs))

    def _call(self, what: str, retries: int, request: Callable[[], T]) -> T:
        delay = self.options.retry_delay
        for attempt in range(retries + 1):
            with self._slots:
                try:
                    return request()
                except Exception as exc:
                    status = status_of(exc)
                    if is_not_found(exc):
                        # openstacksdk also raises NotFoundException without a status
                        # (Heat's stack that is DELETE_COMPLETE)
                        raise
                    later = status in RETRYABLE_STATUS or is_connection_error(exc)
                    if not later or attempt == retries:
                        raise DriverError(f"{what}: {nova_message(exc)}", retryable=later) from None
            self._sleep(delay)
            delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")  # the loop returns or raises

    def pause(self, seconds: float) -> None:
        """Wait between two polls (injectable, as the back-off is)."""
        self._sleep(seconds)

    def close(self) -> None:
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
        for connection in connections:
            with contextlib.suppress(Exception):  # best effort; the cloud keeps its servers
                connection.close()


def is_connection_error(exc: BaseException) -> bool:
    """A request that got no answer (refused, reset, timed out): worth sending again when
    sending it twice is harmless (never a create: see :meth:`NovaCloud.call_once`).

    keystoneauth's DiscoveryFailure counts: it is what a service that did not answer its
    version document looks like, usually for a moment (a restart, a full backlog)."""
    if status_of(exc) is not None:
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & NO_ANSWER) or isinstance(exc, ConnectionError)


def is_not_found(exc: BaseException) -> bool:
    """Whether openstacksdk said 404 (the thing is gone)."""
    return status_of(exc) == 404 or type(exc).__name__ in ("NotFoundException", "ResourceNotFound")
