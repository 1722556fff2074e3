"""Loaded by every Python process of the tempest run (on its PYTHONPATH, see
tests/e2e/test_senlin_tempest.py): senlin-tempest-plugin's client sleeps 5 s before each look
at a cluster, node or action it waits for, which made the run 20 to 30 minutes of sleeping.
Only that client's polling interval changes (to 0.5 s); its timeouts, every request and every
assertion are the plugin's own, and the tests' own sleeps (waiting for a lock) are untouched.
"""

import sys
import time
from typing import SupportsIndex

_CLIENT = "senlin_tempest_plugin.common.clustering_client"
_POLL = 0.5
_sleep = time.sleep


def _sleep_polling_faster(seconds: float | SupportsIndex) -> None:
    if seconds == 5 and sys._getframe(1).f_globals.get("__name__") == _CLIENT:
        seconds = _POLL
    _sleep(seconds)


time.sleep = _sleep_polling_faster
