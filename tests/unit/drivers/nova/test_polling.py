"""poll_until, the wait of the Nova and Heat drivers, on a fake clock (no cloud)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from herd.drivers.nova.polling import Backoff, poll_until
from herd.errors import DriverError

ONE_SECOND = Backoff(1.0)


def _is_active(status: str) -> bool:
    return status == "ACTIVE"


def _wait(
    reads: Iterable[str],
    timeout: float = 60.0,
    backoff: Backoff = ONE_SECOND,
    settled: Callable[[str], bool] = _is_active,
) -> tuple[str, list[float]]:
    """poll_until over ``reads`` on a clock that moves only when the wait pauses: what it
    returned and the pauses it made (what it raised escapes)."""
    statuses = iter(reads)
    now = [100.0]
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds

    found = poll_until(
        lambda: next(statuses),
        settled,
        timeout,
        lambda last: DriverError(f"still {last} after {pauses}"),
        pause=pause,
        backoff=backoff,
        clock=lambda: now[0],
    )
    return found, pauses


def test_reads_until_settled_pausing_by_the_backoff() -> None:
    found, pauses = _wait(["BUILD"] * 5 + ["ACTIVE"], backoff=Backoff(0.1, factor=1.5, most=0.3))
    assert found == "ACTIVE"
    assert pauses == pytest.approx([0.1, 0.15, 0.225, 0.3, 0.3])


def test_a_fixed_backoff_keeps_its_interval() -> None:
    assert _wait(["BUILD", "BUILD", "ACTIVE"]) == ("ACTIVE", [1.0, 1.0])


def test_past_the_deadline_the_last_read_names_the_error() -> None:
    # deadline 101.5: reads at 100, 101 and 102, the last one past it
    with pytest.raises(DriverError, match=r"still REBOOT after \[1.0, 1.0\]"):
        _wait(["BUILD", "BUILD", "REBOOT", "ACTIVE"], timeout=1.5)


def test_a_zero_timeout_still_reads_once() -> None:
    assert _wait(["ACTIVE"], timeout=0.0) == ("ACTIVE", [])


def test_read_or_settled_stop_the_wait_by_raising() -> None:
    def failed(status: str) -> bool:
        if status == "ERROR":
            raise DriverError("went to ERROR")
        return False

    with pytest.raises(DriverError, match="went to ERROR"):
        _wait(["BUILD", "ERROR"], settled=failed)
    with pytest.raises(StopIteration):  # a read that raises stops it too
        _wait(["BUILD"])
