"""Nova's versioned notifications on the message bus: which servers failed behind herd's back.

Nova (oslo.messaging, ``messagingv2``) publishes to the topic exchange ``nova``
with the routing keys ``versioned_notifications.<priority>``. herd binds a queue
of its own (exclusive, deleted with the connection) to that exchange, so it never
takes messages from another consumer of Nova's default queue. A thread drains it
and hands each failure of a watched server to the driver, which reports it to the
health manager (LIFECYCLE_EVENTS) as the process driver reports an exit.

:func:`failure_of` is the pure part: one message body in, ``(server id, reason)``
out when it says a server was deleted, powered off or put in ERROR.
"""

from __future__ import annotations

import importlib
import json
import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Protocol

log = logging.getLogger(__name__)

#: event types that end a server's life or its running, and the reason shown
#: (a delete also emits instance.shutdown.*: the delete's own events say it better)
FAILURE_EVENTS: dict[str, str] = {
    "instance.delete.start": "is being deleted",
    "instance.delete.end": "was deleted",
    "instance.soft_delete.end": "was soft-deleted",
    "instance.power_off.end": "was powered off",
}


def _payload_data(message: Mapping[str, object]) -> Mapping[str, object]:
    payload = message.get("payload") or {}
    data = payload.get("nova_object.data") if isinstance(payload, Mapping) else None
    return data if isinstance(data, Mapping) else {}


def decode(body: object) -> Mapping[str, object] | None:
    """The notification inside an oslo.messaging envelope (``oslo.message`` is JSON text)."""
    if isinstance(body, bytes | str):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    if not isinstance(body, Mapping):
        return None
    inner = body.get("oslo.message")
    if isinstance(inner, str):
        try:
            inner = json.loads(inner)
        except ValueError:
            return None
        return inner if isinstance(inner, Mapping) else None
    return body


class KombuMessage(Protocol):
    """What the listener uses of a kombu ``Message``."""

    @property
    def body(self) -> object: ...

    def ack(self) -> None: ...


def failure_of(body: object) -> tuple[str, str] | None:
    """``(server id, reason)`` when the notification reports a failed server, else None."""
    message = decode(body)
    if message is None:
        return None
    event = str(message.get("event_type") or "")
    data = _payload_data(message)
    server_id = data.get("uuid")
    if not server_id:
        return None
    if event in FAILURE_EVENTS:
        return str(server_id), f"server {server_id} {FAILURE_EVENTS[event]} (Nova: {event})"
    if event == "instance.update" and str(data.get("state", "")).lower() == "error":
        fault = data.get("fault")
        detail = ""
        if isinstance(fault, Mapping):
            fault_data = fault.get("nova_object.data") or {}
            detail = f": {fault_data.get('message')}" if fault_data.get("message") else ""
        return str(server_id), f"server {server_id} went to ERROR (Nova: {event}){detail}"
    return None


class NotificationListener:
    """A thread that consumes Nova's versioned notifications and reports failures."""

    def __init__(
        self,
        url: str,
        on_failure: Callable[[str, str], None],
        *,
        exchange: str = "nova",
        topic: str = "versioned_notifications",
    ) -> None:
        """Listen on ``url`` (never logged: it holds the bus password) once started."""
        # oslo.messaging's transport URLs say rabbit://, which kombu calls amqp://
        self._url = "amqp://" + url[len("rabbit://") :] if url.startswith("rabbit://") else url
        self._on_failure = on_failure
        self._exchange = exchange
        self._topic = topic
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nova-notifications", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wait_ready(self, timeout: float) -> bool:
        """Whether the queue is bound (events from now on are seen)."""
        return self._ready.wait(timeout)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        delay = 0.5
        while not self._stop.is_set():
            try:
                self._consume()
                delay = 0.5
            except Exception as exc:  # the bus went away: try again, never die
                self._ready.clear()
                log.warning("Nova notifications: %s: %s", type(exc).__name__, exc)
                self._stop.wait(delay)
                delay = min(delay * 2, 10.0)

    def _consume(self) -> None:
        # imported here, only for those who listen to Nova (untyped for mypy's purposes)
        kombu: Any = importlib.import_module("kombu")

        with kombu.Connection(self._url, connect_timeout=5) as connection:
            channel = connection.channel()
            exchange = kombu.Exchange(self._exchange, type="topic", durable=False)
            try:
                exchange.bind(channel).declare(passive=True)
            except Exception:
                # not declared yet (Nova has published nothing): declare it as oslo does
                channel = connection.channel()
                exchange.bind(channel).declare()
            queue = kombu.Queue(
                f"herd-nova-{uuid.uuid4().hex[:12]}",
                exchange=exchange,
                bindings=[
                    kombu.binding(exchange, routing_key=f"{self._topic}.{priority}")
                    for priority in ("info", "error", "warn")
                ],
                exclusive=True,
                auto_delete=True,
                durable=False,
            )
            # on_message: the raw body, which failure_of decodes (oslo's envelope is JSON)
            with kombu.Consumer(channel, queues=[queue], on_message=self._handle):
                self._ready.set()
                while not self._stop.is_set():
                    try:
                        connection.drain_events(timeout=1)
                    except TimeoutError:
                        continue

    def _handle(self, message: KombuMessage) -> None:
        try:
            found = failure_of(message.body)
            if found is not None:
                self._on_failure(*found)
        except Exception:  # one bad message must not stop the listener
            log.exception("Nova notification could not be handled")
        finally:
            message.ack()
