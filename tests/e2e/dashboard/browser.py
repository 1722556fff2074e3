"""Headless Chromium (Debian's ``chromium`` + ``chromium-driver``) driven by Selenium.

Never downloads a browser: the binaries must be at /usr/bin; tests skip, saying so, without them.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
)


def require_chromium() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        pytest.skip(
            f"headless browser tests need Debian's chromium and chromium-driver: {missing} absent"
        )


@contextmanager
def chromium() -> Iterator[Any]:
    require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="herd-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (*ARGS, f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_until(
    driver: Any, check: Callable[[Any], Any], timeout: float = 30.0, what: str = ""
) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    end = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < end:
        try:
            value = check(driver)
            if value:
                return value
        except (StaleElementReferenceException, WebDriverException) as exc:  # redrawn meanwhile
            last = exc
        time.sleep(0.1)
    raise AssertionError(f"not met within {timeout}s: {what} ({last})")


def console_errors(driver: Any, allowed_network: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """SEVERE console entries, minus failed requests the test provoked on purpose.

    Chromium logs every non-2xx fetch as a ``network`` entry; those the test made
    happen (a 409, a 400) are named in ``allowed_network`` by a URL fragment.
    """
    problems = []
    for entry in driver.get_log("browser"):
        if entry["level"] != "SEVERE":
            continue
        if entry.get("source") == "network" and any(f in entry["message"] for f in allowed_network):
            continue
        problems.append(entry)
    return problems


# The bottom of the page, or of the element named (in page coordinates).
BOTTOM = """
const until = arguments[0];
if (!until) return document.documentElement.scrollHeight;
const box = document.querySelector(until).getBoundingClientRect();
// the window's size includes the browser's own frame: the page sees less than that
return Math.ceil(box.bottom + window.scrollY + 16 + window.outerHeight - window.innerHeight);
"""


def save_screenshot(driver: Any, path: Path, *, until: str | None = None) -> None:
    """A full-page PNG, or down to the bottom of the ``until`` element (a tall page's PNG
    stays under ~300 KB): the window grows to that height first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.set_window_size(1400, 900)
    height = driver.execute_script(BOTTOM, until)
    slack = 40 if until is None else 0
    driver.set_window_size(1400, max(900 if until is None else 300, min(int(height) + slack, 4000)))
    time.sleep(0.3)  # let the charts redraw at the new size
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 900)
