"""Handing memory freed after a large action back to the system.

A run over 100,000 nodes allocates and frees hundreds of megabytes of small
blocks from many threads; glibc keeps what was freed in its arenas, so the
process stays at its high-water mark long after (issue 28). ``malloc_trim(0)``
returns the free pages of every arena. Elsewhere (musl, macOS) it does not
exist and this does nothing.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


_TRIM = _malloc_trim()


def release_freed_memory() -> bool:
    """Return the allocator's free pages to the system; whether the allocator could."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
