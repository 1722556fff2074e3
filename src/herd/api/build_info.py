"""What ``GET /v1/build-info`` reports: the installed package version and its git revision."""

from __future__ import annotations

import functools
import subprocess
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path

import herd


@functools.cache
def herd_version() -> str:
    try:
        return package_version("herd")
    except PackageNotFoundError:
        return "unknown"


@functools.cache
def git_revision() -> str | None:
    """The commit of the source tree herd runs from, when it runs from a git checkout."""
    source = Path(herd.__file__).resolve().parent
    try:
        result = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = result.stdout.strip()
    return text if result.returncode == 0 and text else None


def revision() -> str:
    """``<version>`` or ``<version>+g<short commit>`` (PEP 440 local version style)."""
    commit = git_revision()
    return f"{herd_version()}+g{commit[:12]}" if commit else herd_version()
