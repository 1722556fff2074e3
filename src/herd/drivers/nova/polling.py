"""Reading one cloud resource until it settles, within a deadline (servers and stacks).

Each read goes through :meth:`NovaCloud.call` in the caller's ``read``, so a wait holds a
slot of the cloud's limit only for its requests, never between them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from herd.errors import DriverError

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """The pause between two reads: ``first``, then times ``factor``, at most ``most``."""

    first: float
    factor: float = 1.0
    most: float = math.inf

    def after(self, pause: float) -> float:
        return min(pause * self.factor, self.most)


def poll_until(
    read: Callable[[], T],
    settled: Callable[[T], bool],
    timeout: float,
    timed_out: Callable[[T], DriverError],
    *,
    pause: Callable[[float], None],
    backoff: Backoff,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """``read()`` until ``settled`` says so of what it read, and return that.

    ``read`` and ``settled`` stop the wait early by raising (the resource failed or
    vanished). ``pause`` spends the time between two reads (the cloud's, injectable).

    Raises:
        DriverError: ``timed_out`` of the last read, once ``timeout`` seconds have passed
            without it settling (one read is always made).
    """
    deadline = clock() + timeout
    interval = backoff.first
    while True:
        value = read()
        if settled(value):
            return value
        if clock() > deadline:
            raise timed_out(value)
        pause(interval)
        interval = backoff.after(interval)
