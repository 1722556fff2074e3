"""Waiting in tests: for a condition, or for an action to end, with a generous deadline.

Deadlines catch hangs; they are not timings. A loaded machine only makes these waits
longer, never wrong.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

FINAL = ("SUCCEEDED", "FAILED", "CANCELLED")


def wait_for(check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Call ``check`` until it returns something truthy; return that value."""
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"condition not met in {timeout}s")
        time.sleep(interval)


def wait_for_action(
    client: httpx.Client,
    action: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """The action (an id or a ``/v1/actions/<id>`` location) once it has ended.

    ``client`` is any httpx client of the API: a FastAPI ``TestClient`` or a client of a
    real ``herd serve``.
    """
    location = action if action.startswith("/") else f"/v1/actions/{action}"
    seen: dict[str, Any] = {}

    def ended() -> dict[str, Any] | None:
        seen.update(client.get(location, headers=dict(headers or {})).json()["action"])
        return dict(seen) if seen["status"] in FINAL else None

    try:
        found: dict[str, Any] = wait_for(ended, timeout, interval=0.03)
    except AssertionError:
        raise AssertionError(f"action {location} did not end in {timeout}s: {seen}") from None
    return found
