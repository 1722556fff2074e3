"""Nova's versioned notifications, read from the bed's RabbitMQ with kombu.

Nova publishes them (``[notifications] notification_format = versioned``, driver
``messagingv2``) to the topic exchange ``nova`` with the routing keys
``versioned_notifications.info`` and ``versioned_notifications.error``. A listener binds its
OWN exclusive queue to those keys: it then sees every notification, beside any other listener
(binding to Nova's shared ``versioned_notifications.info`` queue would compete for messages).
The exchange is declared exactly as oslo.messaging declares it (not durable, not auto-delete),
or RabbitMQ would refuse one of the two declarations.
"""

from __future__ import annotations

import contextlib
import json
import queue
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import kombu

Notification = dict[str, Any]


def amqp_url(transport_url: str) -> str:
    """oslo.messaging's ``rabbit://user:pass@host:port/`` as kombu's ``amqp://...//``."""
    rest = transport_url.split("://", 1)[1].rstrip("/")
    return f"amqp://{rest}//"


def unwrap(body: Any) -> Notification:
    """The notification inside oslo.messaging's envelope (``oslo.message`` is JSON text)."""
    if isinstance(body, (bytes, str)):
        body = json.loads(body)
    if isinstance(body, dict) and "oslo.message" in body:
        return dict(json.loads(body["oslo.message"]))
    return dict(body)


def payload(notification: Notification) -> dict[str, Any]:
    """The versioned payload's fields (``nova_object.data``)."""
    data = notification.get("payload", {})
    return dict(data.get("nova_object.data", data))


class NotificationListener:
    """``with NotificationListener(url) as listener: listener.wait_for(...)``."""

    def __init__(
        self, transport_url: str, exchange: str = "nova", topic: str = "versioned_notifications"
    ) -> None:
        self.connection = kombu.Connection(amqp_url(transport_url), connect_timeout=10)
        self.exchange = kombu.Exchange(exchange, type="topic", durable=False, auto_delete=False)
        self.topic = topic
        self.received: queue.Queue[Notification] = queue.Queue()
        self.seen: list[Notification] = []

    def __enter__(self) -> NotificationListener:
        self.connection.connect()
        channel = self.connection.channel()
        bindings = [
            kombu.binding(self.exchange, routing_key=f"{self.topic}.{priority}")
            for priority in ("info", "error")
        ]
        own = kombu.Queue(exclusive=True, auto_delete=True, bindings=bindings)
        self.consumer = kombu.Consumer(channel, queues=[own], callbacks=[self._on_message])
        self.consumer.consume()
        return self

    def _on_message(self, body: Any, message: Any) -> None:
        self.received.put(unwrap(body))
        message.ack()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.connection.release()

    def wait_for(
        self,
        event_type: str,
        match: Callable[[Notification], bool] = lambda _: True,
        timeout: float = 60.0,
    ) -> Notification:
        """The first notification of ``event_type`` that ``match`` accepts."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with contextlib.suppress(TimeoutError):
                self.connection.drain_events(timeout=0.5)
            while not self.received.empty():
                notification = self.received.get()
                self.seen.append(notification)
                if notification.get("event_type") == event_type and match(notification):
                    return notification
        kinds = sorted({str(n.get("event_type")) for n in self.seen})
        raise AssertionError(f"no {event_type} within {timeout:.0f} s; saw {kinds}")
