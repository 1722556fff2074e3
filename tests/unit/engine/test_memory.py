"""release_freed_memory hands glibc's free pages back (issue 28), and is harmless elsewhere."""

from __future__ import annotations

import platform

import pytest

from herd.engine import memory


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is a glibc function",
)
def test_trims_on_glibc() -> None:
    assert memory.release_freed_memory() is True


def test_does_nothing_without_malloc_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_TRIM", None)
    assert memory.release_freed_memory() is False
