"""The log context of the current action or request, kept in context variables.

The engine runner sets ``action_id`` and ``cluster_id`` while it runs an
action; the API's request-id middleware sets ``request_id`` while it serves a
request. Every log line written meanwhile carries them (see ``logs.py``).
Threads started with ``contextvars.copy_context().run`` inherit them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

action_id: ContextVar[str | None] = ContextVar("herd_action_id", default=None)
cluster_id: ContextVar[str | None] = ContextVar("herd_cluster_id", default=None)
request_id: ContextVar[str | None] = ContextVar("herd_request_id", default=None)

FIELDS = {"action_id": action_id, "cluster_id": cluster_id, "request_id": request_id}


def current() -> dict[str, str]:
    """The context fields that are set, by name."""
    return {name: value for name, var in FIELDS.items() if (value := var.get()) is not None}


@contextmanager
def bound(**fields: str | None) -> Iterator[None]:
    """Set some context fields for the duration of a block, then restore them."""
    tokens = [(FIELDS[name], FIELDS[name].set(value)) for name, value in fields.items()]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)
